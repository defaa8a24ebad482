"""A standalone Flink cluster for the cluster cases (marked `cluster`),
started from the PyFlink wheel's own bin/: the venv's site-packages/pyflink
is a complete FLINK_HOME (bin/jobmanager.sh, taskmanager.sh, flink, conf/,
lib/, opt/). One JobManager and two TaskManagers (2 slots each), every port a
free loopback port, its own conf dir (FLINK_CONF_DIR), log dirs and tmp dirs
under build/e2e/cluster-*/, the TaskManagers' environment carrying
PYFLINK_UDF_RUNNER_DIR (and whatever else a case gives them), waited for
through the REST API, stopped (SIGTERM, then SIGKILL) at the end, when its
tmp dirs are removed (logs, conf and outputs stay).

Each process runs `<script> start-foreground`, which execs the JVM, so the
process this module starts is the JVM itself: a case can kill -9 a
TaskManager by its pid. Jobs are submitted with the wheel's `bin/flink run
-py job.py` (a remote target, so PyFlink runs its workers in process mode),
detached, and followed through the REST API."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import fnw_e2e

JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")


def pyflink_home():
    """This venv's pyflink directory: a FLINK_HOME."""
    import pyflink
    return os.path.dirname(os.path.abspath(pyflink.__file__))


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _java_opts(home):
    """The wheel's env.java.opts.all (the --add-opens JDK 17 needs)."""
    with open(os.path.join(home, "conf", "config.yaml")) as f:
        m = re.search(r"^\s+all:\s*(.+)$", f.read(), re.M)
    return m.group(1).strip() if m else ""


class Cluster(object):
    """One JobManager, `taskmanagers` TaskManagers of `slots` slots each."""

    def __init__(self, runner_dir, tm_env=None, taskmanagers=2, slots=2, name="cluster"):
        self.home = pyflink_home()
        self.base = tempfile.mkdtemp(prefix=name + "-", dir=os.path.join(fnw_e2e.BUILD, "e2e"))
        self.conf_dir = os.path.join(self.base, "conf")
        self.runner_dir = runner_dir
        self.tm_env = dict(tm_env or {})
        self.taskmanagers = taskmanagers
        self.slots = slots
        self.rest_port = free_port()
        self.jm = None
        self.tms = []          # Popen per TaskManager started (killed ones stay listed)
        self._tm_count = 0

    # ---- set-up ----------------------------------------------------------
    def _write_conf(self):
        os.makedirs(self.conf_dir)
        os.makedirs(os.path.join(self.base, "tmp", "jm"))
        for name in os.listdir(os.path.join(self.home, "conf")):
            if name != "config.yaml":
                shutil.copy(os.path.join(self.home, "conf", name), self.conf_dir)
        conf = {
            "env.java.opts.all": _java_opts(self.home),
            "jobmanager.bind-host": "localhost",
            "jobmanager.rpc.address": "localhost",
            "jobmanager.rpc.port": free_port(),
            "jobmanager.memory.process.size": "1024m",
            "jobmanager.execution.failover-strategy": "region",
            "taskmanager.bind-host": "localhost",
            "taskmanager.host": "localhost",
            "taskmanager.numberOfTaskSlots": self.slots,
            "taskmanager.memory.process.size": "1280m",
            "rest.address": "localhost",
            "rest.bind-address": "localhost",
            "rest.port": self.rest_port,
            "blob.server.port": free_port(),
            "metrics.internal.query-service.port": free_port(),
            "metrics.fetcher.update-interval": 500,
            "parallelism.default": 1,
            # a killed TaskManager is noticed within seconds, not 50 s
            "heartbeat.interval": 1000,
            "heartbeat.timeout": 6000,
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 5,
            "restart-strategy.fixed-delay.delay": "1 s",
            "io.tmp.dirs": os.path.join(self.base, "tmp", "jm"),
            "state.checkpoints.dir": "file://" + os.path.join(self.base, "checkpoints"),
            "web.submit.enable": "false",
        }
        with open(os.path.join(self.conf_dir, "config.yaml"), "w") as f:
            for k, v in conf.items():
                f.write("%s: %s\n" % (k, json.dumps(v) if isinstance(v, str) else v))

    def _env(self, log_dir, extra=None):
        env = dict(os.environ)
        for k in ("PYFLINK_UDF_RUNNER_DIR", "_python_worker_execution_mode", "FLINK_HOME",
                  "FNW_POOL_ADDRESS"):
            env.pop(k, None)
        os.makedirs(log_dir, exist_ok=True)
        env.update(FLINK_CONF_DIR=self.conf_dir, FLINK_LOG_DIR=log_dir,
                   FLINK_PID_DIR=log_dir, FLINK_IDENT_STRING="e2e")
        env.update(extra or {})
        return env

    def _spawn(self, script, log_dir, args=(), extra_env=None):
        os.makedirs(log_dir, exist_ok=True)
        out = open(os.path.join(log_dir, "console.out"), "ab")
        try:
            return subprocess.Popen(
                [os.path.join(self.home, "bin", script), "start-foreground"] + list(args),
                env=self._env(log_dir, extra_env), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            out.close()

    def start(self):
        self._write_conf()
        self.jm = self._spawn("jobmanager.sh", os.path.join(self.base, "log", "jm"))
        self.wait(lambda: self._rest_ok("/overview"), 120, "the JobManager's REST API")
        for _ in range(self.taskmanagers):
            self.start_taskmanager()
        self.wait_taskmanagers(self.taskmanagers)
        return self

    def start_taskmanager(self):
        """Start one more TaskManager (tm0, tm1, ...; its own ports and dirs)."""
        i = self._tm_count
        self._tm_count += 1
        name = "tm%d" % i
        tmp = os.path.join(self.base, "tmp", name)
        os.makedirs(tmp, exist_ok=True)
        dyn = {
            "taskmanager.resource-id": name,
            "taskmanager.rpc.port": free_port(),
            "taskmanager.data.port": free_port(),
            "metrics.internal.query-service.port": free_port(),
            "io.tmp.dirs": tmp,
        }
        args = []
        for k, v in dyn.items():
            args += ["-D", "%s=%s" % (k, v)]
        env = {"PYFLINK_UDF_RUNNER_DIR": self.runner_dir}
        env.update(self.tm_env)
        self.tms.append(self._spawn("taskmanager.sh", self.log_dir(i), args, env))
        return i

    def log_dir(self, i):
        return os.path.join(self.base, "log", "tm%d" % i)

    def tm_log(self, i):
        """The text of TaskManager i's log file."""
        text = ""
        d = self.log_dir(i)
        for name in sorted(os.listdir(d)):
            if "taskexecutor" in name and name.endswith(".log"):
                with open(os.path.join(d, name), errors="replace") as f:
                    text += f.read()
        return text

    def tm_tmp(self, i):
        return os.path.join(self.base, "tmp", "tm%d" % i)

    def wait_taskmanagers(self, n, timeout=120):
        def enough():
            tms = self.rest("/taskmanagers").get("taskmanagers", [])
            return len(tms) == n and all(t.get("freeSlots", 0) >= self.slots for t in tms)
        self.wait(enough, timeout, "%d TaskManagers with %d free slots" % (n, self.slots))

    # ---- REST --------------------------------------------------------------
    def rest(self, path):
        url = "http://127.0.0.1:%d%s" % (self.rest_port, path)
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.loads(r.read().decode())

    def _rest_ok(self, path):
        try:
            self.rest(path)
            return True
        except (OSError, urllib.error.URLError, ValueError):
            return False

    def wait(self, cond, timeout, what, interval=0.25):
        deadline = time.time() + timeout
        while True:
            try:
                v = cond()
            except (OSError, urllib.error.URLError, ValueError):
                v = None
            if v:
                return v
            if self.jm is not None and self.jm.poll() is not None:
                raise AssertionError("the JobManager exited (%s) while waiting for %s; logs: %s"
                                     % (self.jm.returncode, what, self.base))
            if time.time() > deadline:
                raise AssertionError("timed out after %ds waiting for %s; logs: %s"
                                     % (timeout, what, self.base))
            time.sleep(interval)

    # ---- jobs --------------------------------------------------------------
    def submit(self, script, args=(), timeout=180, flink_args=()):
        """`bin/flink run -d [flink_args] -py script args`: the job id."""
        env = self._env(os.path.join(self.base, "log", "client"), {
            "PYFLINK_CLIENT_EXECUTABLE": sys.executable,
            "PYTHONPATH": os.pathsep.join(p for p in (fnw_e2e.PYTHON_PKG, os.environ.get("PYTHONPATH"))
                                          if p),
        })
        cmd = [os.path.join(self.home, "bin", "flink"), "run", "-d"] + list(flink_args) + \
              ["-py", script] + list(args)
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout)
        m = re.search(r"JobID ([0-9a-f]{32})", p.stdout)
        assert p.returncode == 0 and m, "flink run failed (%d):\n%s" % (p.returncode, p.stdout[-6000:])
        return m.group(1)

    def job(self, jid):
        return self.rest("/jobs/%s" % jid)

    def wait_job(self, jid, states=("FINISHED",), timeout=180):
        """Wait until the job reaches one of states; fails on a terminal other state."""
        terminal = {"FINISHED", "FAILED", "CANCELED"}

        def reached():
            st = self.job(jid)["state"]
            if st in states:
                return st
            if st in terminal:
                raise AssertionError("job %s ended %s, not %s: %s" % (jid, st, states, self.exceptions(jid)))
            return None
        return self.wait(reached, timeout, "job %s to reach %s" % (jid, "/".join(states)))

    def exceptions(self, jid):
        try:
            ex = self.rest("/jobs/%s/exceptions" % jid)
        except (OSError, ValueError):
            return "(no exceptions)"
        hist = ex.get("exceptionHistory", {}).get("entries", [])
        return json.dumps(hist or ex)[:6000]

    def failures(self, jid):
        """The job's exception history (empty: it never failed over)."""
        return self.rest("/jobs/%s/exceptions" % jid).get("exceptionHistory", {}).get("entries", [])

    def cancel(self, jid):
        req = urllib.request.Request("http://127.0.0.1:%d/jobs/%s?mode=cancel" % (self.rest_port, jid),
                                     method="PATCH")
        try:
            urllib.request.urlopen(req, timeout=10).close()
        except (OSError, urllib.error.URLError):
            pass

    def vertex(self, jid, name_part):
        """The job vertex whose name contains name_part."""
        for v in self.job(jid)["vertices"]:
            if name_part in v["name"]:
                return v
        raise AssertionError("no vertex named like %r in %s" % (name_part, [v["name"] for v in self.job(jid)["vertices"]]))

    def vertex_metrics(self, jid, vid, names=None):
        """{name: value} of a vertex's metrics (every subtask's, as Flink names them)."""
        path = "/jobs/%s/vertices/%s/metrics" % (jid, vid)
        if names is None:
            return {m["id"]: None for m in self.rest(path)}
        out = {}
        names = list(names)
        for i in range(0, len(names), 40):
            q = ",".join(urllib.request.quote(n, safe="") for n in names[i:i + 40])
            for m in self.rest(path + "?get=" + q):
                out[m["id"]] = m.get("value")
        return out

    # ---- tear-down -------------------------------------------------------
    def kill_taskmanager(self, i):
        """kill -9 TaskManager i's JVM."""
        p = self.tms[i]
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)

    def stop(self):
        procs = [p for p in self.tms + [self.jm] if p is not None]
        for p in procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.time() + 30
        for p in procs:
            try:
                p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
        # the TaskManagers' tmp dirs hold the job's jars (some 100 MB a run);
        # logs, conf and sink output stay for a look after a failure
        shutil.rmtree(os.path.join(self.base, "tmp"), ignore_errors=True)
