/* runtime/secret_mask.c — masking secrets in outgoing text (secret_mask.h). */
#include "runtime/secret_mask.h"

#include <string.h>

void fnw_secret_mask(char *b, size_t n, const char *const *secrets, size_t n_secrets)
{
    for (size_t k = 0; k < n_secrets; k++) {
        size_t sl = secrets[k] ? strlen(secrets[k]) : 0;
        if (sl == 0)
            continue;
        for (size_t i = 0; i + sl <= n; i++)
            if (memcmp(b + i, secrets[k], sl) == 0)
                memset(b + i, '*', sl);
        for (size_t part = sl - 1 < n ? sl - 1 : n; part > 0; part--) {
            if (memcmp(b + n - part, secrets[k], part) == 0) {
                memset(b + n - part, '*', part);
                break;
            }
        }
    }
}

void fnw_secret_mask_str(char *s, const char *const *secrets, size_t n_secrets)
{
    fnw_secret_mask(s, strlen(s), secrets, n_secrets);
}
