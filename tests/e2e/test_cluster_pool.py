"""(d) The sidecar worker pool reached by real TaskManagers: `build/fnworker
pool` on a free loopback port, TaskManagers whose PYFLINK_UDF_RUNNER_DIR
holds pyflink-udf-runner.sh and no fnworker binary, and FNW_POOL_ADDRESS
pointing at the pool (docs/sidecar.md).
A module of its own, so that its cluster starts after test_cluster's has
stopped."""

import json
import os
import re
import subprocess
import time
import urllib.request

import pytest

import cluster
import fnw_e2e
from test_cluster import JOB, START_LINE, committed_lines, echo_branch, pipeline

pytestmark = pytest.mark.cluster


def pool_metrics(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(fnworker_pool_[a-z_]+)(\{[^}]*\})? (\S+)$", line)
        if m:
            out.setdefault(m.group(1), []).append((m.group(2) or "", float(m.group(3))))
    return out


def scalar(metrics, name):
    return sum(v for _, v in metrics.get(name, []))


@pytest.fixture(scope="module")
def pool():
    """`fnworker pool` on free loopback ports; stopped with SIGTERM (then SIGKILL)."""
    base = os.path.join(fnw_e2e.BUILD, "e2e")
    listen, http = cluster.free_port(), cluster.free_port()
    log_path = os.path.join(base, "pool-%d.log" % listen)
    with open(log_path, "wb") as log:
        p = subprocess.Popen([fnw_e2e.FNWORKER, "pool", "--listen", "127.0.0.1:%d" % listen,
                              "--http-listen", "127.0.0.1:%d" % http, "--grace-period", "2"],
                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % http, timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert p.poll() is None, "fnworker pool exited: %s" % open(log_path).read()
            assert time.time() < deadline, "fnworker pool did not answer /healthz"
            time.sleep(0.1)
        yield {"listen": listen, "http": http, "log": log_path, "proc": p}
    finally:
        p.terminate()
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


@pytest.fixture(scope="module")
def pool_flink(pool):
    runner = fnw_e2e.make_runner_dir(os.path.join(fnw_e2e.BUILD, "e2e", "cluster-pool-launcher"),
                                     binary=None)
    assert not os.path.exists(os.path.join(runner, "fnworker"))
    c = cluster.Cluster(runner, tm_env={"FNW_POOL_ADDRESS": "127.0.0.1:%d" % pool["listen"]},
                        name="cluster-pool")
    try:
        c.start()
        yield c
    finally:
        c.stop()


def test_pool_runs_the_taskmanagers_workers(pool, pool_flink):
    """Every subtask's worker is started by the pool (its /metrics counts 4
    starts, and 4 exits once the job is done), the workers' start-up lines
    reach the TaskManagers' logs through the Logging service, and every row
    arrives exactly."""
    flink = pool_flink
    n = 2000
    before = pool_metrics(pool["http"])
    out = os.path.join(flink.base, "out-pool")
    jid = flink.submit(JOB, [pipeline("pool", {"kind": "seq", "count": n}, 4, [
        echo_branch("fnw-echo", out, {"delay_ms": 20}, capacity=8, output_mode="UNORDERED")])])
    flink.wait_job(jid, ("RUNNING",))
    running = flink.wait(lambda: (lambda m: m if scalar(m, "fnworker_pool_workers_running") >= 1 else None)(
        pool_metrics(pool["http"])), 120, "the pool's workers running")
    flink.wait_job(jid)
    assert sorted(int(x) for x in committed_lines(out)) == list(range(1, n + 1))
    # Both TaskManagers number their workers alike ("1-1", "2-1"): the pool
    # once refused the second TaskManager's starts ("a worker with id '1-1'
    # is already running") and the job only finished through a restart.
    assert flink.failures(jid) == [], flink.exceptions(jid)
    with open(pool["log"]) as f:
        assert "refused" not in f.read()

    started = scalar(pool_metrics(pool["http"]), "fnworker_pool_workers_started_total") - \
        scalar(before, "fnworker_pool_workers_started_total")
    assert started == 4, "the pool started %s workers for 4 subtasks" % started
    # Flink stops its workers when the tasks end: the pool sees them exit.
    flink.wait(lambda: scalar(pool_metrics(pool["http"]), "fnworker_pool_workers_exited_total")
               - scalar(before, "fnworker_pool_workers_exited_total") == 4, 60,
               "the pool's 4 workers to exit after the job")
    m = pool_metrics(pool["http"])
    assert scalar(m, "fnworker_pool_workers_running") == 0
    assert scalar(m, "fnworker_pool_workers_failed_to_start_total") == 0
    # per-worker series appeared while they ran
    assert running.get("fnworker_pool_worker_uptime_seconds"), running
    for i in range(2):
        found = START_LINE.findall(flink.tm_log(i))
        assert len(found) == 2, "TaskManager %d logged %d fnworker start-up lines" % (i, len(found))


def test_pool_python_map_runs_in_the_taskmanager(pool, pool_flink):
    """A job whose only Python function is a plain map (no fnworker
    operation), on TaskManagers whose workers run in the pool: the worker
    asks its launcher (protocol version 2) for PyFlink's Python worker, which
    runs in the launcher's environment (it sees FNW_POOL_ADDRESS, which the
    pool's workers never have) and is served by the worker's relay over the
    shared loopback; every row arrives exactly, and no worker was started
    with --relay=off."""
    flink = pool_flink
    n = 3000
    out = os.path.join(flink.base, "out-pool-python")
    job = os.path.join(cluster.JOBS, "pool_python_job.py")
    jid = flink.submit(job, [json.dumps({"name": "pool-python", "count": n, "parallelism": 2, "out": out})])
    flink.wait_job(jid, timeout=300)
    assert flink.failures(jid) == [], flink.exceptions(jid)
    lines = committed_lines(out)
    assert sorted(lines, key=lambda l: int(l.split(":")[0])) == \
        ["%d:taskmanager" % (3 * i) for i in range(1, n + 1)], lines[:5]
    with open(pool["log"]) as f:
        log = f.read()
    assert "--relay=off" not in log and "refused" not in log, log[-3000:]


def operation_series(port, family):
    """{labels dict as a sorted tuple: value} of one family of the pool's per-operation series."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^%s\{(.*)\} (\S+)$" % re.escape(family), line)
        if m:
            labels = tuple(sorted(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(1))))
            out[labels] = float(m.group(2))
    return out


def test_pool_exports_operation_metrics(pool, pool_flink):
    """The workers' per-operation figures in the pool's /metrics
    (docs/metrics.md), from real TaskManagers: an echo step with delay_ms=5
    fed 300 lines by a source that never ends, parallelism 2; once Flink has
    processed them the pool's series add up to them, per worker and
    operation, with the latency histogram in seconds."""
    flink = pool_flink
    n = 300
    src = os.path.join(flink.base, "in-pool-metrics")
    os.makedirs(src)
    tmp = os.path.join(src, ".f.tmp")
    with open(tmp, "w") as fh:
        fh.write("".join("%d\n" % i for i in range(1, n + 1)))
    os.rename(tmp, os.path.join(src, "f.txt"))
    out = os.path.join(flink.base, "out-pool-metrics")
    jid = flink.submit(JOB, [pipeline("pool-metrics", {"kind": "files", "dir": src}, 2, [
        echo_branch("fnw-timed", out, {"delay_ms": 5}, capacity=4)], 1000)])
    try:
        flink.wait_job(jid, ("RUNNING",))

        def echo_total(family):
            return sum(v for k, v in operation_series(pool["http"], family).items() if ("operation", "echo") in k)
        flink.wait(lambda: echo_total("fnworker_records_in_total") == n or None, 120,
                   "the pool's series to count %d records in" % n)
        assert echo_total("fnworker_requests_total") == n
        assert echo_total("fnworker_successes_total") == n
        assert echo_total("fnworker_records_out_total") == n
        fails = operation_series(pool["http"], "fnworker_call_failures_total")
        assert fails and sum(fails.values()) == 0, fails
        assert {dict(k)["kind"] for k in fails} == {"error", "timeout", "overload", "breaker_open"}
        buckets = operation_series(pool["http"], "fnworker_call_latency_seconds_bucket")
        le = {}
        for k, v in buckets.items():
            d = dict(k)
            if d["operation"] == "echo":
                le[d["le"]] = le.get(d["le"], 0) + v
        # every call took at least 5 ms; the histogram is within 12.5%
        assert le["+Inf"] == n and le["0.0025"] == 0 and le["60"] == n, le
        assert echo_total("fnworker_call_latency_seconds_count") == n
        assert echo_total("fnworker_call_latency_seconds_sum") >= n * 0.005
        workers = {dict(k)["worker_id"] for k in operation_series(pool["http"], "fnworker_requests_total")}
        assert workers and "" not in workers, workers
    finally:
        flink.cancel(jid)


def test_pool_gauges_are_the_running_bundles(pool, pool_flink):
    """The pool's gauges are the running bundles' (docs/metrics.md): calls
    that never answer (echo `hang`, a 60 s timeout, capacity 5) hold a
    bundle open, and the pool shows them in `fnworker_inflight_calls` while
    it runs, before any bundle of the step has finished (in this job one
    input reaches the hung step, so it shows 1); none is more than the
    capacity."""
    flink = pool_flink
    src = os.path.join(flink.base, "in-pool-hang")
    os.makedirs(src)
    tmp = os.path.join(src, ".f.tmp")
    with open(tmp, "w") as fh:
        fh.write("".join("%d\n" % i for i in range(1, 41)))
    os.rename(tmp, os.path.join(src, "f.txt"))
    out = os.path.join(flink.base, "out-pool-hang")
    jid = flink.submit(JOB, [pipeline("pool-hang", {"kind": "files", "dir": src}, 2, [
        echo_branch("fnw-hang", out, {"hang": True}, capacity=5, timeout_ms=60000)], 1000)])
    try:
        flink.wait_job(jid, ("RUNNING",))

        def held():
            s = {k: v for k, v in operation_series(pool["http"], "fnworker_inflight_calls").items()
                 if ("operation", "echo") in k}
            return s if s and max(s.values()) >= 1 else None
        inflight = flink.wait(held, 120, "a worker's fnworker_inflight_calls above 0")
        assert all(0 <= v <= 5 for v in inflight.values()), inflight
        # no bundle of the step has ended: its counters are still 0
        done = operation_series(pool["http"], "fnworker_records_in_total")
        assert all(v == 0 for k, v in done.items() if ("operation", "echo") in k), done
    finally:
        flink.cancel(jid)
