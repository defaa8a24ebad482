/* codecs/schema.c — fnw_type from Flink's Table Schema proto (see
 * schema.h). */
#include "codecs/schema.h"

int fnw_schema_to_type(const void *schema, fnw_type **out, fnw_error *err)
{
    (void)schema;
    *out = NULL;
    return fnw_error_set(err, "Table schemas are not supported yet");
}

int fnw_schema_field_type_to_type(const void *field_type, fnw_type **out, fnw_error *err)
{
    (void)field_type;
    *out = NULL;
    return fnw_error_set(err, "Table schemas are not supported yet");
}
