"""What the end-to-end tests share: where the build is, the runner directory
Flink launches fnworker from, and small helpers to run and collect a job.

The runner directory holds fnworker's pyflink-udf-runner.sh and, as
`fnworker`, a wrapper that appends one line to launches.log, copies the
worker's log (its stderr) into worker.log, and then execs the real binary: a test proves that its job ran in fnworker (and not in
PyFlink's Python worker) by the launches it counts."""

import os
import shutil
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("FNW_BUILD", os.path.join(ROOT, "build")))
FNWORKER = os.path.join(BUILD, "fnworker")
PYTHON_PKG = os.path.join(ROOT, "python")

if PYTHON_PKG not in sys.path:
    sys.path.insert(0, PYTHON_PKG)

WRAPPER = """#!/bin/sh
# fnworker, launched by Flink through pyflink-udf-runner.sh: count the launch, then
# run it, its stderr (its log) also appended to worker.log beside this script.
echo "$$ $*" >>'{log}'
fifo_dir=$(mktemp -d) && mkfifo "$fifo_dir/err" || exec '{binary}' "$@"
tee -a '{worker_log}' <"$fifo_dir/err" >&2 &
exec 2>"$fifo_dir/err"
rm -rf "$fifo_dir"
exec '{binary}' "$@"
"""


def make_runner_dir(path, binary=FNWORKER, wrapper=True):
    """A PYFLINK_UDF_RUNNER_DIR at path: the launcher script and fnworker
    (a counting wrapper around binary, or binary itself; None: no fnworker)."""
    os.makedirs(path, exist_ok=True)
    shutil.copy(os.path.join(ROOT, "scripts", "pyflink-udf-runner.sh"), path)
    target = os.path.join(path, "fnworker")
    if os.path.lexists(target):
        os.remove(target)
    if binary is not None:
        if wrapper:
            with open(target, "w") as f:
                f.write(WRAPPER.format(log=os.path.join(path, "launches.log"), binary=binary,
                                       worker_log=os.path.join(path, "worker.log")))
            os.chmod(target, os.stat(target).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        else:
            os.symlink(binary, target)
    return path


def worker_log(runner_dir):
    """What every fnworker launched from runner_dir has logged so far."""
    try:
        with open(os.path.join(runner_dir, "worker.log"), errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def launches(runner_dir):
    """How many times Flink has launched fnworker from runner_dir."""
    try:
        with open(os.path.join(runner_dir, "launches.log")) as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def collect(ds, limit=None):
    """Run the job of ds and return its results (DataStream.execute_and_collect)."""
    with ds.execute_and_collect() as results:
        out = []
        for r in results:
            out.append(r)
            if limit is not None and len(out) >= limit:
                break
        return out


def job_env(runner_dir, extra=None):
    """The environment a job script run in its own process gets: this one,
    with Flink pointed at runner_dir (None: at PyFlink's own worker)."""
    env = dict(os.environ)
    env.pop("PYFLINK_UDF_RUNNER_DIR", None)
    if runner_dir is not None:
        env["PYFLINK_UDF_RUNNER_DIR"] = runner_dir
    env["_python_worker_execution_mode"] = "process"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PYTHON_PKG, env.get("PYTHONPATH")) if p)
    env.update(extra or {})
    return env


def run_job_script(script, runner_dir, args=(), extra_env=None, timeout=300):
    """Run a job script with this virtualenv's Python in a process of its own
    (its own gateway JVM and MiniCluster); returns the CompletedProcess."""
    return subprocess.run([sys.executable, script] + list(args), env=job_env(runner_dir, extra_env),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
