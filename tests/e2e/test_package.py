"""The fnworker package against real PyFlink: what the helpers refuse when a
job is built (python/fnworker/_checks.py), fnworker.check(env), the
max-parallelism marker as Flink's chaining sees it, and KeyedStream input. Building
a job needs the gateway JVM but does not run it, so most cases are fast; the
last ones run a job to show that what the checks let through works."""

import cloudpickle
import pytest
from pyflink.common import Configuration, Row, Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.common.typeinfo import Types as T
from pyflink.datastream import OutputTag, ProcessFunction, StreamExecutionEnvironment
from pyflink.datastream.functions import BroadcastProcessFunction, CoMapFunction
from pyflink.datastream.state import MapStateDescriptor
from pyflink.datastream.window import CountTumblingWindowAssigner

import fnworker
from fnworker import Operation
from fnw_e2e import collect

ROW = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
NAMES = Types.ROW_NAMED(["name"], [Types.STRING()])
ECHO = Operation("echo")
PROJECT = Operation("project", fields="name")


def rows(env):
    return env.from_collection([(1, "a"), (2, "b")], type_info=ROW)


def operator_names(env):
    return [t.getName() for t in env._j_stream_execution_environment.getTransformations()]


@pytest.mark.smoke
def test_keyed_stream_is_taken_and_the_operation_sees_the_values(env):
    """On a KeyedStream the helper adds a PROCESS operator on the Java KeyedStream (as PyFlink's
    AsyncDataStream does), whose input rows are key_by's Row(f0=<key>, f1=<value>); its spec
    names input_field "f1", and a pass-through operation's output type is the values'."""
    from fnworker._payload import operation_spec_of
    keyed = rows(env).key_by(lambda r: r[0], key_type=Types.LONG())
    out = fnworker.ordered_wait(keyed, ECHO, Time.seconds(5))
    assert out.get_type() == ROW
    t = out._j_data_stream.getTransformation()
    assert t.getName() == "fnworker:echo" and t.getMaxParallelism() == fnworker.MAX_PARALLELISM
    assert str(t.getInputs()[0].getOutputType()) == "Row(f0: Long, f1: Row(id: Long, name: String))"
    payload = bytes(t.getOperator().getPythonFunctionInfo().getPythonFunction().getSerializedPythonFunction())
    assert operation_spec_of(payload).endswith(b"\x62\x02f1")     # field 12, "f1"
    with pytest.raises(ValueError, match="operation 'project' builds new values"):
        fnworker.unordered_wait(keyed, PROJECT, Time.seconds(5))
    # an input_field of the user's own (the key) is kept and checked as that field's type
    key = fnworker.process(keyed, Operation("identity").with_settings(input_field="f0"), Types.LONG())
    assert key.get_type() == Types.LONG()
    with pytest.raises(ValueError, match="passes its input through.*input Long, output String"):
        fnworker.process(keyed, Operation("identity").with_settings(input_field="f0"), Types.STRING())
    assert fnworker.check(env) == 2


def test_connected_streams_are_refused(env):
    ds = rows(env)
    with pytest.raises(TypeError, match="fnworker.process: the input is a ConnectedStreams"):
        fnworker.process(ds.connect(ds), PROJECT, NAMES)


@pytest.mark.smoke
@pytest.mark.parametrize("op", [PROJECT, Operation("redis", address="127.0.0.1:1", command="GET k"),
                                Operation("http", url="http://127.0.0.1:1/")])
def test_output_type_none_is_refused_for_operations_that_build_values(env, op):
    with pytest.raises(ValueError) as e:
        fnworker.unordered_wait(rows(env), op, Time.seconds(5))
    msg = str(e.value)
    assert msg.startswith("fnworker.unordered_wait: operation '%s' builds new values, so it needs "
                          "output_type" % op.name)
    assert "PICKLED_BYTE_ARRAY" in msg
    assert operator_names(env) == []       # nothing was added to the job


@pytest.mark.smoke
def test_pass_through_output_type_must_be_the_inputs(env):
    ds = rows(env)
    with pytest.raises(ValueError) as e:
        fnworker.ordered_wait(ds, ECHO, Time.seconds(5))
    assert str(e.value) == (
        "fnworker.ordered_wait: operation 'echo' passes its input through, so its output type must "
        "be the input's: pass output_type=<stream>.get_type() (input Row(id: Long, name: String), "
        "output PickledByteArrayTypeInfo, as PyFlink declares for output_type=None)")
    with pytest.raises(ValueError, match="operation 'identity' passes its input through"):
        fnworker.process(ds, Operation("identity"), NAMES)
    out = fnworker.process(ds, Operation("identity"), ds.get_type())
    assert operator_names(env) == ["fnworker:identity"]
    assert out.get_type() == ROW


def test_pickled_input_is_refused_for_operations_that_read_values(env):
    ds = env.from_collection([(1, "a")])             # no type_info: Python pickles
    with pytest.raises(ValueError) as e:
        fnworker.process(ds, PROJECT, NAMES)
    assert str(e.value).startswith(
        "fnworker.process: the input's values are Python pickles (its type is "
        "PickledByteArrayTypeInfo), which operation 'project' cannot read")


@pytest.mark.smoke
def test_thread_mode_is_refused(runner_dir):
    config = Configuration()
    config.set_string("python.execution-mode", "thread")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    with pytest.raises(ValueError) as e:
        fnworker.ordered_wait(rows(env), ECHO, Time.seconds(5), output_type=ROW)
    msg = str(e.value)
    assert msg.startswith("fnworker.ordered_wait: python.execution-mode is 'thread'")
    assert "EmbeddedPythonProcessOperator" in msg and "python.execution-mode: process" in msg


def plan(env):
    """What Flink makes of the job: its operators after PythonOperatorChainingOptimizer (fused
    Python operators are one, named "A, B"), sorted, and the JVM tasks (JobGraph vertices)."""
    from pyflink.java_gateway import get_gateway
    j_graph = env._generate_stream_graph(clear_transformations=False)
    try:
        j_job = j_graph.getJobGraph()
    except Exception:                                 # Flink 2.x
        j_job = get_gateway().jvm.org.apache.flink.streaming.api.graph.StreamingJobGraphGenerator \
            .createJobGraph(j_graph)
    return (sorted(n.getOperatorName() for n in j_graph.getStreamNodes().toArray()),
            [v.getName() for v in j_job.getVerticesAsArray()])


@pytest.mark.smoke
def test_marker_keeps_python_operators_apart_and_the_task_whole(env):
    """Python map -> fnworker op -> fnworker op -> Python map: Flink fuses the two fnworker
    operators (both at max parallelism 32768) and neither Python map into them, and the JVM
    keeps one task (PythonOperatorChainingOptimizer.isChainable; Flink's own chaining does not
    look at max parallelism)."""
    a = rows(env).map(lambda r: r, output_type=ROW).name("A")
    b = fnworker.unordered_wait(a, ECHO, Time.seconds(5), output_type=ROW)
    c = fnworker.process(b, PROJECT, NAMES)
    c.map(lambda r: r, output_type=NAMES).name("D")._j_data_stream.print()
    assert fnworker.check(env) == 2
    operators, tasks = plan(env)
    assert operators == ["A", "D", "Sink: Print to Std. Out", "Source: Collection Source",
                         "fnworker:echo, fnworker:project"]
    assert tasks == ["Source: Collection Source -> A -> fnworker:echo, fnworker:project -> D -> "
                     "Sink: Print to Std. Out"]


@pytest.mark.smoke
def test_python_operator_with_the_markers_max_parallelism_is_refused(env):
    """Before the helper (the helper refuses) and after it (fnworker.check refuses), naming both."""
    mapped = rows(env).map(lambda r: r, output_type=ROW).set_max_parallelism(fnworker.MAX_PARALLELISM)
    with pytest.raises(ValueError) as e:
        fnworker.ordered_wait(mapped, ECHO, Time.seconds(5), output_type=ROW)
    msg = str(e.value)
    assert msg.startswith("fnworker.ordered_wait: Flink would fuse fnworker operator 'fnworker:echo' "
                          "(transformation ")
    assert "with Python operator 'Map' (transformation " in msg
    assert "DataStream.map, or the map PyFlink's print()" in msg
    assert "both have max parallelism 32768" in msg and "PythonOperatorChainingOptimizer" in msg


def test_check_names_a_fused_pair_after_the_fnworker_operator(runner_dir):
    from pyflink.datastream import StreamExecutionEnvironment
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    out = fnworker.ordered_wait(rows(env), ECHO, Time.seconds(5), output_type=ROW)
    out.map(lambda r: r, output_type=ROW).set_max_parallelism(fnworker.MAX_PARALLELISM)
    with pytest.raises(ValueError) as e:
        fnworker.check(env)
    assert str(e.value).startswith("fnworker.check: Flink would fuse fnworker operator 'fnworker:echo'")
    with pytest.raises(ValueError, match="with Python operator 'Map'"):
        fnworker.print(out)
    # a user's own max parallelism on the fnworker operator: fine while the neighbours differ,
    # refused when a Python neighbour has the same
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    out = fnworker.ordered_wait(rows(env), ECHO, Time.seconds(5), output_type=ROW).set_max_parallelism(128)
    mapped = out.map(lambda r: r, output_type=ROW)
    assert fnworker.check(env) == 1
    mapped.set_max_parallelism(128)
    with pytest.raises(ValueError, match="both have max parallelism 128"):
        fnworker.check(env)


class _Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return 0


class _Split(ProcessFunction):
    """Module-level (pickled by reference): yields each row to the side output."""

    def process_element(self, value, ctx):
        yield _SIDE[0], value


_SIDE = []


def _split(ds):
    _SIDE[:] = [OutputTag("side", ROW)]
    return ds.process(_Split(), ROW).get_side_output(_SIDE[0])


class _CoMap(CoMapFunction):
    def map1(self, value):
        return value

    def map2(self, value):
        return value


class _Broadcast(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        yield value

    def process_broadcast_element(self, value, ctx):
        pass


def _broadcast(ds):
    desc = MapStateDescriptor("s", T.LONG(), T.STRING())
    return ds.connect(ds.broadcast(desc)).process(_Broadcast(), ROW)


# PyFlink calls that add a Python operator (pyflink/datastream/data_stream.py) and the
# operator name the refusal shows.
ADDS_PYTHON = {
    "map": (lambda ds: ds.map(lambda r: r, ROW), "Map"),
    "flat_map": (lambda ds: ds.flat_map(lambda r: [r], ROW), "FlatMap"),
    "filter": (lambda ds: ds.filter(lambda r: True), "Filter"),
    "key_by": (lambda ds: ds.key_by(lambda r: r[0]), "_stream_key_by_map_operator"),
    "partition_custom": (lambda ds: ds.partition_custom(lambda k, n: 0, lambda r: r[0]),
                         "_partition_custom_map_operator"),
    "get_side_output": (_split, "Map"),
    "assign_timestamps_and_watermarks": (
        lambda ds: ds.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Ts())),
        "Extract-Timestamp"),
    "print": (lambda ds: ds.print() and ds, "Map"),
    "union_keyed": (lambda ds: ds.union(ds.key_by(lambda r: r[0])), "_keyed_stream_values_operator"),
    "window_all": (lambda ds: ds.window_all(CountTumblingWindowAssigner.of(2)).reduce(
        lambda a, b: a, output_type=ROW), "_stream_key_by_map_operator"),
    "connect_map": (lambda ds: ds.connect(ds).map(_CoMap(), ROW), "Co-Map"),
    "broadcast_process": (_broadcast, None),
}


@pytest.mark.parametrize("call", sorted(ADDS_PYTHON))
def test_pyflink_calls_that_add_a_python_operator_are_accepted(env, call):
    """Built on a branch of the job and on the helper's input: the Python operator runs in
    PyFlink's Python worker (relayed), never fused with the fnworker operator."""
    build, _ = ADDS_PYTHON[call]
    ds = rows(env)
    build(ds)
    out = fnworker.process(ds, PROJECT, NAMES)
    assert fnworker.check(env) == 1
    assert out._j_data_stream.getTransformation().getMaxParallelism() == fnworker.MAX_PARALLELISM


def test_table_python_udf_is_accepted(env):
    from pyflink.table import DataTypes, StreamTableEnvironment
    from pyflink.table.udf import udf
    t_env = StreamTableEnvironment.create(env)
    t = t_env.from_elements([(1, "a")], DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                                                       DataTypes.FIELD("name", DataTypes.STRING())]))
    upper = udf(lambda s: s.upper(), result_type=DataTypes.STRING())
    ds = t_env.to_data_stream(t.select(upper(t.name).alias("name")))
    fnworker.process(ds, Operation("identity"), ds.get_type())
    assert fnworker.check(env) == 1


def test_table_stream_runs_with_the_type_get_type_gives(env, ran_in_fnworker):
    """A stream from to_data_stream is NOT NULL ROW, what get_type() gives
    back is not; Flink describes both alike to the worker, so the pass-through
    check accepts output_type=ds.get_type() (found: it compared the Java
    types and refused the type its own message asked for)."""
    from pyflink.table import DataTypes, StreamTableEnvironment
    t_env = StreamTableEnvironment.create(env)
    t = t_env.from_elements([(1, "a"), (2, None)],
                            DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                                           DataTypes.FIELD("name", DataTypes.STRING())]))
    ds = t_env.to_data_stream(t)
    out = fnworker.ordered_wait(ds, ECHO, Time.seconds(5), output_type=ds.get_type())
    assert [tuple(r) for r in collect(out)] == [(1, "a"), (2, None)]


@pytest.mark.smoke
def test_check_passes_a_python_print_after_a_fnworker_operation(env):
    out = fnworker.ordered_wait(rows(env), ECHO, Time.seconds(5), output_type=ROW)
    out.print()                                       # PyFlink's: inserts a Python map, relayed
    assert fnworker.check(env) == 1
    fnworker.print(out)
    assert operator_names(env)[:2] == ["fnworker:echo", "Map"]


def test_check_without_fnworker_operations_passes(env):
    rows(env).map(lambda r: r, ROW).print()
    assert fnworker.check(env) == 0


@pytest.mark.smoke
def test_check_passes_a_fnworker_chain_before_and_after_fusing(env):
    ds = fnworker.ordered_wait(rows(env), ECHO, Time.seconds(5), output_type=ROW)
    ds = fnworker.process(ds, PROJECT, NAMES)
    fnworker.print(ds)
    assert fnworker.check(env) == 2
    assert fnworker.check(ds) == 2
    ds._apply_chaining_optimization()                 # what execute_and_collect() does first
    assert fnworker.check(env) == 1                   # one fused operator, both payloads fnworker's
    assert "fnworker:echo, fnworker:project" in operator_names(env)


def test_pickled_by_value_is_refused(env):
    cloudpickle.register_pickle_by_value(fnworker)
    try:
        with pytest.raises(ValueError) as e:
            fnworker.ordered_wait(rows(env), ECHO, Time.seconds(5), output_type=ROW)
    finally:
        cloudpickle.unregister_pickle_by_value(fnworker)
    assert "pickles the fnworker package by value" in str(e.value)
    assert operator_names(env) == []


def test_echo_passes_python_pickles_through(env, ran_in_fnworker):
    """output_type=None is right for a pass-through operation on a pickled
    stream: fnworker hands the pickles back unread."""
    values = [(1, "a"), {"x": [1.5, None]}, "s", Row(id=3, name="c")]
    ds = env.from_collection(values)
    out = fnworker.ordered_wait(ds, ECHO, Time.seconds(5))
    assert collect(out) == values


@pytest.mark.parametrize("module, source_type, operators",
                         [("enrich_job", "ORDER", 3), ("score_job", "FEATURES", 1)])
def test_examples_pass_the_checks(env, module, source_type, operators):
    """examples/pyflink/*.py build(stream) with real PyFlink: every operation
    is accepted, and the job holds fnworker operators only."""
    import importlib
    import os
    import sys
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "pyflink")
    sys.path.insert(0, os.path.abspath(examples))
    try:
        job = importlib.import_module(module)
        source = env.from_collection([], type_info=getattr(job, source_type))
        fnworker.print(job.build(source))
    finally:
        sys.path.pop(0)
    assert fnworker.check(env) == operators
    assert all(n.startswith("fnworker:") for n in operator_names(env)[:-1])


OUT = Types.ROW_NAMED(["name", "id"], [Types.STRING(), Types.LONG()])


def test_fused_chain_of_three_operations_runs(env, ran_in_fnworker):
    """What the checks let through runs: unordered echo, project, batched
    echo, fused by Flink into one operator that fnworker runs as a chain."""
    ds = env.from_collection([(1, "a"), (2, None), (3, "c")], type_info=ROW)
    ds = fnworker.unordered_wait(ds, Operation("echo", delay_ms=1), Time.seconds(5), output_type=ROW)
    ds = fnworker.process(ds, Operation("project", fields="name,id"), OUT)
    ds = fnworker.ordered_wait_batch(ds, ECHO, Time.seconds(5), batch_size=2, batch_timeout=10,
                                     output_type=OUT)
    assert fnworker.check(env) == 3
    out = sorted((tuple(r) for r in collect(ds)), key=lambda r: r[1])
    assert out == [("a", 1), (None, 2), ("c", 3)]
