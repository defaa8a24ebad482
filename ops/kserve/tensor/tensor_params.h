/* ops/kserve/tensor/tensor_params.h — the kserve operation's request parameters
 * (ModelInferRequest.parameters, a map of name to InferParameter), parsed
 * once at open from the option text
 *     key=value, key2=value2
 * A value is an int64_param when it is a whole number in int64's range, a
 * bool_param for true / false, and otherwise a string_param; single quotes
 * make any text a string ('42', 'a, b'; '' is a quote inside quotes). Keys
 * are letters, digits, '_', '-' and '.', each given once. Spaces around keys
 * and values are dropped. The parsed entries are shared by every request:
 * they are attached, not copied.
 */
#ifndef FNW_TENSOR_PARAMS_H
#define FNW_TENSOR_PARAMS_H

#include <stddef.h>

#include "codecs/error.h"
#include "inference/grpc_predict_v2.pb-c.h"

typedef struct fnw_tensor_params fnw_tensor_params;

/* NULL with a message naming option and the key on failure. An empty text
 * gives no parameters. */
fnw_tensor_params *fnw_tensor_params_new(const char *text, const char *option, fnw_error *err);
void fnw_tensor_params_free(fnw_tensor_params *p);
size_t fnw_tensor_params_count(const fnw_tensor_params *p);
/* Points req->parameters at the parsed entries (borrowed from p). */
void fnw_tensor_params_attach(const fnw_tensor_params *p, Inference__ModelInferRequest *req);

#endif
