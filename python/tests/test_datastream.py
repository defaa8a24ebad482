"""The helpers against a stand-in DataStream that records what process()
receives: each passes a FnworkerFunction and the PyFlink output type, with
the settings of PyFlink's AsyncDataStream method of the same name in the
OperationSpec (checked with protoc --decode), and gives the operator the
max-parallelism marker; on a stand-in KeyedStream they go through
DataStream.process (KeyedStream.process takes only KeyedProcessFunctions),
the spec names input_field "f1", and a pass-through operation's output type
defaults to the values' type."""

import datetime
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fnworker  # noqa: E402
from fnworker import Operation, RetryStrategy  # noqa: E402
from protoc_decode import decode, flat  # noqa: E402


class DataStream(object):
    """A stand-in for pyflink.datastream.DataStream (PyFlink cannot be
    installed here): process() only records its arguments, and
    set_max_parallelism the value (named like PyFlink's class: the package
    finds DataStream.process by name)."""

    def __init__(self):
        self.calls = []
        self.max_parallelism = None

    def process(self, func, output_type=None):
        self.calls.append((func, output_type))
        return self

    def set_max_parallelism(self, value):
        self.max_parallelism = value
        return self


StandInDataStream = DataStream


class KeyedStream(DataStream):
    """A stand-in for PyFlink's KeyedStream: its process() refuses what is not
    a KeyedProcessFunction, as PyFlink's does; it keeps the values' type."""

    def __init__(self, original_data_type_info):
        super(KeyedStream, self).__init__()
        self._original_data_type_info = original_data_type_info

    def process(self, func, output_type=None):
        raise TypeError("KeyedProcessFunction is required for KeyedStream.")


class StandInType(object):
    """A stand-in PyFlink type the package does not map (output_type stays unset)."""


def run(helper, *args, **kwargs):
    ds = StandInDataStream()
    assert helper(ds, *args, **kwargs) is ds
    assert len(ds.calls) == 1
    assert ds.max_parallelism == fnworker.MAX_PARALLELISM == 32768
    func, output_type = ds.calls[0]
    assert isinstance(func, fnworker.FnworkerFunction)
    return flat(decode(func.operation_spec)), output_type, func


class HelpersTest(unittest.TestCase):
    def test_process_uses_the_operations_own_settings(self):
        t = StandInType()
        text, output_type, func = run(fnworker.process, Operation("echo").with_settings(capacity=3), t)
        self.assertIs(output_type, t)
        self.assertEqual(text, 'operation: "echo" capacity: 3')
        self.assertEqual(func.__reduce__(), (fnworker.run_in_fnworker, (func.operation_spec,)))

    def test_wait_helpers(self):
        op = Operation("echo", delay_ms=5)
        cases = [
            (fnworker.unordered_wait, (op, 5000), "output_mode: UNORDERED capacity: 100 timeout_ms: 5000"),
            (fnworker.ordered_wait, (op, 5000, 10), "capacity: 10 timeout_ms: 5000"),
            (fnworker.unordered_wait_with_retry, (op, 5000, RetryStrategy.fixed_delay(2, 50), 10),
             "output_mode: UNORDERED capacity: 10 timeout_ms: 5000 retry { kind: FIXED_DELAY max_attempts: 2 "
             "delay_ms: 50 retry_on_error: true }"),
            (fnworker.ordered_wait_with_retry, (op, 5000, RetryStrategy.exponential_backoff(2, 50, 400, 2.0)),
             "capacity: 100 timeout_ms: 5000 retry { kind: EXPONENTIAL_BACKOFF max_attempts: 2 delay_ms: 50 "
             "max_delay_ms: 400 multiplier: 2 retry_on_error: true }"),
        ]
        for helper, args, settings in cases:
            text, output_type, _ = run(helper, *args, output_type=None)
            self.assertIsNone(output_type)
            self.assertEqual(text, 'operation: "echo" options { key: "delay_ms" value: "5" } %s mode: PER_ELEMENT'
                             % settings, helper.__name__)

    def test_batch_helpers(self):
        op = Operation("echo")
        text, _, _ = run(fnworker.unordered_wait_batch, op, 1000, 64, 5, 500)
        self.assertEqual(text, 'operation: "echo" output_mode: UNORDERED capacity: 500 timeout_ms: 1000 '
                               'batch_size: 64 batch_timeout_ms: 5 mode: BATCH')
        text, _, _ = run(fnworker.ordered_wait_batch, op, timeout=1000, batch_size=8)
        self.assertEqual(text, 'operation: "echo" capacity: 100 timeout_ms: 1000 batch_size: 8 mode: BATCH')

    def test_batch_size_auto(self):
        op = Operation("echo")
        text, _, _ = run(fnworker.unordered_wait_batch, op, 1000, "auto", capacity=2048, target_latency_ms=50)
        self.assertEqual(text, 'operation: "echo" output_mode: UNORDERED capacity: 2048 timeout_ms: 1000 '
                               'batch_size: 256 mode: BATCH target_latency_ms: 50')
        text, _, _ = run(fnworker.ordered_wait_batch, op, 1000, "auto", 20, 512, target_latency_ms=40,
                         max_batch_size=64)
        self.assertEqual(text, 'operation: "echo" capacity: 512 timeout_ms: 1000 batch_size: 64 '
                               'batch_timeout_ms: 20 mode: BATCH target_latency_ms: 40')
        # a fixed batch_size with a target: adaptive up to it
        text, _, _ = run(fnworker.ordered_wait_batch, op, 1000, 32, target_latency_ms=datetime.timedelta(seconds=1))
        self.assertIn("batch_size: 32 mode: BATCH target_latency_ms: 1000", text)
        for kwargs, part in ((dict(batch_size="auto"), 'batch_size="auto" needs target_latency_ms'),
                             (dict(batch_size="big", target_latency_ms=5), 'batch_size must be an int or "auto"'),
                             (dict(batch_size=8, max_batch_size=64, target_latency_ms=5),
                              'max_batch_size goes with batch_size="auto"'),
                             (dict(batch_size="auto", target_latency_ms=-5),
                              'batch_size="auto" needs target_latency_ms')):
            with self.assertRaises(ValueError, msg=str(kwargs)) as cm:
                run(fnworker.unordered_wait_batch, op, 1000, **kwargs)
            self.assertIn(part, str(cm.exception))

    def test_pyflink_argument_order(self):
        # AsyncDataStream.unordered_wait(data_stream, async_function, timeout, capacity=100, output_type=None)
        t = StandInType()
        text, output_type, _ = run(fnworker.unordered_wait, Operation("echo"), 10, 20, t)
        self.assertIs(output_type, t)
        self.assertIn("capacity: 20 timeout_ms: 10", text)
        # AsyncDataStream.ordered_wait_batch(data_stream, f, timeout, batch_size, batch_timeout=None,
        #                                    capacity=100, output_type=None)
        text, output_type, _ = run(fnworker.ordered_wait_batch, Operation("echo"), 10, 4, None, 30, t)
        self.assertIs(output_type, t)
        self.assertIn("capacity: 30 timeout_ms: 10 batch_size: 4 mode: BATCH", text)

    def test_output_type_goes_into_the_spec(self):
        from test_spec import BasicTypeInfo, RowTypeInfo
        t = RowTypeInfo([BasicTypeInfo("STRING"), BasicTypeInfo("LONG")], ["name", "id"])
        text, output_type, _ = run(fnworker.process, Operation("project", fields="name,id"), t)
        self.assertIs(output_type, t)
        self.assertIn('output_type { row_type_info { fields { field_name: "name" field_type { type_name: STRING', text)
        # a text-form type in the settings wins over the PyFlink one
        op = Operation("project", fields="name,id").with_settings(output_type="ROW<n:STRING,i:LONG>")
        text, _, _ = run(fnworker.process, op, t)
        self.assertIn('field_name: "n"', text)

    def test_keyed_stream_takes_the_values(self):
        from test_spec import BasicTypeInfo, RowTypeInfo
        value_type = RowTypeInfo([BasicTypeInfo("STRING"), BasicTypeInfo("LONG")], ["name", "id"])
        helpers = [(fnworker.unordered_wait, (5000,)), (fnworker.ordered_wait, (5000,)),
                   (fnworker.unordered_wait_batch, (5000, 8)), (fnworker.ordered_wait_batch, (5000, 8)),
                   (fnworker.unordered_wait_with_retry, (5000, RetryStrategy.fixed_delay(2, 50))),
                   (fnworker.ordered_wait_with_retry, (5000, RetryStrategy.fixed_delay(2, 50))),
                   (fnworker.process, ())]
        for helper, args in helpers:
            keyed = KeyedStream(value_type)
            self.assertIs(helper(keyed, Operation("echo"), *args), keyed, helper.__name__)
            ((func, output_type),) = keyed.calls
            self.assertIs(output_type, value_type, helper.__name__)   # the values' type by default
            self.assertEqual(keyed.max_parallelism, 32768, helper.__name__)
            text = flat(decode(func.operation_spec))
            self.assertTrue(text.endswith('input_field: "f1"'), "%s: %s" % (helper.__name__, text))
            self.assertIn('field_name: "name"', text)
        # an operation that builds new values still needs its output type
        with self.assertRaises(ValueError) as cm:
            fnworker.unordered_wait(KeyedStream(value_type), Operation("project", fields="id"), 5000)
        self.assertIn("needs output_type", str(cm.exception))
        out = RowTypeInfo([BasicTypeInfo("LONG")], ["id"])
        keyed = KeyedStream(value_type)
        fnworker.unordered_wait(keyed, Operation("project", fields="id"), 5000, output_type=out)
        ((func, output_type),) = keyed.calls
        self.assertIs(output_type, out)
        self.assertIn('input_field: "f1"', flat(decode(func.operation_spec)))
        # an input_field the user chose stands (here the key)
        keyed = KeyedStream(value_type)
        fnworker.process(keyed, Operation("echo").with_settings(input_field="f0"), BasicTypeInfo("LONG"))
        self.assertIn('input_field: "f0"', flat(decode(keyed.calls[0][0].operation_spec)))
        # a plain DataStream's spec has no input_field
        text, _, _ = run(fnworker.unordered_wait, Operation("echo"), 5000)
        self.assertNotIn("input_field", text)

    def test_other_streams_are_refused(self):
        for name in ("WindowedStream", "AllWindowedStream", "ConnectedStreams", "BroadcastStream"):
            stream = type(name, (object,), {"process": lambda self, f, t=None: self})()
            with self.assertRaises(TypeError) as cm:
                fnworker.unordered_wait(stream, Operation("echo"), 5000)
            self.assertIn("the input is a", str(cm.exception))

    def test_mistakes(self):
        ds = StandInDataStream()
        with self.assertRaises(TypeError) as cm:
            fnworker.unordered_wait(ds, lambda x: x, 1000)
        self.assertIn("native operations", str(cm.exception))
        with self.assertRaises(TypeError):
            fnworker.process(ds, Operation("echo"), "ROW<a:INT>")
        with self.assertRaises(ValueError) as cm:
            fnworker.unordered_wait_batch(ds, Operation("echo"), 1000, 0)
        self.assertIn("Batch size must be positive, got: 0", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            fnworker.ordered_wait_with_retry(ds, Operation("echo"), 0, RetryStrategy.fixed_delay(1, 1))
        self.assertIn("Timeout should be configured when do async with retry.", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            fnworker.unordered_wait(ds, Operation("echo"), "5s")
        self.assertIn("timeout must be", str(cm.exception))
        self.assertEqual(ds.calls, [])


if __name__ == "__main__":
    unittest.main()
