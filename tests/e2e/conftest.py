"""Session set-up of the end-to-end suite: before PyFlink starts its gateway
JVM (whose MiniCluster's TaskManagers inherit this process's environment),
point Flink at a runner directory that launches fnworker, and keep PyFlink
from starting its loopback server."""

import os
import tempfile

import pytest

import fnw_e2e
import relay_env

_RUNNER = None


def pytest_configure(config):
    global _RUNNER
    if not os.access(fnw_e2e.FNWORKER, os.X_OK):
        raise pytest.UsageError("fnworker is not built at %s (run make first)" % fnw_e2e.FNWORKER)
    base = os.path.join(fnw_e2e.BUILD, "e2e")
    os.makedirs(base, exist_ok=True)
    _RUNNER = fnw_e2e.make_runner_dir(tempfile.mkdtemp(prefix="runner-", dir=base))
    if relay_env.RELAYED:   # FNW_E2E_WORKER=pyflink: PyFlink's own worker (relay_env.py)
        os.environ["PYFLINK_UDF_RUNNER_DIR"] = _RUNNER
    relay_env.use_venv_python()   # Flink's `python` must have PyFlink (the relay's child)
    # The local Flink's log (the gateway JVM's, with its MiniCluster's
    # TaskManagers) goes beside the runner dir, one per session, not into the
    # shared virtualenv (PyFlink's pyflink_gateway_server.get_log_dir reads
    # FLINK_LOG_DIR).
    os.environ.setdefault("FLINK_LOG_DIR", os.path.join(_RUNNER, "log"))
    os.makedirs(os.environ["FLINK_LOG_DIR"], exist_ok=True)
    os.environ["_python_worker_execution_mode"] = "process"


@pytest.fixture(scope="session")
def runner_dir():
    """The PYFLINK_UDF_RUNNER_DIR of the session's MiniCluster."""
    return _RUNNER


@pytest.fixture
def env(runner_dir):
    """A fresh StreamExecutionEnvironment on the session's MiniCluster, parallelism 1."""
    from pyflink.datastream import StreamExecutionEnvironment
    e = StreamExecutionEnvironment.get_execution_environment()
    e.set_parallelism(1)
    return e


@pytest.fixture
def ran_in_fnworker(runner_dir):
    """Asserts, after the test, that fnworker was launched during it."""
    before = fnw_e2e.launches(runner_dir)
    yield
    assert fnw_e2e.launches(runner_dir) > before, "the job did not launch fnworker"
