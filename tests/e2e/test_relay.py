"""Issue 21: PyFlink jobs unchanged on a TaskManager whose Python worker is
fnworker. fnworker runs its own operations and relays every other Python
function to PyFlink's own Python worker, its child (docs/design/relay.md,
section 12). Every case runs either way (relay_env.py): through fnworker
(default) or, with FNW_E2E_WORKER=pyflink, on PyFlink's own worker alone,
where the same jobs give the results the cases expect (computed in
relay_jobs.py, not taken from a Flink run); cases with fnworker operations
are skipped then."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from pyflink.common import Types

import fnw_e2e
import relay_env
import relay_jobs
from fnw_e2e import collect
from relay_env import RELAYED
from services import http_server, redis_client, redis_server  # noqa: F401 (fixtures)

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs", "relay_job.py")


# ---- helpers --------------------------------------------------------------------------------

class Session(object):
    """What the session's fnworker did during a case: launches and log lines."""

    def __init__(self, runner_dir):
        self.runner_dir = runner_dir
        self.launches = fnw_e2e.launches(runner_dir)
        self.log_at = len(fnw_e2e.worker_log(runner_dir))

    def new_launches(self):
        return fnw_e2e.launches(self.runner_dir) - self.launches

    def log(self):
        return fnw_e2e.worker_log(self.runner_dir)[self.log_at:]


@pytest.fixture
def session(runner_dir):
    """The session worker's launches and log during the case; through
    fnworker, the case must have launched it."""
    s = Session(runner_dir)
    yield s
    if RELAYED:
        assert s.new_launches() > 0, "the job did not launch fnworker"


def own_process(tmp_path, cfg, extra_env=None):
    """Starts jobs/relay_job.py cfg in a process of its own (its own gateway
    JVM, MiniCluster and Flink log dir under tmp_path); through fnworker with
    a counting runner dir under tmp_path. Returns (Popen, runner dir or None,
    Flink log dir)."""
    runner = fnw_e2e.make_runner_dir(str(tmp_path / "runner")) if RELAYED else None
    log_dir = str(tmp_path / "flink-log")
    os.makedirs(log_dir, exist_ok=True)
    env = fnw_e2e.job_env(runner, dict(extra_env or {}, FLINK_LOG_DIR=log_dir))
    p = subprocess.Popen([sys.executable, JOB, json.dumps(cfg)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    return p, runner, log_dir


def finish(p, timeout=300):
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        raise AssertionError("the job did not end in %d s:\n%s" % (timeout, out[-4000:]))
    return out


def flink_log(log_dir):
    text = ""
    for name in sorted(os.listdir(log_dir)):
        if name.endswith(".log"):
            with open(os.path.join(log_dir, name), errors="replace") as f:
                text += f.read()
    return text


def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("timed out after %d s waiting for %s" % (timeout, what))
        time.sleep(0.1)


def child_starts(log):
    """The pids of the relay children fnworker logged starting."""
    return [int(p) for p in relay_env.CHILD_START.findall(log)]


def printed(out):
    """The lines Flink's print sink wrote (parallelism 1: no subtask prefix)."""
    return sorted(ln for ln in out.splitlines() if ln.startswith("(") or ln.startswith("+I["))


# ---- the cases -------------------------------------------------------------------------------

@pytest.mark.smoke
def test_pure_python_job_unchanged(tmp_path):
    """map + filter + PyFlink's print() (which inserts a third Python map)
    and no fnworker operation: the rows Flink's print sink writes are
    PyFlink's, exactly; through fnworker: one launch, and the worker logged
    starting PyFlink's Python worker as its child."""
    n = 30
    p, runner, _ = own_process(tmp_path, {"job": "pure", "n": n})
    out = finish(p)
    assert p.returncode == 0, out[-4000:]
    assert printed(out) == sorted(relay_jobs.pure_expected(n)), out[-4000:]
    if RELAYED:
        assert fnw_e2e.launches(runner) == 1
        log = fnw_e2e.worker_log(runner)
        assert len(child_starts(log)) == 1, log[-4000:]


def test_keyed_state_and_timers(env, session):
    """The job of docs/design/relay.md section 1: Python map (JSON) ->
    Python timestamps -> key_by -> KeyedProcessFunction with a ValueState,
    a MapState and event-time timers; exact results."""
    n = 40
    got = sorted(collect(relay_jobs.keyed(env, n)))
    assert got == relay_jobs.keyed_expected(n)
    if RELAYED:
        assert child_starts(session.log()), session.log()[-4000:]


def test_two_vertices_keep_every_row(session):
    """map -> key_by -> map and map -> rebalance -> map: two tasks whose
    Python operators share one worker, so the second one's input often
    arrives before its request (held, then handed to the relay). Three
    jobs of each, every row each time: a relay that handed the held input
    over with is_last in the data entry lost every row of such bundles
    (Beam's SDK skips the data of an is_last entry)."""
    from pyflink.datastream import StreamExecutionEnvironment
    for shape in ("key_by", "rebalance"):
        for _ in range(3):
            e = StreamExecutionEnvironment.get_execution_environment()
            e.set_parallelism(1)
            ds = e.from_collection(list(range(50)), type_info=Types.LONG()) \
                .map(lambda v: v + 1, output_type=Types.LONG())
            if shape == "key_by":
                ds = ds.key_by(lambda v: v % 3, key_type=Types.LONG())
            else:
                ds = ds.rebalance()
            got = sorted(collect(ds.map(lambda v: v * 10, output_type=Types.LONG())))
            assert got == [(v + 1) * 10 for v in range(50)], (shape, got)


def test_python_exception_shows_traceback(env, session):
    """A Python function that raises: Flink's exception shows the Python
    traceback, with the function's name and the exception's text."""
    ds = env.from_collection(list(range(10)), type_info=Types.LONG())
    out = ds.map(relay_jobs.explode_on_seven, output_type=Types.LONG())
    with pytest.raises(Exception) as e:
        collect(out)
    text = str(e.value)
    assert "Traceback (most recent call last)" in text, text[-4000:]
    assert "explode_on_seven" in text, text[-4000:]
    assert "ValueError: relay e2e: the row 7 is cursed" in text, text[-4000:]


def test_requirements_and_pyfs_reach_child(env, session, tmp_path):
    """set_python_requirements (a wheel made here, installed by Flink's pip
    with --no-index --find-links <cache dir>: no network) and
    add_python_file: both reach the Python worker."""
    cache = str(tmp_path / "wheels")
    relay_env.make_wheel(cache, "fnw_relay_dep", "1.0", 'VALUE = "from the wheel"\n')
    req = tmp_path / "requirements.txt"
    req.write_text("fnw_relay_dep==1.0\n")
    helper = tmp_path / "fnw_relay_helper.py"
    helper.write_text("X = 41\n")
    env.set_python_requirements(str(req), cache)
    env.add_python_file(str(helper))

    def use_both(v):
        import fnw_relay_dep
        import fnw_relay_helper
        return "%s %d" % (fnw_relay_dep.VALUE, fnw_relay_helper.X + v)

    ds = env.from_collection([1, 2, 3], type_info=Types.LONG())
    got = sorted(collect(ds.map(use_both, output_type=Types.STRING())))
    assert got == ["from the wheel 42", "from the wheel 43", "from the wheel 44"]


def test_no_pyflink_where_fnworker_runs(env, session):
    """python.executable is a Python without PyFlink (/usr/bin/python3):
    the job fails; through fnworker the message says PyFlink's Python worker
    did not start and names the interpreter."""
    python = "/usr/bin/python3"
    if not os.access(python, os.X_OK) or subprocess.run(
            [python, "-c", "import pyflink"], stderr=subprocess.DEVNULL).returncode == 0:
        pytest.skip("%s is missing or has PyFlink" % python)
    env.set_python_executable(python)
    ds = env.from_collection([1, 2, 3], type_info=Types.LONG())
    with pytest.raises(Exception) as e:
        collect(ds.map(lambda v: v + 1, output_type=Types.LONG()))
    text = str(e.value)
    if RELAYED:
        assert "PyFlink's Python worker did not start" in text, text[-4000:]
        assert python in text, text[-4000:]
        assert "No module named 'pyflink'" in text, text[-4000:]   # its last output
    else:
        assert "No module named 'pyflink'" in text, text[-4000:]


def test_child_killed_mid_bundle(tmp_path):
    """A Python map that sleeps 0.2 s a row: the Python worker is killed
    (kill -9) mid-bundle. The job fails over (a fixed-delay restart
    strategy), with a message naming the child's end by signal 9 and its last output
    (through fnworker), and then finishes with every row exactly once
    (checkpointing on: the collect sink's buffer is checkpointed)."""
    n, sleep_s = 40, 0.2
    p, runner, log_dir = own_process(tmp_path, {"job": "sleepy", "n": n, "sleep_s": sleep_s})
    try:
        # the worker has run a few rows of the bundle (its print()s reach Flink's log)
        wait_for(lambda: re.search(r"SLEEPY [5-9]\b", flink_log(log_dir)) or p.poll() is not None,
                 180, "the Python map to run 5 rows")
        assert p.poll() is None, finish(p)[-4000:]
        workers = relay_env.python_workers(p.pid)
        assert len(workers) == 1, [relay_env.cmdline(w) for w in workers]
        victim = workers[0]
        if RELAYED:
            assert child_starts(fnw_e2e.worker_log(runner)) == [victim], fnw_e2e.worker_log(runner)[-4000:]
        os.kill(victim, signal.SIGKILL)
        out = finish(p)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, out[-4000:]
    m = re.search(r"^RESULT (.*)$", out, re.M)
    assert m, out[-4000:]
    assert json.loads(m.group(1)) == [v * 10 for v in range(n)]
    log = flink_log(log_dir)
    assert re.search(r"switched from (state )?RUNNING to (RESTARTING|FAILING)", log), "the job never failed over"
    if RELAYED:
        msg = "PyFlink's Python worker (pid %d) ended (signal 9" % victim
        assert msg in log, log[-6000:]
        failure = log[log.index(msg):][:6000]
        assert "while it ran this bundle" in failure and "Its last output:" in failure, failure
        assert re.search(r"Its last output:.*SLEEPY \d", failure, re.S), failure
        # the bundle after the failure started a new child
        assert len(child_starts(fnw_e2e.worker_log(runner))) >= 2, fnw_e2e.worker_log(runner)[-4000:]


# ---- mixed chains ------------------------------------------------------------------------------

def _chained_job(env):
    """Python map -> fnworker echo -> Python map, typed rows."""
    import fnworker
    from fnworker import Operation
    from pyflink.common import Row, Time
    row = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
    ds = env.from_collection([(i, "r%d" % i) for i in range(5)], type_info=row)
    a = ds.map(lambda r: Row(r[0] + 100, r[1].upper()), output_type=row).name("py-before")
    b = fnworker.ordered_wait(a, Operation("echo"), Time.seconds(5), output_type=row)
    return b.map(lambda r: Row(r[0] * 2, r[1] + "!"), output_type=row).name("py-after")


def _job_vertices(env):
    """The JobGraph's vertices' names (the JVM tasks), of the job as Flink
    will run it (PyFlink's own Python operator fusion applied)."""
    from pyflink.java_gateway import get_gateway
    j_graph = env._generate_stream_graph(clear_transformations=False)
    gen = get_gateway().jvm.org.apache.flink.streaming.api.graph.StreamingJobGraphGenerator
    j_job = gen.createJobGraph(j_graph)
    return [v.getName() for v in j_job.getVertices().iterator()], \
        [n.getOperatorName() for n in j_graph.getStreamNodes().iterator()]


def test_marker_keeps_chains_apart(env, session):
    """The package's marker (docs/design/relay.md section 7): PyFlink does
    not fuse the fnworker operator with the Python maps around it (three
    stream nodes), and the JVM still runs all of them in one task; through
    fnworker, the worker ran a native descriptor (echo) and relayed two."""
    _chained_job(env)
    vertices, nodes = _job_vertices(env)
    python_nodes = [n for n in nodes if "py-" in n or "fnworker:" in n]
    assert sorted(python_nodes) == ["fnworker:echo", "py-after", "py-before"], nodes
    task = [v for v in vertices if "fnworker:echo" in v]
    assert len(task) == 1 and "py-before" in task[0] and "py-after" in task[0], vertices
    relay_env.skip_unless_relayed(pytest)
    from pyflink.datastream import StreamExecutionEnvironment
    fresh = StreamExecutionEnvironment.get_execution_environment()
    fresh.set_parallelism(1)
    got = sorted(tuple(r) for r in collect(_chained_job(fresh)))
    assert got == sorted(((i + 100) * 2, "R%d!" % i) for i in range(5))
    log = session.log()
    assert re.findall(r"descriptor \S+: \d+ operation\(s\) echo, input from", log), log[-4000:]
    assert len(relay_env.RELAYED_DESCRIPTOR.findall(log)) == 2, log[-4000:]


@pytest.fixture(scope="module")
def prices(redis_server):
    r = redis_client(redis_server)
    for u in range(relay_jobs.USERS):
        r.set("price:u%d" % u, repr(relay_jobs.price(u)))
    return redis_server


def test_mixed_pipeline(tmp_path, prices, http_server):
    """Python map (JSON) -> Python timestamps -> key_by -> fnworker redis ->
    key_by -> Python KeyedProcessFunction (ValueState, event-time timer) ->
    fnworker http batch -> PyFlink's print(): the rows Flink prints, exactly
    (on PyFlink's own worker: Python maps in place of the fnworker operations)."""
    n = 60
    # on PyFlink's own worker, Python maps stand in for the two fnworker operations
    p, runner, _ = own_process(tmp_path, {"job": "mixed", "n": n,
                                          "redis": prices.address if RELAYED else None,
                                          "http": http_server.address})
    out = finish(p)
    assert p.returncode == 0, out[-4000:]
    assert printed(out) == relay_jobs.mixed_expected(range(1, n + 1)), out[-4000:]
    if RELAYED:
        assert fnw_e2e.launches(runner) >= 1
        assert len(child_starts(fnw_e2e.worker_log(runner))) >= 1


# ---- the same on a standalone cluster, a TaskManager killed ---------------------------------------

@pytest.fixture(scope="module")
def relay_cluster():
    """A standalone cluster from the wheel (cluster.py), 2 TaskManagers x 2
    slots, fnworker from a counting runner dir; Flink's `python` is this
    venv's (PATH, set by conftest)."""
    import shutil
    import cluster
    path = os.path.join(fnw_e2e.BUILD, "e2e", "relay-cluster-runner")
    if os.path.isdir(path):
        shutil.rmtree(path)
    if RELAYED:
        runner = fnw_e2e.make_runner_dir(path)
    else:
        # PyFlink's own launcher: the TaskManagers run PyFlink's worker
        os.makedirs(path)
        shutil.copy(os.path.join(cluster.pyflink_home(), "bin", "pyflink-udf-runner.sh"), path)
        runner = path
    c = cluster.Cluster(runner, name="relay-cluster")
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.mark.cluster
def test_mixed_pipeline_taskmanager_killed_exactly_once(relay_cluster, prices, http_server):
    """The mixed pipeline at parallelism 4 with checkpointing and an
    exactly-once FileSink on a standalone cluster; a TaskManager's JVM is
    killed (kill -9) after a checkpoint committed rows: a new one joins,
    Flink restores the keyed state and timers from the checkpoint, and every
    line is in the committed files exactly once; through fnworker, the
    killed TaskManager's workers and their Python children do not outlive
    it (PyFlink's own worker does: the case stops what is left)."""
    from test_cluster import committed_lines
    flink = relay_cluster
    n = 30000
    out = os.path.join(flink.base, "out-mixed")
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs", "relay_pipeline_job.py")
    # on PyFlink's own worker, Python maps stand in for the two fnworker operations
    jid = flink.submit(job, [json.dumps({"n": n, "parallelism": 4, "checkpoint_ms": 500, "sink": out,
                                         "redis": prices.address if RELAYED else None,
                                         "http": http_server.address})])
    flink.wait_job(jid, ("RUNNING",))
    flink.wait(lambda: (flink.rest("/jobs/%s/checkpoints" % jid)["counts"]["completed"] >= 1
                        and committed_lines(out)), 240, "a completed checkpoint with committed rows")
    done_before = len(committed_lines(out))
    assert done_before < n, "the job finished before the kill: make it longer"
    # the processes under the TaskManager about to die: fnworkers and their children
    doomed = [pid for pid in _descendants(flink.tms[0].pid)]
    assert any(relay_env.BEAM_BOOT in relay_env.cmdline(p) for p in doomed), \
        [relay_env.cmdline(p) for p in doomed]
    flink.kill_taskmanager(0)
    try:
        flink.start_taskmanager()
        if RELAYED:
            flink.wait(lambda: not any(relay_env.alive(p) for p in doomed), 60,
                       "the killed TaskManager's workers and Python children to exit")
        flink.wait_job(jid, ("FINISHED",), timeout=600)
    finally:
        # PyFlink's own worker (its runner script's bash, python and tee)
        # outlives a killed TaskManager (seen on 1.20.5 and 2.3.0): stop what is left
        for pid in doomed:
            if relay_env.alive(pid):
                os.kill(pid, signal.SIGKILL)
    got = sorted(committed_lines(out))
    want = relay_jobs.mixed_expected(range(1, n + 1), java=True)
    missing = sorted(set(want) - set(got))
    dup = len(got) - len(set(got))
    assert not missing and not dup and got == want, \
        "%d lines missing (first %s), %d duplicated" % (len(missing), missing[:5], dup)
    cps = flink.rest("/jobs/%s/checkpoints" % jid)
    assert cps["latest"].get("restored"), "the job did not restore from a checkpoint: %s" % cps["latest"]


def _descendants(root):
    kids = relay_env._children()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for c in kids.get(p, ()):
            out.append(c)
            todo.append(c)
    return out
