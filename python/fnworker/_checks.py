"""What the helpers refuse when a job is built, and ``fnworker.check(env)``.

A TaskManager with ``PYFLINK_UDF_RUNNER_DIR`` launches fnworker for every
Python operator of every job (Flink's PythonEnvironmentManagerUtils reads the
variable from the TaskManager's environment). fnworker runs the operators this
package builds natively and relays every other Python operator to PyFlink's own
Python worker (docs/design/relay.md). What it cannot run is one descriptor that
mixes both: Flink fuses neighbouring Python operators into one
(PythonOperatorChainingOptimizer) unless their max parallelism differs, which
the helpers' marker sees to (``_datastream.MAX_PARALLELISM``). So a job that
would fail when it runs is refused here, when it is built, with what to do
instead:

* a stream the operation cannot take: windowed, connected or broadcast streams
  (a KeyedStream is taken: the operation sees the values);
* ``output_type=None`` for an operation that builds new values (PyFlink then
  declares PICKLED_BYTE_ARRAY, and fnworker does not write Python pickles);
  for the pass-through operations an output type other than the input's;
* an input of Python pickles for an operation that reads the values;
* ``python.execution-mode: thread`` (the function would run in the JVM's
  embedded Python, never in fnworker);
* a fnworker operator that Flink would fuse with a Python operator (someone
  gave the Python operator the same max parallelism), found by walking the
  Java transformations as the optimizer does.

The checks that need the JVM run only on a PyFlink stream (one with a Java
side); every fact about PyFlink is named with its file and function."""

PASS_THROUGH = ("identity", "echo")

README = 'see docs/pyflink.md, "What the helpers refuse, and why"'

_NOT_A_DATASTREAM = {
    "WindowedStream": (
        "the input is a WindowedStream, whose functions are window functions, which a fnworker "
        "operation is not. Apply the window first (reduce, aggregate, process, ...) and call the "
        "helper on the DataStream it returns, or on the KeyedStream before window()"),
    "AllWindowedStream": (
        "the input is an AllWindowedStream, whose functions are window functions, which a fnworker "
        "operation is not. Apply the window first and call the helper on the DataStream it "
        "returns"),
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
    """A windowed, connected or broadcast stream: TypeError."""
    for cls in type(data_stream).__mro__:
        reason = _NOT_A_DATASTREAM.get(cls.__name__)
        if reason is not None:
            raise TypeError("fnworker.%s: %s (%s)" % (where, reason, README))
    if not callable(getattr(data_stream, "process", None)):
        raise TypeError("fnworker.%s: expected a PyFlink DataStream, got %r" % (where, data_stream))


def is_keyed(data_stream):
    """Whether data_stream is a PyFlink KeyedStream (by class name: no PyFlink import)."""
    return any(cls.__name__ == "KeyedStream" for cls in type(data_stream).__mro__)


def refuse_output_type(where, operation, output_type):
    """output_type=None for an operation that builds new values: ValueError."""
    if output_type is None and operation.name not in PASS_THROUGH:
        raise ValueError(
            "fnworker.%s: operation '%s' builds new values, so it needs output_type, the PyFlink "
            "type of its results (e.g. Types.ROW_NAMED([...], [...])): with output_type=None "
            "PyFlink declares the output PICKLED_BYTE_ARRAY (pyflink/datastream/data_stream.py, "
            "_get_one_input_stream_operator), a Python pickle per value, which fnworker does not "
            "write (%s)" % (where, operation.name, README))


def _input_type(data_stream, j_stream, input_field):
    """The Java type of what the operation takes: the stream's, or the input_field of it; on a
    KeyedStream field f1 is the values' (its rows are Row(f0=key, f1=value); KeyedStream keeps
    the value type as _original_data_type_info, pyflink/datastream/data_stream.py,
    DataStream.key_by). A field the type lacks is left to the worker, which names it."""
    j_type = j_stream.getTransformation().getOutputType()
    if not input_field:
        return j_type
    original = getattr(data_stream, "_original_data_type_info", None)
    if is_keyed(data_stream) and input_field == "f1" and original is not None:
        return original.get_java_type_info()
    try:
        return j_type.getTypeAt(input_field)
    except Exception:
        return None


def refuse_in_job(where, data_stream, operation, output_type, function):
    """The checks that need PyFlink (a stream with a Java side): how PyFlink
    pickles the function, the execution mode, the input's type, the
    pass-through output type."""
    j_stream = getattr(data_stream, "_j_data_stream", None)
    if j_stream is None:
        return
    _refuse_by_value(where, function)
    j_env = j_stream.getExecutionEnvironment()
    _refuse_thread_mode(where, j_env)
    j_input_type = _input_type(data_stream, j_stream, operation.settings.get("input_field"))
    if j_input_type is None:
        return
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


def refuse_fused(where, result):
    """After a helper added its operator: ValueError if Flink would fuse it with the Python
    operator before it (one with the same max parallelism, set by hand)."""
    j_stream = getattr(result, "_j_data_stream", None)
    if j_stream is None:
        return
    ours, fusions = _walk(j_stream.getExecutionEnvironment(), [j_stream.getTransformation()],
                          only=j_stream.getTransformation().getId())
    if fusions:
        raise ValueError("fnworker.%s: %s" % (where, _fusion_text(fusions[0])))


def check(env_or_stream):
    """Refuses (ValueError) a job in which Flink would fuse a fnworker
    operator with a Python operator into one (PythonOperatorChainingOptimizer
    fuses neighbours with equal parallelism, max parallelism and slot sharing
    group; the helpers give fnworker operators max parallelism
    MAX_PARALLELISM so that this does not happen unless someone gives a
    Python operator the same value), naming both. Python operators elsewhere
    in the job are fine: fnworker relays them to PyFlink's Python worker.
    Call it after the job's last operator and before ``env.execute()``.
    Takes a StreamExecutionEnvironment or a DataStream; returns the number of
    fnworker operators found."""
    j_env = getattr(env_or_stream, "_j_stream_execution_environment", None)
    if j_env is None:
        j_stream = getattr(env_or_stream, "_j_data_stream", None)
        if j_stream is None:
            raise TypeError("fnworker.check takes a PyFlink StreamExecutionEnvironment or DataStream, "
                            "got %r" % (env_or_stream,))
        j_env = j_stream.getExecutionEnvironment()
    ours, fusions = _walk(j_env, [])
    if fusions:
        raise ValueError("fnworker.check: " + "; and ".join(_fusion_text(f) for f in fusions))
    return len(ours)


def _describe(op):
    name, tid, what = op
    return "'%s' (transformation %d%s)" % (name, tid, ": " + what if what else "")


def _fusion_text(fusion):
    up, down, max_par = fusion
    if down is None:
        return ("transformation %s already fuses fnworker operations with Python functions into one "
                "Python operator, which fnworker cannot run: Flink's chaining ran on this environment "
                "(env.get_execution_plan() or an earlier execute() applies "
                "PythonOperatorChainingOptimizer in place) while their max parallelism was equal. "
                "Build the job again in a fresh environment, with fnworker's helpers (%s)"
                % (_describe(up), README))
    from ._datastream import MAX_PARALLELISM
    fn, py = (up, down) if up[2] is None else (down, up)
    return ("Flink would fuse fnworker operator %s with Python operator %s into one Python operator, "
            "which fnworker cannot split between itself and PyFlink's Python worker: both have max "
            "parallelism %d, and PythonOperatorChainingOptimizer fuses neighbouring Python operators "
            "with equal parallelism, max parallelism and slot sharing group. fnworker's helpers give "
            "their operators max parallelism %d to keep them apart; do not give the Python operator "
            "the fnworker operator's max parallelism (or call start_new_chain() on the later of the "
            "two, which also breaks Flink's JVM task chain) (%s)"
            % (_describe(fn), _describe(py), max_par, MAX_PARALLELISM, README))

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


def _walk(j_env, extra, only=None):
    """Walks the environment's transformations (and extra ones, with their inputs):
    ([fnworker operator names], [fusions]); a fusion is (up, down, max parallelism) of a
    fnworker and a Python operator Flink would fuse, each (name, id, what; what None for the
    fnworker one), or (op, None, None) for a transformation that already fuses both. With
    only, just the pairs whose down operator is that transformation id."""
    from py4j.java_gateway import get_java_class
    from pyflink.java_gateway import get_gateway

    jvm = get_gateway().jvm
    util = jvm.org.apache.flink.python.util.PythonConfigUtil
    ops = jvm.org.apache.flink.streaming.api.operators.python
    process = ops.process
    transformations = jvm.org.apache.flink.streaming.api.transformations
    inserted = dict(_INSERTED_BY)
    inserted[util.STREAM_KEY_BY_MAP_OPERATOR_NAME] = "the key extractor PyFlink's key_by inserts"
    inserted[util.STREAM_PARTITION_CUSTOM_MAP_OPERATOR_NAME] = "partition_custom's partitioner"
    inserted[util.KEYED_STREAM_VALUE_OPERATOR_NAME] = (
        "the map PyFlink inserts to take the values out of a KeyedStream (its print, add_sink, "
        "union) or after partition_custom")
    java = {
        "simple_factory": get_java_class(jvm.org.apache.flink.streaming.api.operators.SimpleOperatorFactory),
        "python_op": get_java_class(ops.AbstractPythonFunctionOperator),
        "embedded_op": get_java_class(ops.embedded.AbstractEmbeddedPythonFunctionOperator),
        "datastream_op": get_java_class(ops.DataStreamPythonFunctionOperator),
        "one_input": get_java_class(transformations.OneInputTransformation),
        "partition": get_java_class(transformations.PartitionTransformation),
        "forward": get_java_class(jvm.org.apache.flink.streaming.runtime.partitioner.ForwardPartitioner),
        "down_op": get_java_class(process.ExternalPythonProcessOperator),
        "up_ops": [get_java_class(c) for c in (
            process.ExternalPythonProcessOperator, process.ExternalPythonKeyedProcessOperator,
            process.ExternalPythonCoProcessOperator, process.ExternalPythonKeyedCoProcessOperator)],
    }

    ours, fusions, seen, all_t, consumers = [], [], set(), [], {}
    todo = list(j_env.getTransformations()) + list(extra)
    while todo:
        t = todo.pop()
        tid = t.getId()
        if tid in seen:
            continue
        seen.add(tid)
        all_t.append(t)
        for i in t.getInputs():
            consumers.setdefault(i.getId(), set()).add(tid)
            todo.append(i)

    def kind(t):
        tid = t.getId()
        k = _KINDS.get(tid)
        if k is None:
            k = _kind(t, util, java)
            if len(_KINDS) >= 100000:
                _KINDS.clear()
            _KINDS[tid] = k
        return k

    def op(t):
        k = kind(t)
        name = t.getName()
        return (name, t.getId(), None if k == "fnworker" else inserted.get(name, "a Python function"))

    for t in all_t:
        k = kind(t)
        if k == "fnworker":
            ours.append(t.getName())
        if k == "mixed" and (only is None or t.getId() == only):
            fusions.append((op(t), None, None))
        if k not in ("fnworker", "python") or (only is not None and t.getId() != only):
            continue
        up = _python_input(t, util, java)
        if up is None or {k, kind(up)} != {"fnworker", "python"}:
            continue
        if _would_fuse(up, t, len(consumers.get(up.getId(), ())), java):
            fusions.append((op(up), op(t), t.getMaxParallelism()))
    fusions.sort(key=lambda f: f[0][1])
    return ours, fusions


def _python_input(t, util, java):
    """The Python operator PythonOperatorChainingOptimizer would try to fuse t into: t's input,
    looking through forward partitions only (chainWithInputIfPossible); None if there is none."""
    if not java["one_input"].isInstance(t):
        return None
    inputs = t.getInputs()
    if len(inputs) != 1:
        return None
    up = inputs[0]
    while not util.isPythonDataStreamOperator(up):
        if java["partition"].isInstance(up) and java["forward"].isInstance(up.getPartitioner()):
            up = up.getInputs()[0]
        else:
            return None
    return up


def _would_fuse(up, down, up_outputs, java):
    """PythonOperatorChainingOptimizer.isChainable, read in flink-python 1.20.5 and 2.3.0:
    equal parallelism, max parallelism and slot sharing group; chaining strategies (up not
    NEVER, down ALWAYS: a Python operator is never a source, so HEAD_WITH_SOURCES does not
    chain); process-mode operators, the down one an ExternalPythonProcessOperator; the up
    operator with exactly one consumer."""
    from pyflink.java_gateway import get_gateway
    util = get_gateway().jvm.org.apache.flink.python.util.PythonConfigUtil
    if (up.getParallelism() != down.getParallelism() or
            up.getMaxParallelism() != down.getMaxParallelism() or
            not up.getSlotSharingGroup().equals(down.getSlotSharingGroup()) or up_outputs != 1):
        return False
    up_f, down_f = util.getOperatorFactory(up), util.getOperatorFactory(down)
    if up_f.getChainingStrategy().name() == "NEVER" or down_f.getChainingStrategy().name() != "ALWAYS":
        return False
    if not (java["simple_factory"].isInstance(up_f) and java["simple_factory"].isInstance(down_f)):
        return False
    up_op, down_op = up_f.getOperator(), down_f.getOperator()
    return java["down_op"].isInstance(down_op) and any(c.isInstance(up_op) for c in java["up_ops"])


# Transformation id (unique in the JVM, never reused) -> what _kind found; an operator and
# its payload do not change once built, so each is read over the gateway once.
_KINDS = {}


def _kind(t, util, java):
    """'fnworker', 'python' (a DataStream Python function), 'mixed' (fnworker operations and
    Python functions already fused), 'table', 'broadcast' or 'other'."""
    from ._payload import operation_spec_of
    if "Python" in t.getClass().getSimpleName():     # PythonBroadcastStateTransformation & co.
        return "broadcast"
    try:
        factory = util.getOperatorFactory(t)
    except Exception:                                 # not a physical transformation
        return "other"
    if factory is None or not java["simple_factory"].isInstance(factory):
        return "other"
    op = factory.getOperator()
    if not java["python_op"].isInstance(op) or java["embedded_op"].isInstance(op):
        return "other"
    if not java["datastream_op"].isInstance(op):
        return "table"
    found = _fnworker_functions(op.getPythonFunctionInfo(), operation_spec_of)
    return "fnworker" if all(found) else "mixed" if any(found) else "python"


def _fnworker_functions(info, operation_spec_of):
    """For each function of a (possibly fused) Python function info, whether it is a fnworker
    payload."""
    found = []
    while True:
        payload = info.getPythonFunction().getSerializedPythonFunction()
        found.append(operation_spec_of(bytes(payload)) is not None)
        inputs = info.getInputs()
        if len(inputs) == 0:
            return found
        info = inputs[0]
