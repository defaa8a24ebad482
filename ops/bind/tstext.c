/* ops/bind/tstext.c — ISO-8601 text of TIMESTAMP / TIMESTAMP_LTZ values
 * (see tstext.h). Civil dates from day counts by the proleptic Gregorian
 * calendar (Howard Hinnant's days_from_civil / civil_from_days). */
#include "ops/bind/tstext.h"

#include <stdio.h>

#define MS_PER_DAY INT64_C(86400000)

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* Fraction digits of t's values: its precision, 3 when unset. */
static int digits_of(const fnw_type *t)
{
    return t->precision > 0 ? t->precision : 3;
}

/* n digits at p as a number; -1 if any is not a digit. */
static int num(const char *p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

int fnw_tstext_parse(const fnw_type *t, const char *p, size_t n, int64_t *ms, uint32_t *nanos)
{
    /* YYYY-MM-DD?HH:MM:SS = 19 characters */
    if (n < 19 || p[4] != '-' || p[7] != '-' || (p[10] != 'T' && p[10] != ' ') || p[13] != ':' || p[16] != ':')
        return -1;
    int y = num(p, 4), mo = num(p + 5, 2), d = num(p + 8, 2);
    int h = num(p + 11, 2), mi = num(p + 14, 2), s = num(p + 17, 2);
    static const int dim[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > dim[mo - 1] || h < 0 || h > 23 || mi < 0 || mi > 59 ||
        s < 0 || s > 59)
        return -1;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return -1;
    size_t i = 19;
    int64_t frac = 0; /* nanos of the second */
    if (i < n && p[i] == '.') {
        int nd = 0;
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++, nd++)
            if (nd < 9)
                frac = frac * 10 + (p[i] - '0');
        if (nd == 0 || nd > 9)
            return -1;
        for (; nd < 9; nd++)
            frac *= 10;
    }
    if (i < n && p[i] == 'Z')
        i++;
    if (i != n)
        return -1;
    /* digits beyond the precision are dropped */
    int64_t unit = 1;
    for (int k = digits_of(t); k < 9; k++)
        unit *= 10;
    frac -= frac % unit;
    *ms = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000 + frac / 1000000;
    *nanos = (uint32_t)(frac % 1000000);
    return 0;
}

size_t fnw_tstext_format(const fnw_type *t, int64_t ms, uint32_t nanos, char *out)
{
    int64_t days = ms / MS_PER_DAY, rem = ms % MS_PER_DAY;
    if (rem < 0) {
        rem += MS_PER_DAY;
        days--;
    }
    int64_t y;
    int mo, d;
    civil_from_days(days, &y, &mo, &d);
    int64_t sec = rem / 1000;
    int64_t frac = (rem % 1000) * 1000000 + (nanos <= 999999 ? nanos : 0); /* nanos of the second */
    int nd = digits_of(t);
    for (int k = nd; k < 9; k++)
        frac /= 10;
    int n = snprintf(out, FNW_TSTEXT_MAX, "%04lld-%02d-%02dT%02d:%02d:%02d.%0*lld%s", (long long)y, mo, d,
                     (int)(sec / 3600), (int)(sec / 60 % 60), (int)(sec % 60), nd, (long long)frac,
                     t->kind == FNW_LOCAL_ZONED_TIMESTAMP ? "Z" : "");
    return n < 0 ? 0 : (size_t)n;
}
