"""What the relay cases (test_relay.py, issue 21) share: which worker runs
the jobs' Python functions, the Python worker processes Flink or fnworker
start, the lines the worker logs about the relay, and a wheel made on the
spot for set_python_requirements.

The cases run either way, chosen by FNW_E2E_WORKER when pytest starts:

  fnworker (default)  Flink launches fnworker (PYFLINK_UDF_RUNNER_DIR, as for
                      every case of the suite), which runs its own operations
                      and relays every other Python function to PyFlink's own
                      Python worker, started as its child;
  pyflink             no PYFLINK_UDF_RUNNER_DIR: PyFlink's own worker runs the
                      jobs, so the expected results come from PyFlink itself
                      (cases with fnworker operations are skipped).

Either way Flink's `python` (python.executable, default `python` on PATH)
must have PyFlink: the system python3 has none. `use_venv_python()` puts
this virtualenv's bin first on PATH before the gateway JVM starts (conftest).
"""

import base64
import hashlib
import os
import re
import sys
import zipfile

WORKER = os.environ.get("FNW_E2E_WORKER", "fnworker")
if WORKER not in ("fnworker", "pyflink"):
    raise SystemExit("FNW_E2E_WORKER is %r: use fnworker or pyflink" % WORKER)
RELAYED = WORKER == "fnworker"

VENV_BIN = os.path.dirname(os.path.abspath(sys.executable))

# The worker's log lines about the relay (docs/design/relay.md, section 9).
CHILD_START = re.compile(r"relay: starting PyFlink's Python worker.*?\(pid (\d+)\)")
RELAYED_DESCRIPTOR = re.compile(r"relay: descriptor (\S+) runs in PyFlink's Python worker")
# PyFlink's own command line for its worker (pyflink-udf-runner.sh; the relay's child too).
BEAM_BOOT = "pyflink.fn_execution.beam.beam_boot"


def use_venv_python():
    """This virtualenv's bin first on PATH: Flink's `python` then has PyFlink."""
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != VENV_BIN:
        os.environ["PATH"] = os.pathsep.join(p for p in (VENV_BIN, path) if p)


def skip_unless_relayed(pytest):
    if not RELAYED:
        pytest.skip("FNW_E2E_WORKER=pyflink: this case runs fnworker operations")


# ---- processes ------------------------------------------------------------------------------

def _children():
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                s = f.read()
        except OSError:
            continue
        ppid = int(s[s.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def python_workers(root_pid):
    """The pids of PyFlink Python workers (`python -m ...beam_boot`) under
    root_pid, oldest first: PyFlink's own worker, or the relay's child."""
    kids = _children()
    out, todo = [], [root_pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, ()):
            todo.append(c)
            if BEAM_BOOT in cmdline(c) and not _is_zombie(c):
                out.append(c)
    return sorted(out)


def _is_zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


# ---- a wheel for set_python_requirements --------------------------------------------------

def make_wheel(directory, name, version, module_source):
    """A pure-Python wheel <name>-<version>-py3-none-any.whl in directory with
    one module <name> (module_source), built by hand (no network, no build
    backend); returns its path. pip installs it with --no-index --find-links."""
    files = {
        "%s/__init__.py" % name: module_source,
        "%s-%s.dist-info/METADATA" % (name, version):
            "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version),
        "%s-%s.dist-info/WHEEL" % (name, version):
            "Wheel-Version: 1.0\nGenerator: fnworker-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "%s-%s.dist-info/RECORD" % (name, version)
    lines = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    lines.append("%s,," % record)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "%s-%s-py3-none-any.whl" % (name, version))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, text in files.items():
            z.writestr(p, text)
        z.writestr(record, "\n".join(lines) + "\n")
    return path
