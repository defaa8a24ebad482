/* codecs/pickle_const.h — the constants Flink's Table runner passes to a
 * Python scalar or table function: a SQL literal among a call's arguments
 * (`score(x, 0.5, 'abc', DATE '2024-01-02')`) arrives as
 * UserDefinedFunction.inputs[].inputConstant (flink-fn-execution.proto): one
 * type byte, then a pickle of one Java value written by the razorvine
 * ("pyrolite") Pickler that flink-python shades.
 *
 * Where the bytes come from (flink-table-planner, CommonPythonUtil
 * .convertLiteralToPython(RexLiteral, SqlTypeName, ClassLoader), which calls
 * flink-python's PythonBridgeUtils.pickleValue(Object, byte)): the literal's
 * Calcite value (RexLiteral.getValue3()) becomes
 *   TINYINT/SMALLINT/INTEGER/BIGINT -> Byte/Short/Integer/Long  (type byte 0)
 *   FLOAT/DOUBLE                    -> Float/Double             (0)
 *   DECIMAL -> BigDecimal, BOOLEAN -> Boolean, CHAR/VARCHAR -> String (0)
 *   any NULL literal                -> null                     (0, whatever its SQL type)
 *   DATE -> Integer days since 1970-01-01                       (1)
 *   TIME -> Integer milliseconds of the day                     (2)
 *   TIMESTAMP(p) -> Long epoch milliseconds (finer digits dropped) (3)
 * and every other literal (BINARY, VARBINARY, TIMESTAMP_LTZ, INTERVAL, ...)
 * makes the planner throw "Unsupported type", so none reaches a worker.
 * PyFlink decodes them in operation_utils.py _parse_constant_value.
 *
 * The opcodes razorvine 4.13 (the version Flink 1.20 and 2.3 shade) writes
 * for those values, read from its real output
 * (tests/fixtures/pickle_const/GenPickleConst.java), all after PROTO 2 and
 * before STOP:
 *   int 0..255             BININT1 u8
 *   int 256..65535         BININT2 u16 little-endian
 *   other int32            BININT i32 little-endian
 *   other int64            INT "<decimal>\n" (protocol 0's text form)
 *   Float, Double          BINFLOAT f64 big-endian (a Float widened)
 *   Boolean                NEWTRUE / NEWFALSE
 *   null                   NONE
 *   String                 BINUNICODE u32 len, UTF-8, BINPUT
 *   BigDecimal             GLOBAL "decimal\nDecimal\n", BINUNICODE
 *                          <toString()> BINPUT, TUPLE1, REDUCE, BINPUT
 *   byte[] (never sent     GLOBAL "__builtin__\nbytearray\n", BINUNICODE
 *    for a literal)        <bytes as Latin-1 in UTF-8> BINPUT, BINUNICODE
 *                          "latin-1" BINPUT, TUPLE2, REDUCE, BINPUT
 * The reader is not an unpickler: it accepts exactly these sequences (memo
 * opcodes BINPUT/LONG_BINPUT wherever one may follow a value), checks every
 * length against the bytes left, runs no code, and refuses anything else
 * with a message naming the opcode, its byte offset and the type byte.
 *
 * Typing (what an operation sees):
 *   Python int      -> FNW_LONG (BIGINT; every SQL integer literal widens),
 *                      refused when wider than 64 bits
 *   float           -> FNW_DOUBLE (a FLOAT literal arrives widened)
 *   str             -> FNW_STRING (UTF-8, checked)
 *   bool            -> FNW_BOOLEAN
 *   None            -> a null FNW_STRING
 *   Decimal         -> FNW_BIG_DEC: its text as written (Java's
 *                      BigDecimal.toString(), e.g. "1.50", "-0.001", "1E+3");
 *                      precision and scale are not carried
 *   bytearray       -> PRIMITIVE_ARRAY<BYTE>, the bytes
 *   type byte 1     -> FNW_SQL_DATE (days, must fit 32 bits)
 *   type byte 2     -> FNW_SQL_TIME (ms of day, 0 to 86399999)
 *   type byte 3     -> FNW_SQL_TIMESTAMP (epoch ms)
 * Types 1-3 carry an int; a null DATE/TIME/TIMESTAMP literal comes as type
 * 0 + None, so it reads as a null FNW_STRING.
 */
#ifndef FNW_PICKLE_CONST_H
#define FNW_PICKLE_CONST_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/error.h"
#include "fnworker.h"

/* The type byte before the pickle (PyFlink's j_type). */
enum {
    FNW_PICKLE_CONST_PLAIN = 0,
    FNW_PICKLE_CONST_DATE = 1,
    FNW_PICKLE_CONST_TIME = 2,
    FNW_PICKLE_CONST_TIMESTAMP = 3,
};

/* Reads one inputConstant (p, n: type byte + pickle). On success returns 0,
 * *out is the value and *type a new type tree of out's kind (built with
 * fnw_type_new; the caller releases it with fnw_type_free). Text and bytes
 * are copied into a (required; NUL-terminated, count excludes the NUL), so
 * out stays valid after p is gone and until a is reset. Meant for the plan
 * (once per function argument), not the data path. On error returns -1, *type is
 * NULL, nothing is left allocated outside a, and err says what was wrong
 * (the type byte, the opcode and its offset in the pickle). */
int fnw_pickle_const_read(const uint8_t *p, size_t n, fnw_arena *a, fnw_value *out, fnw_type **type,
                          fnw_error *err);

/* A constant read above, as a value of type to (a function's declared
 * argument type, OperationSpec.argument_types): a null of any type; an
 * integer to BYTE/SHORT/INT/LONG (refused when out of range), FLOAT, DOUBLE
 * or DECIMAL; a float to FLOAT or DOUBLE; a decimal to DECIMAL (the
 * encoder rounds it to the type's scale and refuses an overflow), FLOAT or
 * DOUBLE; text to STRING; a boolean to BOOLEAN; DATE, TIME to themselves;
 * a TIMESTAMP to TIMESTAMP or TIMESTAMP_LTZ of any precision. Anything
 * else fails naming both types. Text is borrowed from v or put in a. */
int fnw_pickle_const_convert(const fnw_value *v, const fnw_type *to, fnw_arena *a, fnw_value *out,
                             fnw_error *err);

#endif
