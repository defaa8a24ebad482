/* fnworker.h — the public, versioned surface of fnworker: everything an
 * operation author uses, and nothing else.
 *
 * fnworker runs operations for Apache Flink jobs. An operation is a table of
 * functions (fnw_operation) that you register by name in a registry
 * (fnw_registry_add); a job names it in its OperationSpec. The operations
 * fnworker ships with (identity, echo, project) are written against this
 * header alone, exactly as an operation built outside the tree is. Nothing
 * outside this header is part of the interface: the other headers of the
 * source tree change without notice.
 *
 * Versioning: FNW_ABI_VERSION changes whenever a declaration here changes in
 * a way that breaks code compiled against an older copy (a struct's layout, a
 * function's signature or meaning). Additions that break nothing keep it.
 *
 * Lifecycle of an operation:
 *   open     fnworker opens one instance per transform of a process-bundle
 *            descriptor: validate the options and types (fnw_op_env), keep
 *            per-instance state. The instance is reused across bundles.
 *   invoke   work arrives as calls. A call carries one input (per-element
 *            mode) or up to batch_size inputs (batch mode, OperationSpec mode
 *            BATCH). Start the work and return at once; later, from any libev
 *            callback on the same loop, emit outputs with fnw_call_emit*()
 *            and end the attempt with exactly one of fnw_call_complete() or
 *            fnw_call_fail(). After that the call belongs to fnworker again:
 *            do not touch it; it may be retried (invoke again, with
 *            fnw_call_attempt() one higher) or freed.
 *   cancel   fnworker gives up on a call the operation still has (the bundle
 *            failed, the worker is stopping, or the call timed out: after
 *            the spec's timeout action has produced its result): stop the
 *            work, release what refers to the call, never touch the call
 *            again. A reply that still arrives for it is the operation's
 *            to drop.
 *   close    the worker stops or the instance is discarded after a failure.
 *
 * Threads: everything runs on one thread, the libev loop (env->loop), so
 * timers and I/O watchers an operation starts there need no locks. Never
 * block the loop. An operation that wraps a synchronous library sets
 * invoke_blocking instead of invoke: fnworker runs it on a bounded pool of
 * threads (see "blocking operations" below). The loop's userdata
 * (ev_userdata) is fnworker's: do not set it.
 *
 * Outputs: in per-element mode every emit for input 0 is one output record
 * (zero emits = an empty result). In batch mode emit(i, ...) gives input i
 * its result; inputs that get no emit produce no output (counted as missing).
 *
 * Errors: a function that can fail returns 0 on success and -1 on failure,
 * and writes a message a user can act on into the caller's fnw_error. Name
 * what was wrong (the field, the option, the value), not where in the code.
 *
 * Memory: a record never owns its bytes (they are valid for the call that
 * hands them over); values decoded for a call, and the call arena, live
 * until the attempt ends. Copy what you keep longer.
 */
#ifndef FNWORKER_H
#define FNWORKER_H

#include <stddef.h>
#include <stdint.h>

#define FNW_ABI_VERSION 1

struct ev_loop;

/* ---- errors ---------------------------------------------------------------- */
#define FNW_ERROR_MAX 1024

typedef struct fnw_error {
    char msg[FNW_ERROR_MAX];
} fnw_error;

/* Sets err->msg from a printf format; returns -1 so callers can
 * `return fnw_error_set(err, ...)`. err may be NULL. */
int fnw_error_set(fnw_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- arenas: scratch memory released all at once ---------------------------- */
typedef struct fnw_arena fnw_arena;

/* 16-byte aligned; NULL when the arena's byte limit would be exceeded. */
void *fnw_arena_alloc(fnw_arena *a, size_t n);
void *fnw_arena_memdup(fnw_arena *a, const void *p, size_t n);
char *fnw_arena_strdup(fnw_arena *a, const char *s);

/* ---- types: a Flink type, read-only ----------------------------------------- */
/* The TypeInfo.TypeName numbers of Flink's flink-fn-execution.proto. The
 * Table (SQL) types of its Schema message map onto these kinds too (see
 * fnw_type_precision): TIMESTAMP(p) is SQL_TIMESTAMP, TIMESTAMP_LTZ(p) is
 * LOCAL_ZONED_TIMESTAMP, DECIMAL(p, s) is BIG_DEC, VARCHAR is STRING, ... */
typedef enum fnw_kind {
    FNW_ROW = 0,
    FNW_STRING = 1,
    FNW_BYTE = 2,
    FNW_BOOLEAN = 3,
    FNW_SHORT = 4,
    FNW_INT = 5,
    FNW_LONG = 6,
    FNW_FLOAT = 7,
    FNW_DOUBLE = 8,
    FNW_CHAR = 9,
    FNW_BIG_INT = 10,
    FNW_BIG_DEC = 11,
    FNW_SQL_DATE = 12,
    FNW_SQL_TIME = 13,
    FNW_SQL_TIMESTAMP = 14,
    FNW_BASIC_ARRAY = 15,
    FNW_PRIMITIVE_ARRAY = 16,
    FNW_TUPLE = 17,
    FNW_LIST = 18,
    FNW_MAP = 19,
    FNW_PICKLED_BYTES = 20,
    FNW_OBJECT_ARRAY = 21,
    FNW_INSTANT = 22,
    FNW_AVRO = 23,
    FNW_LOCAL_DATE = 24,
    FNW_LOCAL_TIME = 25,
    FNW_LOCAL_DATETIME = 26,
    FNW_LOCAL_ZONED_TIMESTAMP = 27, /* Flink's TIMESTAMP_LTZ: an instant, as epoch ms + nanos */
    FNW_KIND_COUNT
} fnw_kind;

/* A type tree, owned by fnworker and immutable while an operation sees it. */
typedef struct fnw_type fnw_type;

/* "ROW", "STRING", ...; "UNKNOWN" for a number that is not a kind. */
const char *fnw_kind_name(fnw_kind k);
fnw_kind fnw_type_kind(const fnw_type *t);
/* ROW, TUPLE: the fields; BASIC/PRIMITIVE/OBJECT_ARRAY, LIST: the element;
 * MAP: key, value; every other kind: none. */
size_t fnw_type_child_count(const fnw_type *t);
/* Child i, or NULL when i is out of range. */
const fnw_type *fnw_type_child(const fnw_type *t, size_t i);
/* ROW: the name of field i (possibly ""); NULL for other kinds or i out of range. */
const char *fnw_type_field_name(const fnw_type *t, size_t i);
/* ROW: the index of the first field named by the len bytes at name (which
 * need not be NUL-terminated); -1 when there is none or t is not a ROW. */
int64_t fnw_type_find_field(const fnw_type *t, const char *name, size_t len);
/* 1 if a and b are the same type: kinds, children, ROW field names, Avro
 * schemas (Flink's type equality includes the names), precision and scale. */
int fnw_type_equal(const fnw_type *a, const fnw_type *b);
/* Writes a readable form like "ROW<name STRING, n INT>" ("DECIMAL(10, 2)",
 * "TIMESTAMP(6)", "TIMESTAMP_LTZ(3)" for the Table parameters) into buf (truncated
 * to n, NUL-terminated when n > 0); returns the length written. */
size_t fnw_type_format(const fnw_type *t, char *buf, size_t n);
/* The Table (SQL) parameters of a type (added in ABI 1 without breaking it):
 *   SQL_TIMESTAMP, LOCAL_ZONED_TIMESTAMP  precision = fractional second
 *       digits 0..9 (TIMESTAMP(p), TIMESTAMP_LTZ(p)); 1..3 take 8 bytes,
 *       4..9 take 12 (the nanos within the millisecond follow)
 *   BIG_DEC  precision = digits 1..38, scale = digits after the point
 *       0..precision (DECIMAL(p, s)): values are encoded rounded HALF_UP to
 *       the scale, and one that needs more than precision digits fails
 * 0 for both means unset: the DataStream meaning of the kind (a DataStream
 * SQL_TIMESTAMP is 8 bytes of epoch ms; a DataStream BIG_DEC any decimal
 * text). Every other kind: 0. */
int32_t fnw_type_precision(const fnw_type *t);
int32_t fnw_type_scale(const fnw_type *t);

/* ---- values: a decoded Flink value ------------------------------------------
 * A value mirrors its type: v->kind == fnw_type_kind(type). Scalars are
 * inline; strings and byte blobs point at bytes (in the input or an arena);
 * containers point at an array of child values.
 *
 * Field use by kind:
 *   BYTE BOOLEAN SHORT INT LONG CHAR(UTF-16 unit) SQL_DATE(days)
 *   SQL_TIME(ms of day)                                   -> u.i
 *   SQL_TIMESTAMP (a date-time without zone, as if in UTC), LOCAL_ZONED_
 *   TIMESTAMP (an instant)  -> u.i = ms since the epoch, count = nanos
 *   within that millisecond, 0..999999 (0 for precision <= 3, where the
 *   format has no room for them: encode drops them)
 *   FLOAT -> u.f, DOUBLE -> u.d
 *   STRING (UTF-8), BIG_DEC (decimal text, as Java's BigDecimal.toString
 *   writes it: "12.50", "1E-7", "1E+3"), PICKLED_BYTES, AVRO (one Avro
 *   binary datum), BIG_INT (two's-complement big-endian magnitude, as Java's
 *   BigInteger.toByteArray()), PRIMITIVE_ARRAY<BYTE>       -> u.bytes, count = byte length
 *   INSTANT -> u.instant; LOCAL_DATE/TIME/DATETIME -> u.local
 *   ROW, TUPLE -> u.items[count] fields (ROW also row_kind)
 *   BASIC/PRIMITIVE(non-byte)/OBJECT_ARRAY, LIST -> u.items[count] elements
 *   MAP -> u.items[2*count]: key0, value0, key1, value1, ... (wire order kept)
 * is_null marks a null where the format allows one (row fields, basic/object
 * array elements, map values, the top-level data field) and, anywhere, for
 * the kinds with a null encoding of their own: BIG_INT (length 0), INSTANT
 * and LOCAL_DATE/TIME/DATETIME (Java's MIN_VALUE sentinels). */
typedef enum fnw_row_kind {
    FNW_INSERT = 0,
    FNW_UPDATE_BEFORE = 1,
    FNW_UPDATE_AFTER = 2,
    FNW_DELETE = 3,
} fnw_row_kind;

typedef struct fnw_value fnw_value;
struct fnw_value {
    uint8_t kind; /* fnw_kind */
    uint8_t is_null;
    uint8_t row_kind; /* ROW only */
    uint32_t count;
    union {
        int64_t i;
        float f;
        double d;
        const uint8_t *bytes;
        struct {
            int64_t seconds;
            int32_t nanos;
        } instant;
        struct {
            int32_t year;
            int8_t month, day;
            int8_t hour, minute, second;
            int32_t nano;
        } local;
        fnw_value *items;
    } u;
};

/* Builders. Containers take an items array the caller owns (an arena, the
 * stack); MAP takes 2*entries items (key0, value0, ...) and count = entries. */
static inline fnw_value fnw_value_null(fnw_kind k)
{
    return (fnw_value){ .kind = (uint8_t)k, .is_null = 1 };
}
/* BYTE BOOLEAN SHORT INT LONG CHAR SQL_DATE SQL_TIME SQL_TIMESTAMP
 * LOCAL_ZONED_TIMESTAMP (the last two: ms, no sub-millisecond nanos) */
static inline fnw_value fnw_value_int(fnw_kind k, int64_t i)
{
    return (fnw_value){ .kind = (uint8_t)k, .u.i = i };
}
/* SQL_TIMESTAMP or LOCAL_ZONED_TIMESTAMP: ms since the epoch and the nanos
 * within that millisecond (0..999999). */
static inline fnw_value fnw_value_timestamp(fnw_kind k, int64_t millis, uint32_t nanos_of_milli)
{
    return (fnw_value){ .kind = (uint8_t)k, .count = nanos_of_milli, .u.i = millis };
}
static inline fnw_value fnw_value_float(float f)
{
    return (fnw_value){ .kind = FNW_FLOAT, .u.f = f };
}
static inline fnw_value fnw_value_double(double d)
{
    return (fnw_value){ .kind = FNW_DOUBLE, .u.d = d };
}
/* STRING BIG_DEC PICKLED_BYTES AVRO BIG_INT PRIMITIVE_ARRAY(BYTE): bytes are borrowed */
static inline fnw_value fnw_value_bytes(fnw_kind k, const void *p, uint32_t n)
{
    return (fnw_value){ .kind = (uint8_t)k, .count = n, .u.bytes = (const uint8_t *)p };
}
/* STRING from a NUL-terminated UTF-8 string (borrowed). */
static inline fnw_value fnw_value_str(const char *s)
{
    uint32_t n = 0;
    while (s[n])
        n++;
    return fnw_value_bytes(FNW_STRING, s, n);
}
/* ROW TUPLE BASIC/PRIMITIVE/OBJECT_ARRAY LIST MAP (see above for MAP). */
static inline fnw_value fnw_value_items(fnw_kind k, fnw_value *items, uint32_t count)
{
    return (fnw_value){ .kind = (uint8_t)k, .count = count, .u.items = items };
}
static inline fnw_value fnw_value_row(fnw_row_kind rk, fnw_value *items, uint32_t count)
{
    return (fnw_value){ .kind = FNW_ROW, .row_kind = (uint8_t)rk, .count = count, .u.items = items };
}
static inline fnw_value fnw_value_instant(int64_t seconds, int32_t nanos)
{
    fnw_value v = { .kind = FNW_INSTANT };
    v.u.instant.seconds = seconds;
    v.u.instant.nanos = nanos;
    return v;
}
static inline fnw_value fnw_value_local_date(int32_t year, int month, int day)
{
    fnw_value v = { .kind = FNW_LOCAL_DATE };
    v.u.local.year = year;
    v.u.local.month = (int8_t)month;
    v.u.local.day = (int8_t)day;
    return v;
}
static inline fnw_value fnw_value_local_time(int hour, int minute, int second, int32_t nano)
{
    fnw_value v = { .kind = FNW_LOCAL_TIME };
    v.u.local.hour = (int8_t)hour;
    v.u.local.minute = (int8_t)minute;
    v.u.local.second = (int8_t)second;
    v.u.local.nano = nano;
    return v;
}
static inline fnw_value fnw_value_local_datetime(int32_t year, int month, int day, int hour, int minute,
                                                 int second, int32_t nano)
{
    fnw_value v = fnw_value_local_date(year, month, day);
    v.kind = FNW_LOCAL_DATETIME;
    v.u.local.hour = (int8_t)hour;
    v.u.local.minute = (int8_t)minute;
    v.u.local.second = (int8_t)second;
    v.u.local.nano = nano;
    return v;
}

/* ---- records: one element as the data plane carries it --------------------- */
typedef struct fnw_record {
    int64_t timestamp;   /* StreamRecord timestamp; INT64_MIN when it has none */
    int64_t watermark;   /* operator watermark when the record arrived */
    const uint8_t *data; /* Flink bytes of the data value; NULL when the value is null */
    uint32_t len;        /* byte length of data */
} fnw_record;

/* ---- options: the OperationSpec.options map --------------------------------- */
typedef struct fnw_option {
    const char *key;
    const char *value;
} fnw_option;

typedef struct fnw_options {
    size_t count;
    const fnw_option *items;
} fnw_options;

/* Value of key, or NULL when absent. */
const char *fnw_options_get(const fnw_options *o, const char *key);
/* Fails naming the first key that is not in known (a NULL-terminated list). */
int fnw_options_check_known(const fnw_options *o, const char *const *known, const char *op_name,
                            fnw_error *err);
/* Integer option in [min, max]; def when absent. Fails naming the option when
 * the value is not a whole number or out of range. */
int fnw_options_int(const fnw_options *o, const char *key, int64_t def, int64_t min, int64_t max,
                    int64_t *out, fnw_error *err);
/* Boolean option (true/false, 1/0, yes/no); def when absent. */
int fnw_options_bool(const fnw_options *o, const char *key, int def, int *out, fnw_error *err);
/* One of choices (a NULL-terminated list): *out = its index; def when absent. */
int fnw_options_choice(const fnw_options *o, const char *key, const char *const *choices, int def, int *out,
                       fnw_error *err);

/* ---- the operation table ------------------------------------------------------ */
typedef struct fnw_call fnw_call;
typedef struct fnw_blocking_call fnw_blocking_call;

/* What open() gets. The struct and the options are valid during open()
 * only (copy what you keep); loop and the types stay valid until close(). */
typedef struct fnw_op_env {
    struct ev_loop *loop;
    const fnw_options *options;
    const fnw_type *input_type;  /* type of the data field of each input */
    const fnw_type *output_type; /* type the outputs must be encoded in */
    const char *transform_id;
    int batched; /* 1 in batch mode */
    /* Added in ABI 1 (unreleased), at the end: inputs per call at most (1 in
     * per-element mode; in batch mode the smaller of the spec's batch size
     * and capacity), and the spec's time limit per call in ms (0: none). */
    size_t batch_size;
    int64_t timeout_ms;
    /* Added in ABI 1, at the end: fnworker's, for fnw_op_counter(). */
    struct fnw_counter_set *counters;
} fnw_op_env;

/* The type of an operation's outputs. Flink describes only an operator's
 * input and output types, not the types between the functions it fuses into
 * it, so a step that is not the last one of its chain is typed by this rule. */
typedef enum fnw_output_rule {
    /* Given by the OperationSpec's output_type (for the last step of a chain,
     * the operator's output type, which output_type must then equal). A step
     * whose type cannot be known that way fails with a message asking for
     * output_type. The default for any operation that does not say. */
    FNW_OUTPUT_DECLARED = 0,
    /* Always the input type (identity, echo). */
    FNW_OUTPUT_SAME_AS_INPUT = 1,
} fnw_output_rule;

typedef struct fnw_operation {
    const char *name;
    const char *summary; /* one line for error messages and --help */
    fnw_output_rule output_rule;
    /* Synchronous operations always complete inside invoke; fnworker then
     * skips copying inputs and queueing. */
    int sync;
    /* Allocate per-instance state, validate options. May be NULL. */
    int (*open)(const fnw_op_env *env, void **state, fnw_error *err);
    void (*close)(void *state); /* may be NULL */
    void (*invoke)(void *state, fnw_call *call);
    /* Optional (may be NULL). Used with TIMEOUT_OPERATION: supply the
     * result of a timed-out call synchronously with fnw_call_emit*, then
     * return 0; return -1 with err set to fail the bundle. */
    int (*on_timeout)(void *state, fnw_call *call, fnw_error *err);
    /* Required unless sync or blocking: see "cancel" at the top. */
    void (*cancel)(void *state, fnw_call *call);
    /* Blocking mode, instead of invoke (leave invoke, cancel and sync
     * unset): runs on one of fnworker's pool threads, may block, and reads
     * and writes the call only through fnw_blocking_*(). Return 0 to
     * complete the call, -1 to fail it (fnw_blocking_fail says why). */
    int (*invoke_blocking)(void *state, fnw_blocking_call *bc);
} fnw_operation;

/* ---- the call ------------------------------------------------------------------ */
size_t fnw_call_size(const fnw_call *c);                       /* inputs in this call */
const fnw_record *fnw_call_input(const fnw_call *c, size_t i); /* bytes valid until the call is settled */
int fnw_call_attempt(const fnw_call *c);                       /* 1 on the first attempt */
struct ev_loop *fnw_call_loop(const fnw_call *c);
/* Scratch memory that lives until the attempt ends. */
fnw_arena *fnw_call_arena(fnw_call *c);
/* Decodes input i into out (memory from the call arena). */
int fnw_call_decode(fnw_call *c, size_t i, fnw_value *out, fnw_error *err);
/* Operation state slot for the call's lifetime (e.g. a timer watcher). */
void *fnw_call_op_data(fnw_call *c);
void fnw_call_set_op_data(fnw_call *c, void *p);

/* One output for input i: data = Flink bytes of the output type (NULL with
 * len 0 for a null value); copied. 0, or -1 when refused: i is out of
 * range, the call is already settled, or the output could not be kept (out
 * of memory: fnworker then fails the bundle itself). */
int fnw_call_emit(fnw_call *c, size_t i, const uint8_t *data, size_t len);
/* One output for input i, encoded from a value with the output type. */
int fnw_call_emit_value(fnw_call *c, size_t i, const fnw_value *v, fnw_error *err);
void fnw_call_complete(fnw_call *c);
void fnw_call_fail(fnw_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* fnw_call_fail with a say on the retry (added in ABI 1 without breaking it):
 * delay_ms >= 0: when the spec's retry strategy retries this failure, the
 * next attempt waits at least delay_ms (the larger of it and the strategy's
 * backoff; a server's Retry-After, say). The call's timeout still bounds the
 * whole call: a retry that would start after it never runs, and the timeout
 * action applies.
 * FNW_CALL_NO_RETRY (any negative delay_ms): the failure is final whatever
 * the strategy says (a request the service refused and will refuse again). */
#define FNW_CALL_NO_RETRY (-1)
void fnw_call_fail_after(fnw_call *c, int64_t delay_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The service refused this attempt for load (HTTP 429 or 503, gRPC
 * RESOURCE_EXHAUSTED or UNAVAILABLE, ...; added in ABI 1 without breaking
 * it). retry_after_ms > 0 is the service's Retry-After. With adaptive
 * concurrency on (the default, docs/resilience.md) fnworker lowers the
 * operation's concurrency limit, pauses every call of the operation for
 * retry_after_ms, and runs this call again later without using one of the
 * spec's retry attempts (its timeout still bounds it); with it off, this is
 * fnw_call_fail_after(c, retry_after_ms, ...). */
void fnw_call_fail_overloaded(fnw_call *c, int64_t retry_after_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- counters: figures an operation reports (added in ABI 1 without breaking it)
 * A count an operation keeps of its own (a cache's hits, say) is reported
 * with fnworker's figures for the step: as a Flink user metric
 * <operator scope>.fnworker.<operation>_<index>.<name>, summed over bundles,
 * and in the worker pool's Prometheus endpoint. Register in open(): at most
 * FNW_COUNTERS_MAX per instance; a name is 1..32 of [a-z0-9_], starting
 * with a letter; the same name twice gives the same counter. A counter is
 * valid until close(); fnw_counter_add may be called from any thread (a
 * blocking operation's too). */
#define FNW_COUNTERS_MAX 16
typedef struct fnw_counter fnw_counter;
/* NULL with err set when the name is not valid or the instance has
 * FNW_COUNTERS_MAX counters already. */
fnw_counter *fnw_op_counter(const fnw_op_env *env, const char *name, fnw_error *err);
void fnw_counter_add(fnw_counter *c, int64_t n);

/* ---- blocking operations ---------------------------------------------------------
 * invoke_blocking runs on a pool thread (worker flag --blocking-threads,
 * default 4; at most the spec's capacity calls of one transform at once).
 * The fnw_blocking_call is the call's own copy: its inputs, its arena and
 * its outputs belong to that thread until invoke_blocking returns, so these
 * functions need no locks. Never touch the loop, a fnw_call or anything
 * else fnworker owns from there; per-instance state shared between calls
 * is yours to lock. Outputs are handed to the loop when invoke_blocking
 * returns, and then ordered, timed out and retried like any call's. A call
 * that timed out or was cancelled still runs to its end (threads are never
 * interrupted); its result is dropped. A retry runs invoke_blocking again
 * with a fresh fnw_blocking_call. The call, its arena and the values
 * decoded into it live until invoke_blocking returns. */
size_t fnw_blocking_size(const fnw_blocking_call *bc);                       /* inputs */
const fnw_record *fnw_blocking_input(const fnw_blocking_call *bc, size_t i); /* NULL out of range */
int fnw_blocking_attempt(const fnw_blocking_call *bc);                       /* 1 on the first */
fnw_arena *fnw_blocking_arena(fnw_blocking_call *bc);
/* Decodes input i (memory from the call's arena). */
int fnw_blocking_decode(fnw_blocking_call *bc, size_t i, fnw_value *out, fnw_error *err);
/* One output for input i, as fnw_call_emit (copied; -1 when i is out of
 * range or out of memory). */
int fnw_blocking_emit(fnw_blocking_call *bc, size_t i, const uint8_t *data, size_t len);
/* One output for input i, encoded from a value with the output type. */
int fnw_blocking_emit_value(fnw_blocking_call *bc, size_t i, const fnw_value *v, fnw_error *err);
/* Sets the call's failure message; returns -1, so invoke_blocking can
 * `return fnw_blocking_fail(bc, ...)`. */
int fnw_blocking_fail(fnw_blocking_call *bc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- registration ---------------------------------------------------------------- */
typedef struct fnw_registry fnw_registry;

/* Adds op under op->name; op must outlive the registry. Fails when op has no
 * name, has neither invoke nor invoke_blocking (or both), is asynchronous
 * without cancel, is blocking and sync, its name is taken, or the registry
 * is full. */
int fnw_registry_add(fnw_registry *r, const fnw_operation *op, fnw_error *err);

/* ---- plugins ------------------------------------------------------------------------
 * A plugin is a shared object (cc -shared -fPIC -I<fnworker>/include) that
 * defines its entry point once with FNW_PLUGIN_DEFINE:
 *
 *     static int init(fnw_registry *r, fnw_error *err)
 *     {
 *         return fnw_registry_add(r, &my_op, err);
 *     }
 *     FNW_PLUGIN_DEFINE("my-plugin", init);
 *
 * The worker loads every *.so of its plugins directory (--plugins-dir, or
 * FNW_PLUGINS_DIR, or plugins/ beside the executable) at start, in name
 * order, reads abi_version before anything else, and calls init once, on
 * the thread that later runs the loop, before the loop exists. A plugin built for another ABI version, without the
 * entry point, whose init fails or that registers a name already taken
 * stops the worker at start. fnworker resolves the functions of this
 * header for the plugin; link the plugin with the libraries it uses
 * itself (libev for watchers). Operations stay registered until the
 * process ends; a plugin is never unloaded. */
typedef struct fnw_plugin {
    int abi_version;  /* FNW_ABI_VERSION when the plugin was built; always first */
    const char *name; /* for the log and messages */
    int (*init)(fnw_registry *r, fnw_error *err);
} fnw_plugin;

#define FNW_PLUGIN_SYMBOL "fnw_plugin_v1"
#define FNW_PLUGIN_DEFINE(plugin_name, init_fn) \
    __attribute__((visibility("default"))) extern const fnw_plugin fnw_plugin_v1; \
    const fnw_plugin fnw_plugin_v1 = { FNW_ABI_VERSION, (plugin_name), (init_fn) }

#endif
