"""Helpers that put a fnworker Operation into a PyFlink job. Each calls
``data_stream.process(function, output_type)`` with a FnworkerFunction whose
pickle is the OperationSpec; their names and argument order are those of
PyFlink's ``AsyncDataStream`` (pyflink/datastream/async_data_stream.py), with
an Operation in place of the Python async function. Flink sends every one
as function type PROCESS; batch mode is chosen by the spec (mode BATCH).
Before it adds the operator, each refuses a job that would fail when it runs
(``_checks``)."""

from . import _checks
from ._payload import FnworkerFunction
from ._spec import NO_RETRY, Operation, millis


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
    _checks.refuse_output_type(where, operation, output_type)
    func = function(operation, output_type)
    _checks.refuse_in_job(where, data_stream, operation, output_type, func)
    result = data_stream.process(func, output_type)
    name = getattr(result, "name", None)
    if callable(name):
        result = name("fnworker:" + operation.name)
    return result


def _wait(where, data_stream, operation, output_mode, timeout, retry, capacity, output_type):
    op = _check(operation).with_settings(output_mode=output_mode, timeout_ms=millis(timeout, "timeout"),
                                 capacity=capacity, retry=retry, mode="PER_ELEMENT")
    return _add(data_stream, op, output_type, where)


def _wait_batch(where, data_stream, operation, output_mode, timeout, batch_size, batch_timeout,
                capacity, output_type):
    op = _check(operation).with_settings(output_mode=output_mode, timeout_ms=millis(timeout, "timeout"),
                                 batch_size=batch_size,
                                 batch_timeout_ms=millis(batch_timeout, "batch_timeout") or 0,
                                 capacity=capacity, mode="BATCH")
    return _add(data_stream, op, output_type, where)


def unordered_wait(data_stream, operation, timeout, capacity=100, output_type=None):
    """AsyncDataStream.unordered_wait: results leave as they complete."""
    return _wait("unordered_wait", data_stream, operation, "UNORDERED", timeout, NO_RETRY, capacity,
                 output_type)


def ordered_wait(data_stream, operation, timeout, capacity=100, output_type=None):
    """AsyncDataStream.ordered_wait: results keep input order."""
    return _wait("ordered_wait", data_stream, operation, "ORDERED", timeout, NO_RETRY, capacity,
                 output_type)


def unordered_wait_with_retry(data_stream, operation, timeout, async_retry_strategy,
                              capacity=100, output_type=None):
    """AsyncDataStream.unordered_wait_with_retry, with a fnworker.RetryStrategy."""
    return _wait("unordered_wait_with_retry", data_stream, operation, "UNORDERED", timeout,
                 async_retry_strategy, capacity, output_type)


def ordered_wait_with_retry(data_stream, operation, timeout, async_retry_strategy,
                            capacity=100, output_type=None):
    """AsyncDataStream.ordered_wait_with_retry, with a fnworker.RetryStrategy."""
    return _wait("ordered_wait_with_retry", data_stream, operation, "ORDERED", timeout,
                 async_retry_strategy, capacity, output_type)


def unordered_wait_batch(data_stream, operation, timeout, batch_size, batch_timeout=None,
                         capacity=100, output_type=None):
    """AsyncDataStream.unordered_wait_batch: calls of up to batch_size inputs."""
    return _wait_batch("unordered_wait_batch", data_stream, operation, "UNORDERED", timeout,
                       batch_size, batch_timeout, capacity, output_type)


def ordered_wait_batch(data_stream, operation, timeout, batch_size, batch_timeout=None,
                       capacity=100, output_type=None):
    """AsyncDataStream.ordered_wait_batch: batches, results in input order."""
    return _wait_batch("ordered_wait_batch", data_stream, operation, "ORDERED", timeout,
                       batch_size, batch_timeout, capacity, output_type)
