"""Operation and its OperationSpec bytes, checked with protoc --decode:
every setting and option (input_field, field 12, included), the output type
from the text form and from PyFlink's type classes, and the mistakes caught when the job is built."""

import datetime
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fnworker import NO_RETRY, Operation, RetryStrategy, type_info_bytes  # noqa: E402
from protoc_decode import decode, flat  # noqa: E402


def spec_text(op):
    return flat(decode(op.to_spec()))


def type_text(t):
    return flat(decode(type_info_bytes(t), "org.apache.flink.fn_execution.v1.TypeInfo",
                       "org/apache/flink/fn_execution/v1/flink-fn-execution.proto"))


class SpecTest(unittest.TestCase):
    def test_name_and_options(self):
        op = Operation("echo", delay_ms=10, hang=True, fail_message="n\u00e9e", seed=0)
        self.assertEqual(spec_text(op),
                         'operation: "echo" options { key: "delay_ms" value: "10" } '
                         'options { key: "fail_message" value: "n\\303\\251e" } '
                         'options { key: "hang" value: "true" } options { key: "seed" value: "0" }')
        self.assertEqual(Operation("identity").to_spec(), b"\n\x08identity")

    def test_every_setting(self):
        op = Operation("echo").with_settings(
            output_mode="UNORDERED", capacity=1000, timeout_ms=5000, batch_size=64,
            batch_timeout_ms=5, on_timeout="OPERATION", mode="BATCH",
            retry=RetryStrategy.exponential_backoff(3, 10, 200, 1.5, retry_on_error=False,
                                                    retry_on_empty_result=True))
        self.assertEqual(spec_text(op),
                         'operation: "echo" output_mode: UNORDERED capacity: 1000 timeout_ms: 5000 '
                         'batch_size: 64 batch_timeout_ms: 5 retry { kind: EXPONENTIAL_BACKOFF '
                         'max_attempts: 3 delay_ms: 10 max_delay_ms: 200 multiplier: 1.5 '
                         'retry_on_empty_result: true } on_timeout: TIMEOUT_OPERATION mode: BATCH')

    def test_input_field(self):
        op = Operation("echo").with_settings(input_field="f1", output_type="ROW<a:INT>")
        self.assertTrue(spec_text(op).endswith('output_type { row_type_info { fields { '
                                               'field_name: "a" field_type { type_name: INT } } } } '
                                               'input_field: "f1"'), spec_text(op))
        self.assertEqual(Operation("echo").with_settings(input_field="").to_spec(), b"\n\x04echo")
        with self.assertRaises(TypeError):
            Operation("echo").with_settings(input_field=1)

    def test_defaults_are_left_out(self):
        op = Operation("echo").with_settings(output_mode="ORDERED", capacity=0, on_timeout="FAIL",
                                             retry=NO_RETRY)
        self.assertEqual(op.to_spec(), b"\n\x04echo")

    def test_enum_spellings(self):
        for value, want in (("TIMEOUT_EMPTY", "TIMEOUT_EMPTY"), ("empty", "TIMEOUT_EMPTY"),
                            ("timeout_operation", "TIMEOUT_OPERATION")):
            self.assertIn("on_timeout: " + want, spec_text(Operation("echo").with_settings(on_timeout=value)))
        self.assertIn("mode: PER_ELEMENT", spec_text(Operation("echo").with_settings(mode="per_element")))

    def test_fixed_delay_retry(self):
        op = Operation("echo").with_settings(timeout_ms=100, retry=RetryStrategy.fixed_delay(2, 7))
        self.assertIn("retry { kind: FIXED_DELAY max_attempts: 2 delay_ms: 7 retry_on_error: true }",
                      spec_text(op))

    def test_times_from_timedelta_and_time_objects(self):
        class StandInTime(object):   # PyFlink's Time/Duration offer to_milliseconds()
            def to_milliseconds(self):
                return 2500
        op = Operation("echo").with_settings(timeout_ms=StandInTime())
        self.assertIn("timeout_ms: 2500", spec_text(op))
        op = Operation("echo").with_settings(timeout_ms=datetime.timedelta(seconds=3))
        self.assertIn("timeout_ms: 3000", spec_text(op))

    def test_large_numbers(self):
        op = Operation("echo").with_settings(capacity=2 ** 31 - 1, timeout_ms=2 ** 63 - 1)
        self.assertIn("capacity: 2147483647 timeout_ms: 9223372036854775807", spec_text(op))

    def test_output_type_text_form(self):
        op = Operation("project", fields="name,id").with_settings(output_type="ROW<name:STRING, id:LONG>")
        self.assertEqual(spec_text(op),
                         'operation: "project" options { key: "fields" value: "name,id" } output_type { '
                         'row_type_info { fields { field_name: "name" field_type { type_name: STRING } } '
                         'fields { field_name: "id" field_type { type_name: LONG } } } }')

    def test_every_type_in_text_form(self):
        self.assertEqual(type_text("row<a:list<int>, map<string,double>, t:tuple<BIG_INT>>"),
            'row_type_info { fields { field_name: "a" field_type { type_name: LIST collection_element_type '
            '{ type_name: INT } } } fields { field_name: "f1" field_type { type_name: MAP map_type_info { '
            'key_type { type_name: STRING } value_type { type_name: DOUBLE } } } } fields { field_name: "t" '
            'field_type { type_name: TUPLE tuple_type_info { field_types { type_name: BIG_INT } } } } }')
        self.assertEqual(type_text("ROW<>"), "row_type_info { }")
        for name in ("STRING", "BYTE", "BOOLEAN", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "CHAR",
                     "BIG_INT", "BIG_DEC", "SQL_DATE", "SQL_TIME", "SQL_TIMESTAMP", "INSTANT",
                     "LOCAL_DATE", "LOCAL_TIME", "LOCAL_DATETIME", "PICKLED_BYTES"):
            self.assertEqual(type_text(name), "type_name: " + name)
        for name in ("BASIC_ARRAY", "PRIMITIVE_ARRAY", "OBJECT_ARRAY"):
            self.assertEqual(type_text(name + "<INT>"),
                             "type_name: %s collection_element_type { type_name: INT }" % name)

    def test_bad_type_text(self):
        for text, part in (("ROW<a:INT", "expected ',' or '>'"), ("ROW<a:INT;b:INT>", "expected ',' or '>'"), ("INT<LONG>", "after the type"),
                           ("MAP<INT>", "2 type parameters"), ("FOO", "unknown type FOO"),
                           ("PRIMITIVE_ARRAY<STRING>", "PRIMITIVE_ARRAY element"),
                           ("LIST<" * 64 + "INT" + ">" * 64, "deeper than 63")):
            with self.assertRaises(ValueError) as cm:
                type_info_bytes(text)
            self.assertIn(part, str(cm.exception))

    def test_mistakes_show_at_build_time(self):
        cases = [
            (dict(capacty=5), "unknown setting 'capacty'"),
            (dict(capacity=-1), "Capacity must be positive, got: -1"),
            (dict(capacity=2 ** 31), "capacity is out of range"),
            (dict(capacity="5"), "capacity must be an int"),
            (dict(capacity=True), "capacity must be an int"),
            (dict(timeout_ms=-5), "Timeout cannot be negative, got: -5 ms"),
            (dict(timeout_ms=1.5), "timeout_ms must be"),
            (dict(batch_size=8), "batch_size (8) is a batch-mode setting"),
            (dict(batch_timeout_ms=8), "batch_timeout_ms (8) is a batch-mode setting"),
            (dict(mode="BATCH", batch_size=0, timeout_ms=5), "Batch size must be positive, got: 0"),
            (dict(mode="BATCH", batch_size=4), "Timeout must be positive for async batch operations."),
            (dict(mode="BATCH", batch_size=4, timeout_ms=5, batch_timeout_ms=-1),
             "Batch timeout cannot be negative, got: -1 ms"),
            (dict(retry=RetryStrategy.fixed_delay(1, 1)),
             "Timeout should be configured when do async with retry."),
            (dict(retry="fixed"), "retry must be a fnworker.RetryStrategy"),
            (dict(output_mode="SORTED"), "unknown output_mode 'SORTED'"),
            (dict(on_timeout="RETRY"), "unknown on_timeout 'RETRY'"),
            (dict(mode="STREAM"), "unknown mode 'STREAM'"),
            (dict(target_latency_ms=50), "target_latency_ms (50) is a batch-mode setting"),
            (dict(mode="BATCH", batch_size=4, timeout_ms=5, target_latency_ms=-1),
             "target_latency_ms must be between 1 and 3600000 ms (0: a fixed batch size), got: -1"),
            (dict(mode="BATCH", batch_size=4, timeout_ms=5, target_latency_ms=3600001),
             "target_latency_ms must be between 1 and 3600000 ms"),
        ]
        for settings, part in cases:
            with self.assertRaises((ValueError, TypeError), msg=str(settings)) as cm:
                Operation("echo").with_settings(**settings)
            self.assertIn(part, str(cm.exception))

    def test_bad_operations_and_options(self):
        for make, part in ((lambda: Operation(""), "non-empty string"),
                           (lambda: Operation("echo", delay=5), "unknown option 'delay' for operation 'echo'"),
                           (lambda: Operation("identity", x=1), "its options are: none"),
                           (lambda: Operation("echo", delay_ms=[1]), "must be a str, int, float or bool")):
            with self.assertRaises((ValueError, TypeError)) as cm:
                make()
            self.assertIn(part, str(cm.exception))
        # other operations' options are the worker's to check
        self.assertIn('key: "url"', spec_text(Operation("http", url="http://x")))

    def test_bad_retry_strategies(self):
        for make, part in ((lambda: RetryStrategy.fixed_delay(0, 5), "max_attempts of the async retry strategy "
                            "'FIXED_DELAY' must be positive, got: 0"),
                           (lambda: RetryStrategy.fixed_delay(1, 0), "delay_ms"),
                           (lambda: RetryStrategy.exponential_backoff(1, 1, 0, 2.0), "max_delay_ms"),
                           (lambda: RetryStrategy.exponential_backoff(1, 1, 1, 0), "multiplier"),
                           (lambda: RetryStrategy.fixed_delay(1, 1, retry_on_error=False), "predicate"),
                           (lambda: RetryStrategy(7), "Unknown async retry strategy kind")):
            with self.assertRaises(ValueError) as cm:
                make()
            self.assertIn(part, str(cm.exception))


# Stand-ins for PyFlink's type classes (pyflink/common/typeinfo.py), which
# cannot be installed here: the same class names and the attributes the
# package reads, nothing else.
class _BasicType(object):
    def __init__(self, name):
        self.name = name


class BasicTypeInfo(object):
    def __init__(self, name):
        self._basic_type = _BasicType(name)


class RowTypeInfo(object):
    def __init__(self, field_types, field_names=None):
        self._field_types, self._field_names = field_types, field_names


class TupleTypeInfo(object):
    def __init__(self, field_types):
        self._field_types = field_types


class ListTypeInfo(object):
    def __init__(self, elem):
        self.elem_type = elem


class MapTypeInfo(object):
    def __init__(self, k, v):
        self._key_type_info, self._value_type_info = k, v


class PrimitiveArrayTypeInfo(object):
    def __init__(self, elem):
        self._element_type = elem


class DateTypeInfo(object):
    pass


class AvroTypeInfo(object):
    pass


class LocalTimeTypeInfo(object):   # PyFlink's one class for LocalDate, LocalTime and LocalDateTime
    def __init__(self, name):
        self._time_type = _BasicType(name)


class PyFlinkTypesTest(unittest.TestCase):
    def test_pyflink_types_map_by_class_name(self):
        t = RowTypeInfo([BasicTypeInfo("LONG"), ListTypeInfo(BasicTypeInfo("STRING")),
                         MapTypeInfo(BasicTypeInfo("STRING"), DateTypeInfo()),
                         TupleTypeInfo([PrimitiveArrayTypeInfo(BasicTypeInfo("BYTE"))])],
                        ["id", "tags", "m", "t"])
        self.assertEqual(type_info_bytes(t), type_info_bytes(
            "ROW<id:LONG,tags:LIST<STRING>,m:MAP<STRING,SQL_DATE>,t:TUPLE<PRIMITIVE_ARRAY<BYTE>>>"))

    def test_local_time_types_by_their_time_type(self):
        # found by tests/e2e/test_types.py: every LocalTimeTypeInfo was sent as LOCAL_TIME
        for name, text in (("LOCAL_DATE", "LOCAL_DATE"), ("LOCAL_TIME", "LOCAL_TIME"),
                           ("LOCAL_DATE_TIME", "LOCAL_DATETIME")):
            self.assertEqual(type_info_bytes(LocalTimeTypeInfo(name)), type_info_bytes(text))

    def test_unnamed_rows_and_lists_get_flinks_names(self):
        self.assertEqual(type_info_bytes(RowTypeInfo([BasicTypeInfo("INT"), BasicTypeInfo("STRING")])),
                         type_info_bytes("ROW<f0:INT,f1:STRING>"))
        self.assertEqual(type_info_bytes([BasicTypeInfo("INT")]), type_info_bytes("ROW<f0:INT>"))

    def test_unknown_types_leave_output_type_unset(self):
        self.assertIsNone(type_info_bytes(AvroTypeInfo()))
        self.assertIsNone(type_info_bytes(RowTypeInfo([AvroTypeInfo()], ["a"])))
        self.assertNotIn("output_type", spec_text(Operation("echo").with_settings(output_type=AvroTypeInfo())))


if __name__ == "__main__":
    unittest.main()
