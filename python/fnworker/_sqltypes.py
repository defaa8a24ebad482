"""Flink SQL types as ``org.apache.flink.fn_execution.v1.Schema.FieldType``
bytes (flink-fn-execution.proto), for an OperationSpec's result_type: the
type of a Table function's result. From PyFlink's ``DataTypes.*`` objects
(pyflink/table/types.py), recognised by class name and the attributes those
classes keep (``_nullable``, ``length``, ``precision``, ``scale``,
``element_type``, ``key_type``/``value_type``, ``fields``), so that this
module does not import PyFlink. Types the Table runner's coders have but
fnworker does not serve (MULTISET, NULL, ZONED_TIMESTAMP, intervals,
user-defined types, views) are refused with a message naming the type."""

from . import _wire

# Schema.TypeName
TYPE_NAME = {
    "ROW": 0, "TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4, "DECIMAL": 5, "FLOAT": 6,
    "DOUBLE": 7, "DATE": 8, "TIME": 9, "TIMESTAMP": 10, "BOOLEAN": 11, "BINARY": 12,
    "VARBINARY": 13, "CHAR": 14, "VARCHAR": 15, "BASIC_ARRAY": 16, "MAP": 17,
    "LOCAL_ZONED_TIMESTAMP": 19,
}
# Schema.FieldType fields: type_name 1, nullable 2, then the type_info oneof.
ELEMENT, MAP_INFO, ROW_SCHEMA, DECIMAL_INFO, TIME_INFO, TIMESTAMP_INFO, LZ_TIMESTAMP_INFO = \
    3, 4, 5, 6, 7, 8, 9
BINARY_INFO, VARBINARY_INFO, CHAR_INFO, VARCHAR_INFO = 11, 12, 13, 14

# PyFlink class -> (TypeName, the oneof field of its one int info (length or
# precision), or None)
_ATOMIC = {
    "TinyIntType": ("TINYINT", None), "SmallIntType": ("SMALLINT", None),
    "IntType": ("INT", None), "BigIntType": ("BIGINT", None),
    "BooleanType": ("BOOLEAN", None), "FloatType": ("FLOAT", None),
    "DoubleType": ("DOUBLE", None), "DateType": ("DATE", None),
    "TimeType": ("TIME", TIME_INFO), "TimestampType": ("TIMESTAMP", TIMESTAMP_INFO),
    "LocalZonedTimestampType": ("LOCAL_ZONED_TIMESTAMP", LZ_TIMESTAMP_INFO),
    "CharType": ("CHAR", CHAR_INFO), "VarCharType": ("VARCHAR", VARCHAR_INFO),
    "BinaryType": ("BINARY", BINARY_INFO), "VarBinaryType": ("VARBINARY", VARBINARY_INFO),
}
_REFUSED = {
    "MultisetType": "MULTISET", "NullType": "NULL", "ZonedTimestampType": "TIMESTAMP WITH TIME ZONE",
    "YearMonthIntervalType": "INTERVAL YEAR TO MONTH", "DayTimeIntervalType": "INTERVAL DAY TO SECOND",
    "ListViewType": "LIST_VIEW", "MapViewType": "MAP_VIEW",
}
MAX_DEPTH = 63   # as for the DataStream output type (_types.MAX_DEPTH)

SUPPORTED = ("TINYINT, SMALLINT, INT, BIGINT, BOOLEAN, FLOAT, DOUBLE, DECIMAL(p, s), DATE, "
             "TIME(p), TIMESTAMP(p), TIMESTAMP_LTZ(p), CHAR(n), VARCHAR(n)/STRING, BINARY(n), "
             "VARBINARY(n)/BYTES, ARRAY, MAP, ROW")


def _info(field, body):
    return _wire.message_field(field, body)


def _int_info(field, value, what, t):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("%s of %r must be a non-negative int, got %r" % (what, t, value))
    return _info(field, _wire.int_field(1, value))


def field_type(t, depth=1):
    """The Schema.FieldType bytes of a PyFlink DataType."""
    if depth > MAX_DEPTH:
        raise ValueError("the SQL type nests deeper than %d levels" % MAX_DEPTH)
    if isinstance(t, str):
        raise TypeError("fnworker needs the result type as a PyFlink DataTypes object (e.g. "
                        "DataTypes.DOUBLE()), not the string %r" % (t,))
    cls = type(t).__name__
    if not hasattr(t, "_nullable"):
        raise TypeError("not a PyFlink DataType: %r" % (t,))
    if cls in _REFUSED:
        raise ValueError("fnworker does not serve the SQL type %s (%r) in Table functions; it "
                         "serves %s" % (_REFUSED[cls], t, SUPPORTED))

    def head(name):
        return _wire.int_field(1, TYPE_NAME[name]) + _wire.int_field(2, bool(t._nullable))

    if cls in _ATOMIC:
        name, info = _ATOMIC[cls]
        out = head(name)
        if info in (TIME_INFO, TIMESTAMP_INFO, LZ_TIMESTAMP_INFO):
            out += _int_info(info, t.precision, "the precision", t)
        elif info is not None:
            out += _int_info(info, t.length, "the length", t)
        return out
    if cls == "DecimalType":
        for what, v in (("precision", t.precision), ("scale", t.scale)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError("the %s of %r must be a non-negative int" % (what, t))
        return head("DECIMAL") + _info(DECIMAL_INFO, _wire.int_field(1, t.precision) +
                                       _wire.int_field(2, t.scale))
    if cls == "ArrayType":
        return head("BASIC_ARRAY") + _info(ELEMENT, field_type(t.element_type, depth + 1))
    if cls == "MapType":
        return head("MAP") + _info(MAP_INFO, _info(1, field_type(t.key_type, depth + 1)) +
                                   _info(2, field_type(t.value_type, depth + 1)))
    if cls == "RowType":
        return head("ROW") + _info(ROW_SCHEMA, schema(t, depth))
    raise ValueError("fnworker does not serve the SQL type %r in Table functions; it serves %s"
                     % (t, SUPPORTED))


def schema(row_type, depth=1):
    """The Schema bytes (its fields) of a PyFlink RowType."""
    out = b""
    for f in row_type.fields:
        # no description (2): PyFlink's RowField keeps '...' when none is given
        out += _wire.message_field(1, _wire.bytes_field(1, f.name) +
                                   _wire.message_field(3, field_type(f.data_type, depth + 1)))
    return out


def is_row(t):
    return type(t).__name__ == "RowType"
