"""What the helpers refuse when a job is built, and ``fnworker.check(env)``.

A TaskManager with ``PYFLINK_UDF_RUNNER_DIR`` launches fnworker for every
Python operator of every job (Flink's PythonEnvironmentManagerUtils reads the
variable from the TaskManager's environment), and fnworker runs only the
operations this package builds. So a job that would fail when it runs is
refused here, when it is built, with what to do instead:

* a stream the operation cannot take: a ``KeyedStream`` (PyFlink's ``key_by``
  inserts a Python operator), windowed, connected or broadcast streams;
* ``output_type=None`` for an operation that builds new values (PyFlink then
  declares PICKLED_BYTE_ARRAY, and fnworker does not write Python pickles);
  for the pass-through operations an output type other than the input's;
* an input of Python pickles for an operation that reads the values;
* ``python.execution-mode: thread`` (the function would run in the JVM's
  embedded Python, never in fnworker);
* any Python operator in the job that is not a fnworker operation, found by
  walking the Java transformations.

The checks that need the JVM run only on a PyFlink stream (one with a Java
side); every fact about PyFlink is named with its file and function."""

PASS_THROUGH = ("identity", "echo")

README = 'see docs/pyflink.md, "What the helpers refuse, and why"'

_NOT_A_DATASTREAM = {
    "KeyedStream": (
        "the input is a KeyedStream. PyFlink's key_by inserts a Python operator that computes the "
        "key (AddKey in pyflink/datastream/data_stream.py, DataStream.key_by), and a TaskManager "
        "whose Python worker is fnworker cannot run it; keyed streams, and Python functions next to "
        "fnworker operations, are a later feature. fnworker operations are stateless and need no "
        "key: call the helper on the DataStream before key_by, and spread the load with "
        "rebalance() or shuffle() (Java partitioners, no Python)"),
    "WindowedStream": (
        "the input is a WindowedStream; PyFlink windows run Python functions (and need key_by, "
        "which inserts a Python operator). Call the helper on a DataStream"),
    "AllWindowedStream": (
        "the input is an AllWindowedStream; PyFlink windows run Python functions. Call the helper "
        "on a DataStream"),
    "ConnectedStreams": (
        "the input is a ConnectedStreams; fnworker operations take one input. Call the helper on "
        "each DataStream, or union() them first"),
    "BroadcastConnectedStream": (
        "the input is a BroadcastConnectedStream, whose process() runs a Python function; call the "
        "helper on a DataStream"),
    "BroadcastStream": "the input is a BroadcastStream; call the helper on a DataStream",
}

# Names PyFlink gives the Python operators it inserts (pyflink/datastream/data_stream.py);
# the key_by, partition_custom and KeyedStream values names are read from
# PythonConfigUtil at run time.
_INSERTED_BY = {
    "Map": "DataStream.map, or the map PyFlink's print() (DataStream._align_output_type) or "
           "get_side_output() inserts",
    "FlatMap": "DataStream.flat_map",
    "Filter": "DataStream.filter",
    "Reduce": "KeyedStream.reduce (or sum/min/max/min_by/max_by)",
    "Extract-Timestamp": "assign_timestamps_and_watermarks with a Python TimestampAssigner",
    "Co-Map": "ConnectedStreams.map",
    "Co-Flat Map": "ConnectedStreams.flat_map",
}


def refuse_stream(where, data_stream):
    """A KeyedStream, windowed, connected or broadcast stream: TypeError."""
    for cls in type(data_stream).__mro__:
        reason = _NOT_A_DATASTREAM.get(cls.__name__)
        if reason is not None:
            raise TypeError("fnworker.%s: %s (%s)" % (where, reason, README))
    if not callable(getattr(data_stream, "process", None)):
        raise TypeError("fnworker.%s: expected a PyFlink DataStream, got %r" % (where, data_stream))


def refuse_output_type(where, operation, output_type):
    """output_type=None for an operation that builds new values: ValueError."""
    if output_type is None and operation.name not in PASS_THROUGH:
        raise ValueError(
            "fnworker.%s: operation '%s' builds new values, so it needs output_type, the PyFlink "
            "type of its results (e.g. Types.ROW_NAMED([...], [...])): with output_type=None "
            "PyFlink declares the output PICKLED_BYTE_ARRAY (pyflink/datastream/data_stream.py, "
            "_get_one_input_stream_operator), a Python pickle per value, which fnworker does not "
            "write (%s)" % (where, operation.name, README))


def refuse_in_job(where, data_stream, operation, output_type, function):
    """The checks that need PyFlink (a stream with a Java side): how PyFlink
    pickles the function, the execution mode, the input's type, the
    pass-through output type, Python operators in the job."""
    j_stream = getattr(data_stream, "_j_data_stream", None)
    if j_stream is None:
        return
    _refuse_by_value(where, function)
    j_env = j_stream.getExecutionEnvironment()
    _refuse_thread_mode(where, j_env)
    j_input_type = j_stream.getTransformation().getOutputType()
    if _is_pickled(j_input_type) and operation.name not in PASS_THROUGH:
        raise ValueError(
            "fnworker.%s: the input's values are Python pickles (its type is %s), which operation "
            "'%s' cannot read: fnworker never runs Python. Give the stream a type where it is made "
            "(env.from_collection(..., type_info=...), or output_type= on the operator that makes "
            "it) (%s)" % (where, j_input_type.toString(), operation.name, README))
    if operation.name in PASS_THROUGH and "output_type" not in operation.settings:
        j_output_type = _java_type(output_type)
        if not _same_type_for_python(j_input_type, j_output_type):
            raise ValueError(
                "fnworker.%s: operation '%s' passes its input through, so its output type must be "
                "the input's: pass output_type=<stream>.get_type() (input %s, output %s%s)"
                % (where, operation.name, j_input_type.toString(), j_output_type.toString(),
                   ", as PyFlink declares for output_type=None" if output_type is None else ""))
    offenders = _python_operators(j_env, [j_stream.getTransformation()])[1]
    if offenders:
        raise ValueError("fnworker.%s: %s" % (where, _offenders_text(offenders)))


def check(env_or_stream):
    """Refuses (ValueError) a job that has fnworker operations and any other
    Python operator, naming each such operator and the PyFlink call that
    likely made it. Call it after the job's last operator and before
    ``env.execute()``: it sees what the helpers cannot, e.g. a PyFlink
    print() or map() after a fnworker operation. Takes a
    StreamExecutionEnvironment or a DataStream; returns the number of
    fnworker operators found."""
    j_env = getattr(env_or_stream, "_j_stream_execution_environment", None)
    if j_env is None:
        j_stream = getattr(env_or_stream, "_j_data_stream", None)
        if j_stream is None:
            raise TypeError("fnworker.check takes a PyFlink StreamExecutionEnvironment or DataStream, "
                            "got %r" % (env_or_stream,))
        j_env = j_stream.getExecutionEnvironment()
    ours, offenders = _python_operators(j_env, [])
    if ours and offenders:
        raise ValueError("fnworker.check: the job runs fnworker operations, so " +
                         _offenders_text(offenders))
    return len(ours)


def _offenders_text(offenders):
    names = "; ".join("'%s' (transformation %d: %s)" % o for o in offenders)
    return ("the job has Python operators that are not fnworker operations: %s. On a TaskManager with "
            "PYFLINK_UDF_RUNNER_DIR every Python operator runs in fnworker, which runs only fnworker "
            "operations, so the job would fail when it runs (with operator chaining, the default, "
            "Flink fuses a Python operator into the fnworker operator next to it: "
            "PythonOperatorChainingOptimizer). Replace it with a fnworker operation or a Java one "
            "(fnworker.print instead of print(); execute_and_collect(), sink_to, add_sink); "
            "Python functions next to fnworker operations are a later feature (%s)"
            % (names, README))


def _refuse_by_value(where, function):
    # PyFlink pickles each function with cloudpickle.dumps (data_stream.py,
    # _create_j_data_stream_python_function_info); fnworker reads only the pickle that
    # refers to fnworker._payload.run_in_fnworker by name.
    import cloudpickle
    from ._payload import operation_spec_of
    if operation_spec_of(cloudpickle.dumps(function)) is None:
        raise ValueError(
            "fnworker.%s: cloudpickle pickles the fnworker package by value (it is run as "
            "__main__, copied into the job script, or registered with "
            "cloudpickle.register_pickle_by_value), so the payload is Python code that fnworker "
            "refuses to run. Import fnworker as a package from PYTHONPATH (or a copy of "
            "python/fnworker next to the job script) (%s)" % (where, README))


def _refuse_thread_mode(where, j_env):
    # As PyFlink reads it (pyflink/datastream/async_data_stream.py, AsyncDataStream._validate;
    # data_stream.py, _get_one_input_stream_operator picks the Embedded* operators on 'thread').
    from pyflink.java_gateway import get_gateway
    from pyflink.util.java_utils import get_j_env_configuration
    mode = get_j_env_configuration(j_env).get(
        get_gateway().jvm.org.apache.flink.python.PythonOptions.PYTHON_EXECUTION_MODE)
    if mode == "thread":
        raise ValueError(
            "fnworker.%s: python.execution-mode is 'thread': Flink would run the function in the "
            "JVM's embedded Python (EmbeddedPythonProcessOperator), never in fnworker, and the "
            "function raises there (PyFlink refuses async functions in thread mode too: "
            "AsyncDataStream._validate). Set python.execution-mode: process, the default (%s)"
            % (where, README))


def _java_type(output_type):
    """The Java TypeInformation PyFlink declares for output_type
    (_get_one_input_stream_operator: None is PICKLED_BYTE_ARRAY, a list a Row)."""
    from pyflink.common.typeinfo import RowTypeInfo, Types
    if output_type is None:
        output_type = Types.PICKLED_BYTE_ARRAY()
    elif isinstance(output_type, list):
        output_type = RowTypeInfo(output_type)
    return output_type.get_java_type_info()


def _same_type_for_python(j_a, j_b):
    """Whether Flink describes both types alike to a Python worker: the
    TypeInfo protos PythonTypeUtils.TypeInfoToProtoConverter makes for the
    worker's coders (a stream from to_data_stream is NOT NULL, the type
    get_type() gives back is not; both reach the worker as one ROW)."""
    from pyflink.java_gateway import get_gateway
    jvm = get_gateway().jvm
    convert = jvm.org.apache.flink.streaming.api.utils.PythonTypeUtils.TypeInfoToProtoConverter
    loader = jvm.Thread.currentThread().getContextClassLoader()
    try:
        return convert.toTypeInfoProto(j_a, loader).equals(convert.toTypeInfoProto(j_b, loader))
    except Exception:       # a type Flink cannot describe to Python: compare the Java types
        return j_a.equals(j_b)


def _is_pickled(j_type):
    # As DataStream._align_output_type tells a pickled stream (pyflink/datastream/data_stream.py).
    from pyflink.common.typeinfo import Types
    return j_type.getClass().isAssignableFrom(Types.PICKLED_BYTE_ARRAY().get_java_type_info().getClass())


def _python_operators(j_env, extra):
    """Walks the environment's transformations (and extra ones, with their
    inputs): ([fnworker operator names], [(name, id, what) of other Python
    operators])."""
    from py4j.java_gateway import get_java_class
    from pyflink.java_gateway import get_gateway

    jvm = get_gateway().jvm
    util = jvm.org.apache.flink.python.util.PythonConfigUtil
    ops = jvm.org.apache.flink.streaming.api.operators.python
    inserted = dict(_INSERTED_BY)
    inserted[util.STREAM_KEY_BY_MAP_OPERATOR_NAME] = "the key extractor PyFlink's key_by inserts"
    inserted[util.STREAM_PARTITION_CUSTOM_MAP_OPERATOR_NAME] = "partition_custom's partitioner"
    inserted[util.KEYED_STREAM_VALUE_OPERATOR_NAME] = (
        "the map PyFlink inserts to take the values out of a KeyedStream (its print, add_sink, "
        "union) or after partition_custom")

    classes = (get_java_class(jvm.org.apache.flink.streaming.api.operators.SimpleOperatorFactory),
               get_java_class(ops.AbstractPythonFunctionOperator),
               get_java_class(ops.embedded.AbstractEmbeddedPythonFunctionOperator),
               get_java_class(ops.DataStreamPythonFunctionOperator))
    what = {"table": "a Table API Python function, in a table converted with to_data_stream, "
                     "to_append_stream or to_changelog_stream",
            "broadcast": "a Python broadcast process function"}
    ours, offenders, seen = [], [], set()
    todo = list(j_env.getTransformations()) + list(extra)
    while todo:
        t = todo.pop()
        tid = t.getId()
        if tid in seen:
            continue
        seen.add(tid)
        todo.extend(t.getInputs())
        kind = _KINDS.get(tid)
        if kind is None:
            kind = _kind(t, util, classes)
            if len(_KINDS) >= 100000:
                _KINDS.clear()
            _KINDS[tid] = kind
        if kind == "fnworker":
            ours.append(t.getName())
        elif kind != "other":
            name = t.getName()
            offenders.append((name, tid, what.get(kind) or inserted.get(name, "a Python function")))
    offenders.sort(key=lambda o: o[1])
    return ours, offenders


# Transformation id (unique in the JVM, never reused) -> what _kind found; an operator and
# its payload do not change once built, so each is read over the gateway once.
_KINDS = {}


def _kind(t, util, classes):
    """'fnworker', 'python' (a DataStream Python function), 'table', 'broadcast' or 'other'."""
    from ._payload import operation_spec_of
    simple_factory, python_op, embedded_op, datastream_op = classes
    if "Python" in t.getClass().getSimpleName():     # PythonBroadcastStateTransformation & co.
        return "broadcast"
    try:
        factory = util.getOperatorFactory(t)
    except Exception:                                 # not a physical transformation
        return "other"
    if factory is None or not simple_factory.isInstance(factory):
        return "other"
    op = factory.getOperator()
    if not python_op.isInstance(op) or embedded_op.isInstance(op):
        return "other"
    if not datastream_op.isInstance(op):
        return "table"
    return "fnworker" if _all_fnworker(op.getPythonFunctionInfo(), operation_spec_of) else "python"


def _all_fnworker(info, operation_spec_of):
    """Whether a (possibly chained) Python function info holds fnworker payloads only."""
    while True:
        payload = info.getPythonFunction().getSerializedPythonFunction()
        if operation_spec_of(bytes(payload)) is None:
            return False
        inputs = info.getInputs()
        if len(inputs) == 0:
            return True
        info = inputs[0]
