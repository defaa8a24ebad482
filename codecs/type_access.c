/* codecs/type_access.c — the read accessors through which operations see a
 * type tree (fnworker.h keeps fnw_type opaque). Not on the data path:
 * operations read types when they open. */
#include <string.h>

#include "codecs/type.h"

fnw_kind fnw_type_kind(const fnw_type *t)
{
    return t->kind;
}

size_t fnw_type_child_count(const fnw_type *t)
{
    return t->nchildren;
}

int32_t fnw_type_precision(const fnw_type *t)
{
    return t->precision;
}

int32_t fnw_type_scale(const fnw_type *t)
{
    return t->scale;
}

const fnw_type *fnw_type_child(const fnw_type *t, size_t i)
{
    return i < t->nchildren ? t->children[i] : NULL;
}

const char *fnw_type_field_name(const fnw_type *t, size_t i)
{
    if (t->kind != FNW_ROW || i >= t->nchildren)
        return NULL;
    return t->names[i];
}

int64_t fnw_type_find_field(const fnw_type *t, const char *name, size_t len)
{
    if (t->kind != FNW_ROW)
        return -1;
    for (uint32_t i = 0; i < t->nchildren; i++)
        if (strlen(t->names[i]) == len && memcmp(t->names[i], name, len) == 0)
            return i;
    return -1;
}
