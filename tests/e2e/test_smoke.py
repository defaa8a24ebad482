"""The first real-Flink cases: a ROW through `echo` ordered, exactly."""

import os

import pytest
from pyflink.common import Time, Types

import fnworker
from fnworker import Operation
from fnw_e2e import collect

ROW = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])


@pytest.mark.smoke
def test_echo_ordered_keeps_rows_and_nulls(env, ran_in_fnworker):
    rows = [(1, "a"), (2, None), (3, "ccc"), (-(1 << 63), ""), ((1 << 63) - 1, "é\u0000x")]
    ds = env.from_collection(rows, type_info=ROW)
    out = fnworker.ordered_wait(ds, Operation("echo"), Time.seconds(5), output_type=ROW)
    assert [tuple(r) for r in collect(out)] == rows


@pytest.mark.smoke
def test_print_adds_no_python_operator(env, runner_dir):
    """fnworker.print after a fnworker operation runs (PyFlink's print() would
    fuse a Python map into the fnworker stage); the operator carries its name."""
    ds = env.from_collection([(7, "x")], type_info=ROW)
    out = fnworker.ordered_wait(ds, Operation("echo"), Time.seconds(5), output_type=ROW)
    fnworker.print(out, "e2e")
    plan = env.get_execution_plan()
    assert "fnworker:echo" in plan
    assert "Map" not in plan
    env.execute("print")


def _gateway_logs():
    """The local Flink's log files (conftest points FLINK_LOG_DIR at the session's own)."""
    import glob
    return glob.glob(os.path.join(os.environ["FLINK_LOG_DIR"], "flink-*-python-*.log"))


@pytest.mark.smoke
def test_worker_ends_its_data_stream_without_an_error_in_flinks_log(env, ran_in_fnworker):
    """At the end of a job the worker half-closes its Data stream; cancelling
    it made Beam's BeamFnDataGrpcMultiplexer log 'Failed to handle for unknown
    endpoint ... CANCELLED: client cancelled' at ERROR, with a stack trace, in
    the TaskManager's log after every job."""
    logs = _gateway_logs()
    assert logs, "no log of the local Flink found"
    sizes = {p: os.path.getsize(p) for p in logs}
    ds = env.from_collection([(1, "a"), (2, "b")], type_info=ROW)
    out = fnworker.unordered_wait(ds, Operation("echo"), Time.seconds(5), output_type=ROW)
    assert sorted(tuple(r) for r in collect(out)) == [(1, "a"), (2, "b")]
    import time
    time.sleep(1.0)   # the environment closes after the job's result is in
    for p in logs:
        with open(p, errors="replace") as f:
            f.seek(sizes.get(p, 0))
            new = f.read()
        assert "Failed to handle for unknown endpoint" not in new, new[-3000:]
