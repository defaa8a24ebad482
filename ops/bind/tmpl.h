/* ops/bind/tmpl.h — request templates: text with `{field}`
 * placeholders that an operation fills from each input row (Redis keys and
 * commands, URLs, headers, JSON bodies).
 *
 * Syntax:
 *   {name}        the input ROW field `name`
 *   {user.id}     a dotted path into nested ROWs: field `id` of ROW field
 *                 `user` (a field whose own name holds a '.' cannot be named)
 *   {{  }}        a literal '{' / '}'
 * The name is everything between the braces, spaces included (no trimming);
 * a '{' inside a placeholder and a lone '}' outside one are errors, so a
 * forgotten doubling is caught at open instead of sent.
 * In a JSON body every literal brace is doubled: {{"id": {id}}} renders
 * {"id": 42}.
 *
 * Compilation (fnw_tmpl_new, once at open) resolves every placeholder to a
 * path of field indexes and fails, naming the option and the placeholder,
 * on: an empty or unterminated placeholder, a stray brace (above), a name
 * longer than FNW_TMPL_MAX_NAME bytes, an empty path component ({a..b}),
 * a field the input type does not have, a path through a field that is
 * not a ROW, a field whose type cannot be written in the template's
 * escaping mode (only JSON takes ROW, MAP<STRING,_> and arrays; see
 * vtext.h), a template longer than FNW_TMPL_MAX_TEXT, and, in HEADER
 * mode, CR or LF in the literal text.
 *
 * Rendering (fnw_tmpl_render, per element) appends to the caller's fnw_buf:
 * literal text as written (in URL modes it is the caller's URL, so it is
 * not encoded), each placeholder's value escaped for the mode
 * (vtext.h). It allocates nothing itself (the buffer keeps its memory
 * between elements). Nulls: a null field, or a field under a null ROW,
 * renders as nothing in RAW, URL and HEADER modes and as `null` in JSON
 * mode. A value the mode refuses (CR, LF or NUL in a header value, invalid
 * UTF-8 in JSON) fails with a message naming the option and the field, and the
 * buffer is left as it was.
 *
 * Redis commands (fnw_tmpl_argv_new) split the template text at compile
 * time on spaces, tabs and line breaks outside placeholders; each
 * piece is its own RAW template, so a field value holding spaces stays one
 * argument, and the empty value of a null field is still an argument. There
 * is no quoting: a literal argument cannot hold whitespace.
 */
#ifndef FNW_TMPL_H
#define FNW_TMPL_H

#include <stddef.h>

#include "codecs/buf.h"
#include "codecs/error.h"
#include "codecs/type.h"
#include "codecs/value.h"
#include "ops/bind/vtext.h"

#define FNW_TMPL_MAX_TEXT (64u * 1024) /* bytes of template text */
#define FNW_TMPL_MAX_NAME 256u         /* bytes between one placeholder's braces */
#define FNW_TMPL_MAX_ARGS 1024u        /* arguments of a Redis command template */

typedef struct fnw_tmpl fnw_tmpl;

/* Compiles text against the input ROW type in (borrowed; it must outlive the
 * template). option names the template in messages ("option 'url': ...").
 * NULL with a message on failure. */
fnw_tmpl *fnw_tmpl_new(const char *text, const fnw_type *in, fnw_escape esc, const char *option,
                       fnw_error *err);
void fnw_tmpl_free(fnw_tmpl *t);

/* Number of placeholders (0 for constant text). */
size_t fnw_tmpl_fields(const fnw_tmpl *t);

/* Appends the rendering for row (a value of the input type) to out. */
int fnw_tmpl_render(const fnw_tmpl *t, const fnw_value *row, fnw_buf *out, fnw_error *err);

/* ---- Redis command templates ---------------------------------------------- */
typedef struct fnw_tmpl_argv fnw_tmpl_argv;

/* Splits and compiles a command ("HSET user:{id} name {name}"); fails on an
 * empty command, more than FNW_TMPL_MAX_ARGS arguments, or any argument that
 * fnw_tmpl_new refuses. */
fnw_tmpl_argv *fnw_tmpl_argv_new(const char *text, const fnw_type *in, const char *option, fnw_error *err);
void fnw_tmpl_argv_free(fnw_tmpl_argv *a);
size_t fnw_tmpl_argv_count(const fnw_tmpl_argv *a);

/* Appends every argument to out, one after the other, and sets lens[i] to
 * the length of argument i (lens has fnw_tmpl_argv_count entries). Argument
 * i starts at the sum of the lengths before it, counted from out->len as it
 * was on entry; take pointers only after the call (out may move). */
int fnw_tmpl_argv_render(const fnw_tmpl_argv *a, const fnw_value *row, fnw_buf *out, size_t *lens,
                         fnw_error *err);

#endif
