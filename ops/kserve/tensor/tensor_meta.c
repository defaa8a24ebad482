/* ops/kserve/tensor/tensor_meta.c — checking the tensor mapping against a model's
 * ModelMetadata before any row is sent, so a wrong name, datatype or shape
 * fails the bundle at open with a message naming the model and the tensor
 * rather than failing every batch at the server. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/kserve/tensor/tensor_internal.h"

static const Inference__ModelMetadataResponse__TensorMetadata *find(
    Inference__ModelMetadataResponse__TensorMetadata *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] && list[i]->name && strcmp(list[i]->name, name) == 0)
            return list[i];
    return NULL;
}

/* "a, b, c" (cut short when long) for a message. */
static void list_names(Inference__ModelMetadataResponse__TensorMetadata *const *list, size_t n, char *buf,
                       size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at + 1 < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s'%s'", i ? ", " : "",
                               list[i] && list[i]->name ? list[i]->name : "");
    if (n == 0)
        snprintf(buf, size, "none");
}

static int check_dims(const fnw_tensor_map *m, const Inference__ModelMetadataResponse__TensorMetadata *t,
                      const char *what, const char *model, int64_t max_batch, fnw_error *err)
{
    char have[160], want[160];
    fnw_tensor_spec_format_shape(t->shape, t->n_shape, have, sizeof have);
    fnw_tensor_spec_format_shape(m->dims, m->rank, want, sizeof want);
    if (t->n_shape != 1 + (size_t)m->rank)
        return fnw_error_set(err,
                             "model '%s': %s tensor '%s' has shape %s, but the option gives one row's shape %s: "
                             "the model's shape must be the batch dimension and then %u more",
                             model, what, m->tensor, have, want, m->rank);
    if (t->shape[0] != -1 && !(t->shape[0] == 1 && max_batch == 1))
        return fnw_error_set(err,
                             "model '%s': %s tensor '%s' has shape %s: dimension 0 is fixed at %" PRId64
                             "; batches of up to %" PRId64
                             " rows need a model with a variable batch dimension (-1)",
                             model, what, m->tensor, have, t->shape[0], max_batch);
    for (uint32_t d = 0; d < m->rank; d++)
        if (t->shape[d + 1] != -1 && m->dims[d] != -1 && t->shape[d + 1] != m->dims[d])
            return fnw_error_set(err,
                                 "model '%s': %s tensor '%s' has shape %s; the option gives one row's shape %s",
                                 model, what, m->tensor, have, want);
    return 0;
}

static int check_list(const fnw_tensor_map *maps, size_t count,
                      Inference__ModelMetadataResponse__TensorMetadata *const *list, size_t n,
                      const char *what, const char *model, int64_t max_batch, fnw_error *err)
{
    for (size_t k = 0; k < count; k++) {
        const fnw_tensor_map *m = &maps[k];
        const Inference__ModelMetadataResponse__TensorMetadata *t = find(list, n, m->tensor);
        if (!t) {
            char names[512];
            list_names(list, n, names, sizeof names);
            return fnw_error_set(err, "model '%s' has no %s tensor '%s' (its %ss: %s)", model, what,
                                 m->tensor, what, names);
        }
        const char *dt = fnw_dtype_name(m->dtype);
        if (!t->datatype || strcmp(t->datatype, dt) != 0)
            return fnw_error_set(err, "model '%s': %s tensor '%s' is %.32s; the option says %s", model, what,
                                 m->tensor, t->datatype ? t->datatype : "(none)", dt);
        if (check_dims(m, t, what, model, max_batch, err) != 0)
            return -1;
    }
    return 0;
}

int fnw_tensor_meta_check(const fnw_tensor_plan *p, const Inference__ModelMetadataResponse *md,
                          int64_t max_batch, fnw_error *err)
{
    const char *model = md->name && md->name[0] ? md->name : "(unnamed)";
    if (check_list(p->in, p->nin, md->inputs, md->n_inputs, "input", model, max_batch, err) != 0)
        return -1;
    return check_list(p->out, p->nout, md->outputs, md->n_outputs, "output", model, max_batch, err);
}
