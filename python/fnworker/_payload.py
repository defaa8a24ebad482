"""The function object fnworker's helpers hand to PyFlink's DataStream.process.

PyFlink writes ``cloudpickle.dumps(function)`` into the function payload that
Flink sends to its Python worker. ``FnworkerFunction.__reduce__`` makes that
pickle a fixed tiny form: a reference to ``run_in_fnworker`` (this module)
applied to one bytes argument, the serialized ``fnworker.v1.OperationSpec``.
fnworker recognises exactly that form and runs the operation natively; it
never runs Python. Only if the job reaches PyFlink's own Python worker (no
``PYFLINK_UDF_RUNNER_DIR`` on the TaskManager) does Python unpickle it, and
then ``run_in_fnworker`` says what to configure.
``operation_spec_of`` tells such a pickle from any other (the build-time
checks read the Java operators' payloads with it).
"""

import codecs
import io
import pickle

NOT_IN_FNWORKER = (
    "this PyFlink function was built by the fnworker package: it runs only in fnworker, a native "
    "worker that replaces PyFlink's Python worker, but the job reached the Python worker. Set "
    "PYFLINK_UDF_RUNNER_DIR in the TaskManager's environment to the directory holding fnworker's "
    "pyflink-udf-runner.sh and fnworker binary (e.g. "
    "containerized.taskmanager.env.PYFLINK_UDF_RUNNER_DIR: /opt/fnworker), keep "
    "python.execution-mode: process, and resubmit the job.")


def run_in_fnworker(operation_spec):
    """What the payload pickle calls when unpickled. fnworker reads the
    argument without calling anything; Python reaching here is a
    configuration error, reported at once."""
    raise RuntimeError(NOT_IN_FNWORKER + " (OperationSpec of %d bytes)" % len(operation_spec))


class FnworkerFunction(object):
    """A PyFlink function whose pickle is fnworker's payload (see the module
    text). Hand it to ``DataStream.process``; it is not callable in Python."""

    __slots__ = ("operation_spec",)

    def __init__(self, operation_spec):
        if not isinstance(operation_spec, (bytes, bytearray)) or not operation_spec:
            raise TypeError("FnworkerFunction needs the OperationSpec bytes")
        self.operation_spec = bytes(operation_spec)

    def __reduce__(self):
        return (run_in_fnworker, (self.operation_spec,))

    def __repr__(self):
        return "FnworkerFunction(<OperationSpec of %d bytes>)" % len(self.operation_spec)


class _Payload(object):
    __slots__ = ("spec",)

    def __init__(self, spec):
        if not isinstance(spec, (bytes, bytearray)):
            raise pickle.UnpicklingError("not fnworker's payload: run_in_fnworker of %s"
                                         % type(spec).__name__)
        self.spec = bytes(spec)


class _PayloadUnpickler(pickle.Unpickler):
    """Resolves only run_in_fnworker (to _Payload) and, for protocol 2's
    bytes, _codecs.encode; any other global fails the load, so nothing else
    is imported or called."""

    def find_class(self, module, name):
        if (module, name) == (__name__, "run_in_fnworker"):
            return _Payload
        if (module, name) == ("_codecs", "encode"):
            return codecs.encode
        raise pickle.UnpicklingError("not fnworker's payload: %s.%s" % (module, name))


def operation_spec_of(payload):
    """The OperationSpec bytes of a FnworkerFunction's pickle, or None for
    any other payload (a Python function, a class, not a pickle)."""
    try:
        value = _PayloadUnpickler(io.BytesIO(payload)).load()
    except Exception:
        return None
    return value.spec if isinstance(value, _Payload) else None
