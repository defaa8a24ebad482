"""The standalone-cluster cases: a JobManager and two TaskManagers started
from the wheel's bin/ (cluster.py), jobs submitted with `bin/flink run -py`
(tests/e2e/jobs/pipeline_job.py), results read from the exactly-once
FileSink's committed files, metrics from Flink's REST API."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.request

import pytest

import cluster
import fnw_e2e

pytestmark = pytest.mark.cluster

JOB = os.path.join(cluster.JOBS, "pipeline_job.py")
START_LINE = re.compile(r"fnworker \S+ \(worker (\S+)\) connected to control localhost:\d+")

# The wrapper Flink launches as fnworker in the cluster's runner directory:
# one line per launch in launches.log (pid, then the environment facts a
# TaskManager gave it, then its arguments), then the real binary.
WRAPPER = """#!/bin/sh
echo "$$ boot=${{BOOT_LOG_DIR:-}} gateway_disabled=${{PYFLINK_GATEWAY_DISABLED:-}} $*" >>'{log}'
exec '{binary}' "$@"
"""


def make_cluster_runner(name):
    path = fnw_e2e.make_runner_dir(os.path.join(fnw_e2e.BUILD, "e2e", name))
    with open(os.path.join(path, "fnworker"), "w") as f:
        f.write(WRAPPER.format(log=os.path.join(path, "launches.log"), binary=fnw_e2e.FNWORKER))
    log = os.path.join(path, "launches.log")
    if os.path.exists(log):
        os.remove(log)
    return path


def launch_lines(runner_dir):
    try:
        with open(os.path.join(runner_dir, "launches.log")) as f:
            return [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def broken_boot_lines(text):
    """The complete lines of a boot log that are not whole worker log lines
    (`<time>Z fnworker <LEVEL> ...`), and NUL bytes: the workers of a job on
    one TaskManager share the file."""
    lines = text.split("\n")[:-1]
    return [l for l in lines if "\0" in l or not re.match(r"^\d{4}-\d\d-\d\dT[\d:.]+Z fnworker [A-Z]+ ", l)]


def committed_lines(out_dir):
    """Every line of the FileSink's committed part files (in-progress and
    pending files start with '.')."""
    lines = []
    for root, _, files in os.walk(out_dir):
        for name in files:
            if not name.startswith("."):
                with open(os.path.join(root, name)) as f:
                    lines += f.read().splitlines()
    return lines


def pipeline(name, src, parallelism, branches, checkpoint_ms=500):
    return json.dumps({"name": name, "source": src, "parallelism": parallelism,
                       "checkpoint_ms": checkpoint_ms, "branches": branches})


def echo_branch(name, sink, options=None, **settings):
    settings.setdefault("timeout_ms", 10000)
    return {"name": name, "sink": sink,
            "ops": [{"op": "echo", "options": options or {}, "settings": settings}]}


@pytest.fixture(scope="module")
def flink():
    """The module's cluster: 2 TaskManagers x 2 slots, fnworker from a
    counting runner directory."""
    runner = make_cluster_runner("cluster-runner")
    c = cluster.Cluster(runner)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def test_taskmanagers_launch_fnworker(flink):
    """(a) A real TaskManager's environment: each of the 4 subtasks (2 per
    TaskManager) gets its own fnworker, launched through
    $PYFLINK_UDF_RUNNER_DIR/pyflink-udf-runner.sh with Beam's arguments and
    the TaskManager's BOOT_LOG_DIR; the worker's start-up line reaches the
    boot log and the TaskManager's log (Logging service); every row arrives."""
    n = 2000
    before = len(launch_lines(flink.runner_dir))
    out = os.path.join(flink.base, "out-launch")
    jid = flink.submit(JOB, [pipeline("launch", {"kind": "seq", "count": n}, 4, [
        echo_branch("fnw-echo", out, {"delay_ms": 20}, capacity=8, output_mode="ORDERED")])])
    flink.wait_job(jid, ("RUNNING",))
    boot_logs = {}
    while flink.job(jid)["state"] not in ("FINISHED", "FAILED", "CANCELED"):
        for i in range(2):
            for root, _, files in os.walk(flink.tm_tmp(i)):
                if "flink-python-udf-boot.log" in files:
                    with open(os.path.join(root, "flink-python-udf-boot.log"), errors="replace") as f:
                        boot_logs[(i, root)] = f.read()
        time.sleep(0.2)
    flink.wait_job(jid)
    assert sorted(int(x) for x in committed_lines(out)) == list(range(1, n + 1))
    assert flink.failures(jid) == [], flink.exceptions(jid)

    launches = launch_lines(flink.runner_dir)[before:]
    assert len(launches) == 4, launches
    per_tm = [0, 0]
    for pid, boot, gateway, *args in launches:
        assert args[0].startswith("--id=") and re.match(r"--provision_endpoint=localhost:\d+$", args[1]), args
        path = boot[len("boot="):]
        tm = [i for i in range(2) if path.startswith(flink.tm_tmp(i) + os.sep)]
        assert tm, "BOOT_LOG_DIR %r is not under a TaskManager's io.tmp.dirs" % path
        per_tm[tm[0]] += 1
        assert gateway == "gateway_disabled=true"
    assert per_tm == [2, 2], per_tm

    for i in range(2):
        started = START_LINE.findall(flink.tm_log(i))
        assert len(started) >= 2, "TaskManager %d logged %d fnworker start-up lines" % (i, len(started))
    # A boot log is deleted with the job's Python environment; while the job
    # ran, the ones seen hold the worker's own start-up line.
    assert boot_logs, "no flink-python-udf-boot.log seen under the TaskManagers' tmp dirs"
    assert any(START_LINE.search(text) for text in boot_logs.values()), boot_logs
    for text in boot_logs.values():
        assert broken_boot_lines(text) == [], text


def _total(metrics, suffix):
    """The sum over subtasks of a counter `<subtask>.<suffix>`."""
    vals = [int(v) for k, v in metrics.items() if k.split(".", 1)[1] == suffix]
    return sum(vals) if vals else None


def _dist(metrics, suffix):
    """Subtasks' DistributionResult{sum=, count=, min=, max=} merged."""
    out = None
    for k, v in metrics.items():
        if k.split(".", 1)[1] != suffix:
            continue
        d = {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+)=(-?\d+)", v)}
        if out is None:
            out = d
        else:
            out = {"sum": out["sum"] + d["sum"], "count": out["count"] + d["count"],
                   "min": min(out["min"], d["min"]), "max": max(out["max"], d["max"])}
    return out


STEP_METRICS = ("recordsIn", "recordsOut", "asyncCalls", "batches", "retries", "timeouts",
                "failures", "emptyResults", "batchSize", "asyncCallDurationMs", "inflightHighWater")


def test_metrics_through_rest_api(flink):
    """(b) The per-step metrics docs/operations.md promises ("Async semantics",
    Metrics), read through Flink's REST API while a job runs: one branch
    whose every call fails once and is retried, one whose every call returns
    an empty result, one whose every call times out (TIMEOUT_EMPTY). The
    job's source watches a directory (it never ends): the figures are read
    once the first file is through, again after a second file arrives, and
    checked exactly."""
    n = 150      # lines per file, 2 files, parallelism 2
    src = os.path.join(flink.base, "in-metrics")
    os.makedirs(src)

    def add_file(f):
        tmp = os.path.join(src, ".f%d.tmp" % f)   # the source skips dot files
        with open(tmp, "w") as fh:
            fh.write("".join("%d\n" % i for i in range(f * n + 1, f * n + n + 1)))
        os.rename(tmp, os.path.join(src, "f%d.txt" % f))
    total = 2 * n
    outs = {b: os.path.join(flink.base, "out-" + b) for b in ("retry", "empty", "timeout")}
    branches = [
        echo_branch("fnw-retry", outs["retry"], {"fail_attempts": 1, "delay_ms": 10}, capacity=2,
                    retry={"fixed_delay": [2, 20, True, False]}),
        echo_branch("fnw-empty", outs["empty"], {"empty_attempts": 1}),
        echo_branch("fnw-timeout", outs["timeout"], {"hang": True}, timeout_ms=100,
                    on_timeout="EMPTY", capacity=50),
    ]
    add_file(0)
    jid = flink.submit(JOB, [pipeline("metrics", {"kind": "files", "dir": src}, 2, branches, 1000)])
    try:
        flink.wait_job(jid, ("RUNNING",))
        vid = flink.vertex(jid, "fnw-retry")["id"]

        def fnworker_metrics():
            """fnworker's figures of every subtask (registered by Flink
            when a bundle first reports them)."""
            return flink.vertex_metrics(jid, vid, [k for k in flink.vertex_metrics(jid, vid)
                                                   if ".fnworker.echo_0." in k])

        def step(branch, metrics):
            prefix = "fnw-%s.fnworker.echo_0." % branch
            return {m: (_dist if m in ("batchSize", "asyncCallDurationMs") else _total)(metrics, prefix + m)
                    for m in STEP_METRICS if m != "inflightHighWater"}

        def figures_at(count):
            return flink.wait(lambda: (lambda m: m if all(
                _total(m, "fnw-%s.fnworker.echo_0.recordsIn" % b) == count
                for b in ("retry", "empty", "timeout")) else None)(fnworker_metrics()), 120,
                "recordsIn %d on every branch" % count)

        # The first file through: the figures so far, from the running job.
        first = {b: step(b, figures_at(n)) for b in ("retry", "empty", "timeout")}
        assert (first["retry"]["retries"], first["retry"]["asyncCalls"], first["retry"]["recordsOut"]) == \
            (n, n, n), first["retry"]
        assert (first["empty"]["emptyResults"], first["timeout"]["timeouts"]) == (n, n), first
        # A second file: the figures grow to the total.
        add_file(1)
        metrics = figures_at(total)

        # every committed row of the retrying branch, none of the others
        flink.wait(lambda: len(committed_lines(outs["retry"])) >= total, 120,
                   "every row of the retrying branch committed")
        assert sorted(int(x) for x in committed_lines(outs["retry"])) == list(range(1, total + 1))
        op = {b: {m: _total(flink.vertex_metrics(jid, vid, [k for k in flink.vertex_metrics(jid, vid)
                                                               if k.endswith(".fnw-%s.%s" % (b, m))]),
                            "fnw-%s.%s" % (b, m)) for m in ("numRecordsIn", "numRecordsOut")}
              for b in ("retry", "empty", "timeout")}
    finally:
        flink.cancel(jid)
    retry, empty, timeout = (step(b, metrics) for b in ("retry", "empty", "timeout"))
    one_each = {"sum": total, "count": total, "min": 1, "max": 1}
    assert retry == dict(recordsIn=total, recordsOut=total, asyncCalls=total, batches=0, retries=total,
                         timeouts=0, failures=0, emptyResults=0, batchSize=one_each,
                         asyncCallDurationMs=retry["asyncCallDurationMs"])
    # a call: 10 ms attempt, 20 ms back-off, 10 ms attempt
    d = retry["asyncCallDurationMs"]
    assert d["count"] == total and d["min"] >= 39 and d["sum"] >= 39 * total, d
    assert empty == dict(recordsIn=total, recordsOut=0, asyncCalls=total, batches=0, retries=0,
                         timeouts=0, failures=0, emptyResults=total, batchSize=one_each,
                         asyncCallDurationMs=empty["asyncCallDurationMs"])
    # a timed-out input dropped by TIMEOUT_EMPTY ends with no output: it is
    # a timeout and an empty result
    assert timeout == dict(recordsIn=total, recordsOut=0, asyncCalls=total, batches=0, retries=0,
                           timeouts=total, failures=0, emptyResults=total, batchSize=one_each,
                           asyncCallDurationMs=timeout["asyncCallDurationMs"])
    d = timeout["asyncCallDurationMs"]
    assert d["count"] == total and 100 <= d["min"] and d["max"] < 1000, d
    high = {b: [int(v) for k, v in metrics.items() if k.endswith("fnw-%s.fnworker.echo_0.inflightHighWater" % b)]
            for b in ("retry", "timeout")}
    assert high["retry"] and all(1 <= h <= 2 for h in high["retry"]), high     # capacity 2
    assert high["timeout"] and all(1 <= h <= 50 for h in high["timeout"]), high
    # The service-call figures (docs/metrics.md): requests are attempts,
    # one success per call that ended with a result, none for a call its
    # timeout settled; no resilience feature is on, so their counters are 0
    calls = {b: {m: _total(metrics, "fnw-%s.fnworker.echo_0.%s" % (b, m))
                 for m in ("requests", "successes", "overloaded", "breakerRejected", "fallbacks",
                           "breakerOpened")} for b in ("retry", "empty", "timeout")}
    quiet = dict(overloaded=0, breakerRejected=0, fallbacks=0, breakerOpened=0)
    assert calls == {"retry": dict(requests=2 * total, successes=total, **quiet),
                     "empty": dict(requests=total, successes=total, **quiet),
                     "timeout": dict(requests=total, successes=0, **quiet)}, calls
    # Latency quantiles of the last bundle, per subtask, in µs (the
    # histogram is within 12.5%): the retrying calls take 10 + 20 + 10 ms,
    # the timed-out ones 100 ms
    for b, floor in (("retry", 35000), ("timeout", 87500)):
        q = {s: [int(v) for k, v in metrics.items() if k.endswith("fnw-%s.fnworker.echo_0.callLatency%s" % (b, s))]
             for s in ("P50Us", "P95Us", "P99Us")}
        assert q["P50Us"] and len(q["P50Us"]) == len(q["P99Us"]) == len(q["P95Us"]), q
        for p50, p95, p99 in zip(q["P50Us"], q["P95Us"], q["P99Us"]):
            assert floor <= p50 <= p95 <= p99 < 1000000, (b, q)
    # no call is out once a bundle has ended
    inflight = [int(v) for k, v in metrics.items() if k.endswith(".fnworker.echo_0.inflightCalls")]
    assert inflight and set(inflight) == {0}, inflight
    # Flink's own operator counters agree
    assert op == {"retry": {"numRecordsIn": total, "numRecordsOut": total},
                  "empty": {"numRecordsIn": total, "numRecordsOut": 0},
                  "timeout": {"numRecordsIn": total, "numRecordsOut": 0}}, op
    assert committed_lines(outs["empty"]) == [] and committed_lines(outs["timeout"]) == []


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is gone for our purpose
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_taskmanager_killed_exactly_once(flink):
    """(c) Checkpointing on, an exactly-once FileSink right after fnworker:
    a TaskManager's JVM is killed (kill -9) mid-job, after a checkpoint has
    committed rows; a replacement TaskManager joins, Flink restarts the lost
    subtasks from the checkpoint (fixed-delay restart strategy, region
    failover) and every row is in the committed files exactly once. The
    killed TaskManager's workers do not outlive it. Runs last in the module:
    it leaves tm1 and tm2 running."""
    n = 40000
    before = len(launch_lines(flink.runner_dir))
    out = os.path.join(flink.base, "out-kill")
    jid = flink.submit(JOB, [pipeline("kill", {"kind": "seq", "count": n}, 4, [
        echo_branch("fnw-echo", out, {"delay_ms": 20}, capacity=20)], checkpoint_ms=500)])
    flink.wait_job(jid, ("RUNNING",))
    flink.wait(lambda: (flink.rest("/jobs/%s/checkpoints" % jid)["counts"]["completed"] >= 1
                        and committed_lines(out)), 120, "a completed checkpoint with committed rows")
    done_before = len(committed_lines(out))
    assert done_before < n, "the job finished before the kill: make it longer"
    workers = [int(line[0]) for line in launch_lines(flink.runner_dir)[before:]
               if line[1].startswith("boot=" + flink.tm_tmp(0) + os.sep)]
    assert len(workers) == 2, launch_lines(flink.runner_dir)[before:]

    flink.kill_taskmanager(0)
    killed = time.time()
    flink.start_taskmanager()   # tm2, as a supervisor would
    flink.wait(lambda: not any(_alive(p) for p in workers), 60,
               "the killed TaskManager's fnworkers %s to exit" % workers)
    worker_exit_s = time.time() - killed
    flink.wait_job(jid, ("FINISHED",), timeout=300)
    # the killed TaskManager's boot log stays (nobody cleans its tmp dir): its
    # two workers' last words, whole
    for root, _, files in os.walk(flink.tm_tmp(0)):
        if "flink-python-udf-boot.log" in files:
            with open(os.path.join(root, "flink-python-udf-boot.log"), errors="replace") as f:
                text = f.read()
            assert broken_boot_lines(text) == [], text

    rows = sorted(int(x) for x in committed_lines(out))
    missing = sorted(set(range(1, n + 1)) - set(rows))
    dup = len(rows) - len(set(rows))
    assert not missing and not dup and rows == list(range(1, n + 1)), \
        "%d rows missing (first %s), %d duplicated" % (len(missing), missing[:10], dup)
    cps = flink.rest("/jobs/%s/checkpoints" % jid)
    assert cps["latest"].get("restored"), "the job did not restore from a checkpoint: %s" % cps["latest"]
    relaunched = [line for line in launch_lines(flink.runner_dir)[before:]
                  if line[1].startswith("boot=" + flink.tm_tmp(2) + os.sep)]
    assert relaunched, "the replacement TaskManager launched no fnworker"
    # every job of the module has ended: none of its workers is left
    pids = [int(line[0]) for line in launch_lines(flink.runner_dir)]
    flink.wait(lambda: not any(_alive(p) for p in pids), 60,
               "every fnworker launched in this module to exit")
    print("killed after %d of %d rows committed; the killed TaskManager's workers exited within %.1f s"
          % (done_before, n, worker_exit_s))
