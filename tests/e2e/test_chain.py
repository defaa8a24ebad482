"""Three fnworker operations in a row, with a type change between them
(echo -> project -> identity): Flink fuses them into one Python operator,
which fnworker runs as one chain. The proof: the transformation Flink built
(one operator named after all three) and fnworker's log, which names each
descriptor's chain ("3 operation(s) echo -> project -> identity"); with
Python operator chaining off, the same job is three operators and three
one-step descriptors. Flink runs every Python operator of a slot in one
worker process, so the launches count is one either way. Results are exact."""

import re
import time

from pyflink.common import Time, Types
from pyflink.java_gateway import get_gateway

import fnworker
import fnw_e2e
from fnworker import Operation

IN = Types.ROW_NAMED(["id", "name", "score"], [Types.LONG(), Types.STRING(), Types.DOUBLE()])
OUT = Types.ROW_NAMED(["name", "id"], [Types.STRING(), Types.LONG()])
ROWS = [(n, None if n == 3 else "n%d" % n, n / 4.0) for n in range(50)]


def chain(env):
    ds = env.from_collection(ROWS, type_info=IN)
    ds = fnworker.unordered_wait(ds, Operation("echo", delay_ms=1, jitter_ms=3), Time.seconds(10),
                                 output_type=IN)
    ds = fnworker.process(ds, Operation("project", fields="name,id"), output_type=OUT)
    return fnworker.ordered_wait(ds, Operation("identity"), Time.seconds(10), output_type=OUT)


def run(ds):
    """Collect ds (as execute_and_collect does, chaining first) and return the
    results and the transformation Flink ran last."""
    jvm = get_gateway().jvm
    jvm.org.apache.flink.python.util.PythonConfigUtil.configPythonOperator(
        ds._j_data_stream.getExecutionEnvironment())
    ds._apply_chaining_optimization()
    t = ds._j_data_stream.getTransformation()
    with ds.execute_and_collect() as it:
        return [tuple(r) for r in it], t


def python_operators(t):
    """The Python operators between the source and t, by name, last first."""
    names = []
    while t is not None and "fnworker" in t.getName():
        names.append(t.getName())
        inputs = t.getInputs()
        t = inputs.get(0) if inputs.size() else None
    return names


def chains_logged(runner_dir, since):
    """The chains of the descriptors fnworker registered, from its log after offset since."""
    log = fnw_e2e.worker_log(runner_dir)[since:]
    return re.findall(r"descriptor \S+: \d+ operation\(s\) (.*?), input from", log)


def test_three_operations_fused_and_run_as_one_chain(env, runner_dir):
    before, log_at = fnw_e2e.launches(runner_dir), len(fnw_e2e.worker_log(runner_dir))
    got, t = run(chain(env))
    assert sorted(got, key=repr) == sorted(((name, n) for n, name, _ in ROWS), key=repr)
    assert fnw_e2e.launches(runner_dir) - before == 1
    assert chains_logged(runner_dir, log_at) == ["echo -> project -> identity"]
    # A job that succeeded leaves no warning in the worker's log, to its exit
    # (a real Flink ends the logging stream at every job's end: once a WARN).
    deadline = time.time() + 30
    while "exiting" not in fnw_e2e.worker_log(runner_dir)[log_at:] and time.time() < deadline:
        time.sleep(0.2)
    log = fnw_e2e.worker_log(runner_dir)[log_at:]
    assert "exiting" in log
    assert [ln for ln in log.splitlines() if " WARN " in ln or " ERROR " in ln] == []
    ops = python_operators(t)
    assert len(ops) == 1, "expected one fused operator, Flink ran %s" % ops
    for name in ("fnworker:echo", "fnworker:project", "fnworker:identity"):
        assert name in ops[0]


def test_unfused_chain_runs_three_workers(env, runner_dir):
    """The control: with Python operator chaining off, each operation is its
    own operator, run as three one-step descriptors (by the same process);
    the results are the same."""
    jvm = get_gateway().jvm
    conf = jvm.org.apache.flink.python.util.PythonConfigUtil.getEnvironmentConfig(
        env._j_stream_execution_environment)
    conf.setString("python.operator-chaining.enabled", "false")
    try:
        log_at = len(fnw_e2e.worker_log(runner_dir))
        got, t = run(chain(env))
        assert sorted(got, key=repr) == sorted(((name, n) for n, name, _ in ROWS), key=repr)
        assert len(python_operators(t)) == 3
        assert sorted(chains_logged(runner_dir, log_at)) == ["echo", "identity", "project"]
    finally:
        conf.setString("python.operator-chaining.enabled", "true")
