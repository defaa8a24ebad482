"""The first real-Flink cases: a ROW through `echo` ordered, exactly."""

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
