/* tests/fuzz/record_shapes.h — the Flink types the record fuzz target
 * (fuzz_record.c) and the seed generator (gen_seeds_codecs.c) share: the first byte
 * of a record input chooses one of them, so one target covers several
 * shapes of type tree.
 *
 *   0 RICH   a ROW with every kind the serializers encode except AVRO (which
 *            fuzz_avro.c covers): every fixed-width primitive, STRING,
 *            BIG_INT, BIG_DEC, the SQL and java.time kinds, INSTANT,
 *            PICKLED_BYTES, PRIMITIVE_ARRAYs, LIST, BASIC_ARRAY,
 *            OBJECT_ARRAY, MAP, TUPLE and a ROW nested in a ROW;
 *   1 AMPLIFY  LIST<LIST<TUPLE<>>>, whose elements take no input bytes (the
 *            decode budget of codecs/ser.h exists for it);
 *   2 MAPS   a TUPLE of maps whose keys and values are containers, BIG_INTs,
 *            java.time kinds and nullable values.
 *
 * Types are built with the builders of codecs/type.h; a builder failure
 * (out of memory) returns NULL.
 */
#ifndef FNW_FUZZ_RECORD_SHAPES_H
#define FNW_FUZZ_RECORD_SHAPES_H

#include <stdarg.h>
#include <stddef.h>

#include "codecs/type.h"

enum { SHAPE_RICH, SHAPE_AMPLIFY, SHAPE_MAPS, SHAPE_COUNT };

/* A ROW or TUPLE (or container) of n children; ROW fields named f0, f1, ...
 * Takes every child, also on failure. */
static inline fnw_type *shape_node(fnw_kind k, int n, ...)
{
    fnw_type *t = fnw_type_new(k);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        fnw_type *c = va_arg(ap, fnw_type *);
        char name[16] = "f";
        name[1] = (char)('a' + i % 26);
        name[2] = (char)('0' + i / 26);
        fnw_error err;
        if (!t || !c || fnw_type_add_child(t, c, name, &err) < 0) {
            fnw_type_free(c);
            fnw_type_free(t);
            t = NULL;
        }
    }
    va_end(ap);
    return t;
}

static inline fnw_type *shape_leaf(fnw_kind k)
{
    return fnw_type_new(k);
}

static inline fnw_type *shape_rich(void)
{
    fnw_type *nested = shape_node(FNW_ROW, 2, shape_leaf(FNW_INT),
                                  shape_node(FNW_ROW, 2, shape_leaf(FNW_STRING),
                                             shape_node(FNW_LIST, 1, shape_leaf(FNW_INT))));
    fnw_type *obj = shape_node(FNW_OBJECT_ARRAY, 1,
                               shape_node(FNW_ROW, 2, shape_leaf(FNW_BOOLEAN), shape_leaf(FNW_BIG_INT)));
    return shape_node(FNW_ROW, 28,
                      shape_leaf(FNW_BOOLEAN), shape_leaf(FNW_BYTE), shape_leaf(FNW_SHORT),
                      shape_leaf(FNW_INT), shape_leaf(FNW_LONG), shape_leaf(FNW_FLOAT),
                      shape_leaf(FNW_DOUBLE), shape_leaf(FNW_CHAR), shape_leaf(FNW_STRING),
                      shape_leaf(FNW_BIG_INT), shape_leaf(FNW_BIG_DEC), shape_leaf(FNW_SQL_DATE),
                      shape_leaf(FNW_SQL_TIME), shape_leaf(FNW_SQL_TIMESTAMP), shape_leaf(FNW_INSTANT),
                      shape_leaf(FNW_LOCAL_DATE), shape_leaf(FNW_LOCAL_TIME), shape_leaf(FNW_LOCAL_DATETIME),
                      shape_leaf(FNW_PICKLED_BYTES),
                      shape_node(FNW_PRIMITIVE_ARRAY, 1, shape_leaf(FNW_BYTE)),
                      shape_node(FNW_PRIMITIVE_ARRAY, 1, shape_leaf(FNW_INT)),
                      shape_node(FNW_PRIMITIVE_ARRAY, 1, shape_leaf(FNW_BOOLEAN)),
                      shape_node(FNW_LIST, 1, shape_leaf(FNW_STRING)),
                      shape_node(FNW_BASIC_ARRAY, 1, shape_leaf(FNW_LONG)),
                      obj,
                      shape_node(FNW_MAP, 2, shape_leaf(FNW_STRING), shape_leaf(FNW_INT)),
                      shape_node(FNW_TUPLE, 3, shape_leaf(FNW_INT), shape_leaf(FNW_STRING),
                                 shape_leaf(FNW_DOUBLE)),
                      nested);
}

static inline fnw_type *shape_amplify(void)
{
    return shape_node(FNW_LIST, 1, shape_node(FNW_LIST, 1, shape_node(FNW_TUPLE, 0)));
}

static inline fnw_type *shape_maps(void)
{
    fnw_type *inner = shape_node(FNW_MAP, 2, shape_leaf(FNW_BIG_INT),
                                 shape_node(FNW_LIST, 1, shape_node(FNW_ROW, 2, shape_leaf(FNW_INSTANT),
                                                                    shape_leaf(FNW_LOCAL_DATETIME))));
    return shape_node(FNW_TUPLE, 3,
                      shape_node(FNW_MAP, 2, shape_leaf(FNW_STRING), inner),
                      shape_node(FNW_MAP, 2, shape_leaf(FNW_LOCAL_DATE),
                                 shape_node(FNW_OBJECT_ARRAY, 1, shape_leaf(FNW_BOOLEAN))),
                      shape_node(FNW_MAP, 2, shape_leaf(FNW_CHAR),
                                 shape_node(FNW_PRIMITIVE_ARRAY, 1, shape_leaf(FNW_DOUBLE))));
}

static inline fnw_type *shape_new(int shape)
{
    switch (shape) {
    case SHAPE_RICH: return shape_rich();
    case SHAPE_AMPLIFY: return shape_amplify();
    case SHAPE_MAPS: return shape_maps();
    default: return NULL;
    }
}

#endif
