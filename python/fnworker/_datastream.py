"""Helpers that put a fnworker Operation into a PyFlink job. Each calls
``data_stream.process(function, output_type)`` with a FnworkerFunction whose
pickle is the OperationSpec; their names and argument order are those of
PyFlink's ``AsyncDataStream`` (pyflink/datastream/async_data_stream.py), with
an Operation in place of the Python async function. Flink sends every one
as function type PROCESS; batch mode is chosen by the spec (mode BATCH).
Before it adds the operator, each refuses a job that would fail when it runs
(``_checks``).

Every operator they add gets max parallelism MAX_PARALLELISM (the marker,
docs/pyflink.md "Mixed chains"). On a KeyedStream they do what PyFlink's
AsyncDataStream does (``DataStream.process`` on the Java KeyedStream: a
PROCESS operator whose input rows are key_by's Row(f0=<key>, f1=<value>)),
and set the spec's input_field "f1", so that the operation takes the value,
as on the stream before key_by; for the pass-through operations output_type
then defaults to the value's type (``KeyedStream._original_data_type_info``)."""

from . import _checks
from ._payload import FnworkerFunction
from ._spec import NO_RETRY, Operation, millis, with_resilience

# The marker: the max parallelism of every fnworker operator. flink-python's
# PythonOperatorChainingOptimizer.isChainable fuses a Python operator into its
# Python input only when both have the same max parallelism (as their
# transformations hold it: -1 unless set on the operator itself). So Flink never
# fuses a fnworker operator with a Python function into one descriptor (which
# fnworker runs natively while PyFlink's Python worker runs the other), while two
# fnworker operators in a row, both at this value, still fuse; the JVM task chain
# is not affected. 32768 is Flink's upper bound (Transformation's
# UPPER_BOUND_MAX_PARALLELISM), so it never limits the parallelism.
MAX_PARALLELISM = 32768

# PyFlink's key_by rows: Row(f0=<key>, f1=<value>) (AddKey, pyflink/datastream/data_stream.py).
KEYED_VALUE_FIELD = "f1"


def _check(operation):
    if not isinstance(operation, Operation):
        raise TypeError("expected a fnworker.Operation, got %r (fnworker runs native operations, "
                        "not Python functions)" % (operation,))
    return operation


def function(operation, output_type=None):
    """The FnworkerFunction for an operation; output_type (a PyFlink type)
    goes into the spec unless the operation's settings already name one."""
    _check(operation)
    if output_type is not None and "output_type" not in operation.settings:
        operation = operation.with_settings(output_type=output_type)
    return FnworkerFunction(operation.to_spec())


def process(data_stream, operation, output_type=None):
    """``data_stream.process`` running the operation with its own settings;
    the operator is named ``fnworker:<operation>`` in Flink's UI."""
    return _add(data_stream, operation, output_type, "process")


def _add(data_stream, operation, output_type, where):
    _check(operation)
    if isinstance(output_type, str):
        raise TypeError("output_type here is PyFlink's (a Types.* object), which Flink needs too; "
                        "put a text-form type into Operation.with_settings(output_type=...) instead")
    _checks.refuse_stream(where, data_stream)
    keyed = _checks.is_keyed(data_stream)
    if keyed:
        if "input_field" not in operation.settings:      # an explicit choice (e.g. "f0") stands
            operation = operation.with_settings(input_field=KEYED_VALUE_FIELD)
        if (output_type is None and operation.name in _checks.PASS_THROUGH and
                operation.settings["input_field"] == KEYED_VALUE_FIELD):
            output_type = getattr(data_stream, "_original_data_type_info", None)
    _checks.refuse_output_type(where, operation, output_type)
    func = function(operation, output_type)
    _checks.refuse_in_job(where, data_stream, operation, output_type, func)
    # KeyedStream.process takes only a KeyedProcessFunction; PyFlink's AsyncDataStream adds
    # its PROCESS operator to a KeyedStream through DataStream's own process path.
    process = _datastream_process(data_stream) if keyed else data_stream.process
    result = process(func, output_type)
    set_max = getattr(result, "set_max_parallelism", None)
    if callable(set_max):
        set_max(MAX_PARALLELISM)
    name = getattr(result, "name", None)
    if callable(name):
        result = name("fnworker:" + operation.name)
    _checks.refuse_fused(where, result)
    return result


def _datastream_process(keyed_stream):
    """DataStream.process bound to a KeyedStream (found by name: the package does not import
    PyFlink)."""
    for cls in type(keyed_stream).__mro__:
        if cls.__name__ == "DataStream":
            return cls.process.__get__(keyed_stream)
    raise TypeError("expected a PyFlink KeyedStream, got %r" % (keyed_stream,))


def _wait(where, data_stream, operation, output_mode, timeout, retry, capacity, output_type):
    op = _check(operation).with_settings(output_mode=output_mode, timeout_ms=millis(timeout, "timeout"),
                                 capacity=capacity, retry=retry, mode="PER_ELEMENT")
    return _add(data_stream, op, output_type, where)


def _wait_batch(where, data_stream, operation, output_mode, timeout, batch_size, batch_timeout,
                capacity, output_type, target_latency_ms=None, max_batch_size=None):
    settings = dict(output_mode=output_mode, timeout_ms=millis(timeout, "timeout"), batch_size=batch_size,
                    batch_timeout_ms=millis(batch_timeout, "batch_timeout") or 0, capacity=capacity,
                    mode="BATCH")
    if target_latency_ms is not None:
        settings["target_latency_ms"] = millis(target_latency_ms, "target_latency_ms")
    if max_batch_size is not None:
        settings["max_batch_size"] = max_batch_size
    op = _check(operation).with_settings(**settings)
    return _add(data_stream, op, output_type, where)


def unordered_wait(data_stream, operation, timeout, capacity=100, output_type=None, **resilience):
    """AsyncDataStream.unordered_wait: results leave as they complete."""
    operation = with_resilience(operation, resilience, "unordered_wait")
    return _wait("unordered_wait", data_stream, operation, "UNORDERED", timeout, NO_RETRY, capacity,
                 output_type)


def ordered_wait(data_stream, operation, timeout, capacity=100, output_type=None, **resilience):
    """AsyncDataStream.ordered_wait: results keep input order."""
    operation = with_resilience(operation, resilience, "ordered_wait")
    return _wait("ordered_wait", data_stream, operation, "ORDERED", timeout, NO_RETRY, capacity,
                 output_type)


def unordered_wait_with_retry(data_stream, operation, timeout, async_retry_strategy,
                              capacity=100, output_type=None, **resilience):
    """AsyncDataStream.unordered_wait_with_retry, with a fnworker.RetryStrategy."""
    operation = with_resilience(operation, resilience, "unordered_wait_with_retry")
    return _wait("unordered_wait_with_retry", data_stream, operation, "UNORDERED", timeout,
                 async_retry_strategy, capacity, output_type)


def ordered_wait_with_retry(data_stream, operation, timeout, async_retry_strategy,
                            capacity=100, output_type=None, **resilience):
    """AsyncDataStream.ordered_wait_with_retry, with a fnworker.RetryStrategy."""
    operation = with_resilience(operation, resilience, "ordered_wait_with_retry")
    return _wait("ordered_wait_with_retry", data_stream, operation, "ORDERED", timeout,
                 async_retry_strategy, capacity, output_type)


def unordered_wait_batch(data_stream, operation, timeout, batch_size, batch_timeout=None,
                         capacity=100, output_type=None, target_latency_ms=None, max_batch_size=None,
                         **resilience):
    """AsyncDataStream.unordered_wait_batch: calls of up to batch_size inputs.
    batch_size="auto" with target_latency_ms (ms, or a Time/Duration) sizes
    each batch (1 .. max_batch_size, default 256) so that an element's time
    from admission to result stays within the target; capacity / the
    largest batch is how many calls run at once."""
    operation = with_resilience(operation, resilience, "unordered_wait_batch")
    return _wait_batch("unordered_wait_batch", data_stream, operation, "UNORDERED", timeout,
                       batch_size, batch_timeout, capacity, output_type, target_latency_ms,
                       max_batch_size)


def ordered_wait_batch(data_stream, operation, timeout, batch_size, batch_timeout=None,
                       capacity=100, output_type=None, target_latency_ms=None, max_batch_size=None,
                       **resilience):
    """AsyncDataStream.ordered_wait_batch: batches, results in input order;
    batch_size="auto" as in unordered_wait_batch."""
    operation = with_resilience(operation, resilience, "ordered_wait_batch")
    return _wait_batch("ordered_wait_batch", data_stream, operation, "ORDERED", timeout,
                       batch_size, batch_timeout, capacity, output_type, target_latency_ms,
                       max_batch_size)
