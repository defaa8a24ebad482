"""The local services the end-to-end jobs call: redis-server, the Python test
HTTP server and the KServe v2 test model server, each started on a free
127.0.0.1 port by the same scripts the integration tests use
(tests/servers/{redis,pyhttp,kserve}.sh), waited for, and stopped. A watchdog
in those scripts stops a server whose owner (this process) is gone.

Usable as pytest fixtures (redis_server, http_server, kserve_server: one
server per session) and as plain context managers (the demo,
scripts/demo-flink.py, starts its own)."""

import contextlib
import os
import subprocess
import tempfile

import pytest

import fnw_e2e

SERVERS = os.path.join(fnw_e2e.ROOT, "tests", "servers")


class Server(object):
    """A started test server: its port and where it keeps its files."""

    def __init__(self, kind, directory, port):
        self.kind = kind
        self.dir = directory
        self.port = port
        self.address = "127.0.0.1:%d" % port

    def url(self, path=""):
        return "http://%s%s" % (self.address, path)


def _script(kind):
    return os.path.join(SERVERS, kind + ".sh")


@contextlib.contextmanager
def serve(kind, *options, directory=None):
    """Starts tests/servers/<kind>.sh (redis, pyhttp, kserve) in directory (a
    fresh one under build/e2e/ by default), yields its Server, stops it.
    Skips the test (raises RuntimeError outside a test) when the server's program is
    not installed (exit 77)."""
    if directory is None:
        base = os.path.join(fnw_e2e.BUILD, "e2e")
        os.makedirs(base, exist_ok=True)
        directory = tempfile.mkdtemp(prefix=kind + "-", dir=base)
    args = ["sh", _script(kind), "start", directory, "--owner", str(os.getpid())]
    p = subprocess.run(args + list(options), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    if p.returncode == 77:
        if "PYTEST_CURRENT_TEST" in os.environ:
            pytest.skip(p.stderr.strip())
        raise RuntimeError(p.stderr.strip())
    if p.returncode != 0:
        raise RuntimeError("%s did not start: %s" % (kind, p.stderr.strip()))
    server = Server(kind, directory, int(p.stdout.strip().splitlines()[-1]))
    try:
        yield server
    finally:
        subprocess.run(["sh", _script(kind), "stop", directory], timeout=60)


def redis_client(server, password=None):
    """A redis-py client of server (for seeding data)."""
    import redis
    return redis.Redis(host="127.0.0.1", port=server.port, password=password, decode_responses=True)


@pytest.fixture(scope="session")
def redis_server():
    """redis-server on a free loopback port, no password, for the session."""
    with serve("redis") as s:
        yield s


@pytest.fixture(scope="session")
def http_server():
    """tests/servers/http_server.py on a free loopback port, for the session."""
    with serve("pyhttp") as s:
        yield s


@pytest.fixture(scope="session")
def kserve_server():
    """tests/servers/kserve_server.py (models identity, linear, ...) on a free loopback port."""
    with serve("kserve") as s:
        yield s
