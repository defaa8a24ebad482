/* ops/secrets/secret_mask.c — masking secrets in outgoing text (secret_mask.h).
 * A service that quotes a secret may quote it escaped: in JSON (`\/`,
 * `\u0041`, ...), percent-encoded (`%2F`, `+` for a space), or inside the
 * base64 of a larger value (`user:pass` in a Basic credential). The matcher
 * decodes the text one unit at a time while comparing it with the secret, so
 * every spelling of the secret is found; base64 is matched as the secret's
 * own base64 at each of the three byte alignments. */
#include "ops/secrets/secret_mask.h"

#include "codecs/utf8.h"

#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int hex4(const char *b, size_t n, size_t i, unsigned *v)
{
    if (i + 4 > n)
        return -1;
    *v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(b[i + k]);
        if (h < 0)
            return -1;
        *v = *v << 4 | (unsigned)h;
    }
    return 0;
}

/* One escaped unit at b[i] (a JSON escape or a percent escape): its decoded
 * bytes into out, its length in the text; 0 when b[i] starts none. */
static size_t escaped_unit(const char *b, size_t n, size_t i, char *out, size_t *olen)
{
    if (b[i] == '%' && i + 2 < n && hexval(b[i + 1]) >= 0 && hexval(b[i + 2]) >= 0) {
        out[0] = (char)(hexval(b[i + 1]) << 4 | hexval(b[i + 2]));
        *olen = 1;
        return 3;
    }
    if (b[i] != '\\' || i + 1 >= n)
        return 0;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *k = b[i + 1] ? strchr(from, b[i + 1]) : NULL;
    if (k) {
        out[0] = to[k - from];
        *olen = 1;
        return 2;
    }
    unsigned cp, lo;
    if (b[i + 1] != 'u' || hex4(b, n, i + 2, &cp) != 0)
        return 0;
    size_t len = 6;
    if (cp >= 0xd800 && cp < 0xdc00 && i + 12 <= n && b[i + 6] == '\\' && b[i + 7] == 'u' &&
        hex4(b, n, i + 8, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        len = 12;
    }
    *olen = fnw_utf8_encode(cp, out);
    return len;
}

/* How far the text from b[i] spells the secret s (escapes decoded): the end
 * of the match in the text when all of s matched, or n when the text ended
 * after a non-empty beginning of s; 0 when it does not match. */
static size_t spelled_at(const char *b, size_t n, size_t i, const char *s, size_t sl)
{
    size_t k = 0;
    while (k < sl && i < n) {
        char dec[4];
        size_t dl = 0, ul = escaped_unit(b, n, i, dec, &dl);
        if (ul && k + dl <= sl && memcmp(dec, s + k, dl) == 0) {
            i += ul;
            k += dl;
        } else if (b[i] == s[k] || (b[i] == '+' && s[k] == ' ')) {
            i++;
            k++;
        } else {
            return 0;
        }
    }
    return k == 0 ? 0 : i;
}

static void mask_spelled(char *b, size_t n, const char *s, size_t sl)
{
    for (size_t i = 0; i < n; i++) {
        size_t end = spelled_at(b, n, i, s, sl);
        if (end > i) {
            memset(b + i, '*', end - i);
            i = end - 1;
        }
    }
}

static void mask_exact(char *b, size_t n, const char *p, size_t pl)
{
    for (size_t i = 0; pl && i + pl <= n; i++)
        if (memcmp(b + i, p, pl) == 0)
            memset(b + i, '*', pl);
}

/* The secret inside any base64 text: for each alignment (the secret starting
 * 0, 1 or 2 bytes into a 3-byte group), the characters that depend on its
 * bytes only, in the standard and the URL alphabet. Short secrets (fewer
 * than 8 such characters) are skipped: too many false matches. */
static void mask_base64(char *b, size_t n, const char *s, size_t sl)
{
    static const char std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char enc[FNW_SECRET_MASK_B64_MAX];
    for (size_t skip = 0; skip < 3; skip++) {
        if (sl < skip + 6)
            return;
        size_t groups = (sl - skip) / 3, m = 0;
        if (groups * 4 > sizeof enc)
            groups = sizeof enc / 4;
        const unsigned char *p = (const unsigned char *)s + skip;
        for (size_t g = 0; g < groups; g++, p += 3) {
            unsigned v = (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
            for (int k = 3; k >= 0; k--)
                enc[m++] = std[(v >> (6 * k)) & 63];
        }
        mask_exact(b, n, enc, m);
        for (size_t k = 0; k < m; k++)
            enc[k] = enc[k] == '+' ? '-' : enc[k] == '/' ? '_' : enc[k];
        mask_exact(b, n, enc, m);
    }
}

void fnw_secret_mask(char *b, size_t n, const char *const *secrets, size_t n_secrets)
{
    for (size_t k = 0; k < n_secrets; k++) {
        size_t sl = secrets[k] ? strlen(secrets[k]) : 0;
        if (sl == 0)
            continue;
        mask_spelled(b, n, secrets[k], sl);
        mask_base64(b, n, secrets[k], sl);
    }
}

const char *fnw_secret_mask_credential(const char *value)
{
    size_t w = strcspn(value, " \t");
    if (w == 0 || !value[w])
        return NULL;
    const char *c = value + w + strspn(value + w, " \t");
    return strlen(c) >= 4 ? c : NULL; /* shorter: masking it would blank ordinary text */
}

void fnw_secret_mask_str(char *s, const char *const *secrets, size_t n_secrets)
{
    fnw_secret_mask(s, strlen(s), secrets, n_secrets);
}
