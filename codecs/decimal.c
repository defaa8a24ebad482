/* codecs/decimal.c — an unsigned decimal out of a text line (see decimal.h). */
#include "codecs/decimal.h"

int fnw_decimal_read(const char **p, unsigned long long max, unsigned long long *out)
{
    const char *s = *p;
    unsigned long long v = 0;
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
        return -1;
    while (*s >= '0' && *s <= '9') {
        unsigned d = (unsigned)(*s - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
        s++;
    }
    if (*s == ' ')
        s++;
    else if (*s)
        return -1;
    *p = s;
    *out = v;
    return 0;
}
