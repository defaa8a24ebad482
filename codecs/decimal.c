/* codecs/decimal.c — decimal numbers as text (see decimal.h). */
#include "codecs/decimal.h"

#include <stdio.h>
#include <string.h>

int fnw_decimal_scan(const char **p, unsigned long long max, unsigned long long *out)
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
    *p = s;
    *out = v;
    return 0;
}

int fnw_decimal_read(const char **p, unsigned long long max, unsigned long long *out)
{
    const char *s = *p;
    unsigned long long v;
    if (fnw_decimal_scan(&s, max, &v) != 0)
        return -1;
    if (*s == ' ')
        s++;
    else if (*s)
        return -1;
    *p = s;
    *out = v;
    return 0;
}

/* ---- DECIMAL(p, s) text ----------------------------------------------------- */

/* A number in Java's BigDecimal grammar, split: its digits are the
 * integer part then the fraction (the '.' skipped), its value
 * digits * 10^(exp - nfrac). */
typedef struct dec {
    int neg;
    const char *ip, *fp; /* integer and fraction digits */
    size_t nint, nfrac;
    int64_t exp;
} dec;

/* Java takes exponents that fit an int; beyond, every DECIMAL overflows or
 * rounds to zero anyway, so refusing them loses nothing. */
#define EXP_MAX 999999999LL

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int parse(const char *s, size_t n, dec *d)
{
    size_t i = 0;
    *d = (dec){ 0 };
    if (i < n && (s[i] == '+' || s[i] == '-'))
        d->neg = s[i++] == '-';
    d->ip = s + i;
    while (i < n && is_digit(s[i]))
        i++, d->nint++;
    d->fp = s + i;
    if (i < n && s[i] == '.') {
        i++;
        d->fp = s + i;
        while (i < n && is_digit(s[i]))
            i++, d->nfrac++;
    }
    if (d->nint + d->nfrac == 0)
        return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int eneg = 0;
        int64_t e = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        if (i == n || !is_digit(s[i]))
            return -1;
        while (i < n && is_digit(s[i])) {
            e = e * 10 + (s[i++] - '0');
            if (e > EXP_MAX)
                return -1;
        }
        d->exp = eneg ? -e : e;
    }
    return i == n ? 0 : -1;
}

int fnw_decimal_valid(const char *s, size_t n)
{
    dec d;
    return s && parse(s, n, &d) == 0;
}

/* Digit i of the number's digits (integer part then fraction), as 0..9. */
static int digit_at(const dec *d, size_t i)
{
    return i < d->nint ? d->ip[i] - '0' : d->fp[i - d->nint] - '0';
}

/* An excerpt of the input for messages. */
static int fail_value(fnw_error *err, const char *s, size_t n, const char *why, int32_t p, int32_t sc)
{
    int shown = n > 40 ? 40 : (int)n;
    return fnw_error_set(err, "value %.*s%s %s DECIMAL(%d, %d)", shown, s, n > 40 ? "..." : "", why, (int)p,
                         (int)sc);
}

/* Java's BigDecimal.toString of the coefficient c[0..nc) (no leading
 * zeros, or "0") at scale sc. */
static size_t format_text(int neg, const char *c, size_t nc, int32_t sc, char *out)
{
    size_t o = 0;
    int64_t adjusted = (int64_t)nc - 1 - sc;
    if (neg && !(nc == 1 && c[0] == '0'))
        out[o++] = '-';
    if (adjusted >= -6) {
        if (sc == 0) {
            memcpy(out + o, c, nc);
            o += nc;
        } else if (nc > (size_t)sc) {
            memcpy(out + o, c, nc - (size_t)sc);
            o += nc - (size_t)sc;
            out[o++] = '.';
            memcpy(out + o, c + nc - (size_t)sc, (size_t)sc);
            o += (size_t)sc;
        } else {
            out[o++] = '0';
            out[o++] = '.';
            for (size_t z = nc; z < (size_t)sc; z++)
                out[o++] = '0';
            memcpy(out + o, c, nc);
            o += nc;
        }
    } else {
        out[o++] = c[0];
        if (nc > 1) {
            out[o++] = '.';
            memcpy(out + o, c + 1, nc - 1);
            o += nc - 1;
        }
        o += (size_t)sprintf(out + o, "E%lld", (long long)adjusted);
    }
    out[o] = '\0';
    return o;
}

int fnw_decimal_quantize(const char *s, size_t n, int32_t precision, int32_t scale, fnw_decimal_rounding mode,
                         char *out, size_t cap, size_t *len, fnw_error *err)
{
    dec d;
    if (precision < 1 || precision > 38 || scale < 0 || scale > precision)
        return fnw_error_set(err, "DECIMAL(%d, %d) is not a valid decimal type", (int)precision, (int)scale);
    if (cap < FNW_DECIMAL_TEXT_MAX)
        return fnw_error_set(err, "decimal text buffer of %zu bytes is too small", cap);
    if (!s || parse(s, n, &d) < 0)
        return fail_value(err, s ? s : "", s ? n : 0, "is not a decimal number, so it cannot be a", precision,
                          scale);
    size_t total = d.nint + d.nfrac, fz = 0;
    while (fz < total && digit_at(&d, fz) == 0)
        fz++;
    char c[40]; /* the coefficient: at most precision + 1 digits before the check */
    size_t nc = 0;
    if (fz < total) {
        int64_t sig = (int64_t)(total - fz);
        int64_t shift = d.exp - (int64_t)d.nfrac + scale; /* digits to append (> 0) or drop (< 0) */
        int64_t keep = sig + (shift < 0 ? shift : 0);
        if (keep + (shift > 0 ? shift : 0) > precision)
            return fail_value(err, s, n, "does not fit", precision, scale);
        for (int64_t i = 0; i < keep; i++)
            c[nc++] = (char)('0' + digit_at(&d, fz + (size_t)i));
        if (shift > 0) {
            for (int64_t i = 0; i < shift; i++)
                c[nc++] = '0';
        } else if (shift < 0) {
            /* the first dropped digit, and whether any after it is not zero */
            int r = keep >= 0 ? digit_at(&d, fz + (size_t)keep) : 0;
            int sticky = 0;
            for (size_t i = fz + (size_t)(keep >= 0 ? keep + 1 : 0); i < total && !sticky; i++)
                sticky = digit_at(&d, i) != 0;
            if (keep < 0)
                sticky = 1;
            int last_odd = nc > 0 && ((c[nc - 1] - '0') & 1);
            int up = mode == FNW_DECIMAL_HALF_UP ? r >= 5 : (r > 5 || (r == 5 && (sticky || last_odd)));
            if (up) {
                size_t i = nc;
                while (i > 0 && c[i - 1] == '9')
                    c[--i] = '0';
                if (i > 0) {
                    c[i - 1]++;
                } else {
                    memmove(c + 1, c, nc);
                    c[0] = '1';
                    nc++;
                }
            }
        }
        if ((int64_t)nc > precision)
            return fail_value(err, s, n, "does not fit", precision, scale);
    }
    if (nc == 0)
        c[nc++] = '0';
    *len = format_text(d.neg, c, nc, scale, out);
    return 0;
}
