"""bench/flink_cluster.py — the Flink the W15-W17 rows run on: one
standalone JobManager and one TaskManager (PyFlink 2.3's own Flink, from the
venv's pyflink package, configured under build/bench/flink/), started once per
run on loopback; the REST calls the rows need; and the /proc sampler that
measures the TaskManager JVM and every process under it (the workers Flink
launches) over a job's RUNNING window.

The TaskManager's PYFLINK_UDF_RUNNER_DIR is the bench runner directory
(flink-udf-runner.sh): a job picks its worker by `python.executable`, which
Flink hands to the worker's environment as `python`."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request

HZ = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pyflink_home():
    import pyflink
    return os.path.dirname(os.path.abspath(pyflink.__file__))


def _java_opts(home):
    """env.java.opts.all of PyFlink's own config (the JDK 17 --add-opens)."""
    with open(os.path.join(home, "conf", "config.yaml")) as f:
        text = f.read()
    m = re.search(r"^\s*all:\s*(--add.*)$", text, re.M)
    return m.group(1).strip() if m else ""


class Cluster:
    """A JobManager and a TaskManager (one slot) as child processes."""

    def __init__(self, workdir, runner_dir, extra_env=None):
        self.workdir = workdir
        self.home = pyflink_home()
        self.conf = os.path.join(workdir, "conf")
        self.logs = os.path.join(workdir, "log")
        self.runner_dir = runner_dir
        self.extra_env = extra_env or {}
        self.jm = self.tm = None
        self.rest_port = None

    def _write_conf(self):
        os.makedirs(self.conf, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        for f in ("log4j.properties", "log4j-console.properties", "logback.xml",
                  "logback-console.xml"):
            src = os.path.join(self.home, "conf", f)
            if os.path.exists(src):
                shutil.copy(src, self.conf)
        self.rest_port = free_port()
        conf = {
            "env.java.opts.all": _java_opts(self.home),
            "env.pid.dir": self.workdir,
            "jobmanager.rpc.address": "127.0.0.1",
            "jobmanager.bind-host": "127.0.0.1",
            "jobmanager.rpc.port": str(free_port()),
            "jobmanager.memory.process.size": "1024m",
            "taskmanager.host": "127.0.0.1",
            "taskmanager.bind-host": "127.0.0.1",
            "taskmanager.numberOfTaskSlots": "1",
            "taskmanager.memory.process.size": "1728m",
            "parallelism.default": "1",
            "rest.address": "127.0.0.1",
            "rest.bind-address": "127.0.0.1",
            "rest.port": str(self.rest_port),
            "blob.server.port": "0",
            "io.tmp.dirs": os.path.join(self.workdir, "tmp"),
            # finished jobs stay queryable (subtask times, vertex counts)
            "jobstore.expiration-time": "3600",
        }
        os.makedirs(conf["io.tmp.dirs"], exist_ok=True)
        with open(os.path.join(self.conf, "config.yaml"), "w") as f:
            for k, v in conf.items():
                f.write("%s: %s\n" % (k, json.dumps(v)))

    def _env(self):
        env = dict(os.environ)
        env.update({"FLINK_CONF_DIR": self.conf, "FLINK_LOG_DIR": self.logs,
                    "PYFLINK_UDF_RUNNER_DIR": self.runner_dir})
        env.update(self.extra_env)
        return env

    def start(self, timeout=120):
        self._write_conf()
        bin_dir = os.path.join(self.home, "bin")
        env = self._env()
        out = open(os.path.join(self.logs, "jobmanager.out"), "w")
        self.jm = subprocess.Popen(["bash", os.path.join(bin_dir, "jobmanager.sh"), "start-foreground"],
                                   env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        out = open(os.path.join(self.logs, "taskmanager.out"), "w")
        self.tm = subprocess.Popen(["bash", os.path.join(bin_dir, "taskmanager.sh"), "start-foreground"],
                                   env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            for p, name in ((self.jm, "JobManager"), (self.tm, "TaskManager")):
                if p.poll() is not None:
                    raise RuntimeError("the %s exited (%s); see %s" % (name, p.returncode, self.logs))
            try:
                if self.get("/taskmanagers")["taskmanagers"]:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError("the Flink cluster did not come up in %d s; see %s" % (timeout, self.logs))

    def tm_pid(self):
        """The TaskManager JVM (flink-console.sh execs java, so it is the Popen's pid)."""
        return self.tm.pid

    def stop(self):
        for p in (self.tm, self.jm):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in (self.tm, self.jm):
            if p is None:
                continue
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def get(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.rest_port, path), timeout=10) as r:
            return json.loads(r.read().decode())

    def wait_job(self, job_id, timeout):
        """Waits until the job is globally terminal; returns its details."""
        deadline = time.time() + timeout
        while True:
            d = self.get("/jobs/%s" % job_id)
            if d["state"] in ("FINISHED", "FAILED", "CANCELED"):
                return d
            if time.time() > deadline:
                raise RuntimeError("job %s still %s after %d s" % (job_id, d["state"], timeout))
            time.sleep(0.2)

    def subtask_times(self, job_id, vertex_id):
        d = self.get("/jobs/%s/vertices/%s/subtasktimes" % (job_id, vertex_id))
        return d["subtasks"][0]["timestamps"]

    def tm_log_times(self, pattern, t0, t1):
        """Times (epoch s) of the TaskManager log lines matching pattern
        logged in [t0, t1] (the log's times are local, millisecond)."""
        import datetime
        import glob
        out = []
        rx = re.compile(pattern)
        for path in glob.glob(os.path.join(self.logs, "flink-*taskexecutor-*.log")):
            with open(path, errors="replace") as f:
                for line in f:
                    if not rx.search(line):
                        continue
                    try:
                        t = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
                    except ValueError:
                        continue
                    if t0 <= t <= t1:
                        out.append(t)
        return sorted(out)

    def exceptions(self, job_id):
        try:
            d = self.get("/jobs/%s/exceptions" % job_id)
        except OSError as e:
            return str(e)
        root = d.get("root-exception") or ""
        if not root:
            # Flink 2.x: only the exception history
            entries = d.get("exceptionHistory", {}).get("entries", [])
            if entries:
                trace = entries[0].get("stacktrace") or entries[0].get("exceptionName", "")
                causes = [ln.strip() for ln in trace.splitlines() if ln.strip().startswith("Caused by:")]
                root = "\n".join([trace.splitlines()[0] if trace else ""] + causes)
        return root[:3000]


# ---- /proc ------------------------------------------------------------------------------

def _proc_stat(pid):
    """(ppid, utime+stime ticks, start ticks) of pid, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[19])


def _comm(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            parts = f.read().split(b"\0")
        return " ".join(p.decode(errors="replace") for p in parts[:3])[:120]
    except OSError:
        return "?"


def _threads(pid):
    """{thread name with digits folded to #: utime+stime ticks} of a process."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                s = f.read()
        except OSError:
            continue
        name = re.sub(r"\d+", "#", s[s.index("(") + 1:s.rindex(")")])
        rest = s[s.rindex(")") + 2:].split()
        out[name] = out.get(name, 0) + int(rest[11]) + int(rest[12])
    return out


def machine_busy():
    """(busy ticks, total ticks) of the whole machine (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


class Sampler:
    """Samples every 50 ms the CPU of the TaskManager JVM and of each process
    under it (the runner scripts and workers Flink launches), keyed by
    (pid, start time) so a reused pid is another process. cpu_between()
    gives each process's CPU inside a wall-clock window."""

    def __init__(self, root_pid, period=0.05):
        self.root = root_pid
        self.period = period
        self.samples = {}    # (pid, start) -> [(t, ticks)]
        self.names = {}
        self.machine = []    # (t, busy, total)
        self.threads = []    # (t, {thread name: ticks}) of the JVM, every 5th sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._lock = threading.Lock()

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()

    def _tree(self):
        kids = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            st = _proc_stat(int(name))
            if st:
                kids.setdefault(st[0], []).append(int(name))
        out, todo = [], [self.root]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(kids.get(p, ()))
        return out

    def _run(self):
        while not self._stop.is_set():
            t = time.time()
            with self._lock:
                for pid in self._tree():
                    st = _proc_stat(pid)
                    if not st:
                        continue
                    key = (pid, st[2])
                    if key not in self.samples:
                        self.samples[key] = []
                        self.names[key] = _comm(pid)
                    self.samples[key].append((t, st[1]))
                b, tot = machine_busy()
                self.machine.append((t, b, tot))
                if len(self.machine) % 5 == 1:
                    self.threads.append((t, _threads(self.root)))
            self._stop.wait(self.period)

    @staticmethod
    def _at(series, t):
        """The tick count of a series at time t (its last sample at or before t;
        0 before its first sample: a process that started inside the window
        counts from 0)."""
        v = None
        for ts, ticks in series:
            if ts > t:
                break
            v = ticks
        return 0 if v is None else v

    def cpu_between(self, t0, t1):
        """{key: cpu seconds in [t0, t1]} for the JVM ('tm') and each other process."""
        with self._lock:
            out = {}
            for key, series in self.samples.items():
                if not series or series[-1][0] < t0 or series[0][0] > t1:
                    continue
                a = self._at(series, t0) if series[0][0] <= t0 else 0
                b = self._at(series, t1)
                if b - a > 0:
                    out[key] = (b - a) / HZ
            return out

    def threads_between(self, t0, t1, top=6):
        """The JVM's busiest threads (by name, numbers folded) in [t0, t1]:
        [(name, cpu seconds)], most first."""
        with self._lock:
            pts = [x for x in self.threads if t0 <= x[0] <= t1]
        if len(pts) < 2:
            return []
        a, b = pts[0][1], pts[-1][1]
        d = {k: (v - a.get(k, 0)) / HZ for k, v in b.items()}
        return sorted(((k, round(v, 2)) for k, v in d.items() if v > 0), key=lambda x: -x[1])[:top]

    def machine_between(self, t0, t1):
        """Cores busy on the whole machine in [t0, t1]."""
        with self._lock:
            pts = [m for m in self.machine if t0 <= m[0] <= t1]
        if len(pts) < 2:
            return None
        (ta, ba, tta), (tb, bb, ttb) = pts[0], pts[-1]
        if ttb == tta:
            return None
        return (bb - ba) / HZ / (tb - ta)
