"""Failure paths as Flink reports them: a failing operation fails the job
with fnworker's message in the exception, and a runner directory without
fnworker fails it with the boot log of pyflink-udf-runner.sh."""

import os

import pytest
from pyflink.common import Time, Types

import fnworker
import fnw_e2e
from fnw_e2e import collect
from fnworker import Operation
from jvals import causes

ROW = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs", "echo_job.py")


@pytest.mark.smoke
def test_failing_operation_fails_the_job_with_its_message(env, ran_in_fnworker):
    ds = env.from_collection([(n, "r%d" % n) for n in range(10)], type_info=ROW)
    op = Operation("echo", fail_every=3, fail_message="the e2e service is down (code 503)")
    out = fnworker.unordered_wait(ds, op, Time.seconds(5), output_type=ROW)
    with pytest.raises(Exception) as e:
        collect(out)
    text = causes(e.value)
    assert "the e2e service is down (code 503)" in text
    assert "operation 'echo'" in text, text   # fnworker names the operation and the transform


def test_batch_failure_names_the_operation(env, ran_in_fnworker):
    ds = env.from_collection([(n, "r%d" % n) for n in range(10)], type_info=ROW)
    op = Operation("echo", fail_every=1, fail_message="batch refused")
    out = fnworker.ordered_wait_batch(ds, op, Time.seconds(5), batch_size=4, output_type=ROW)
    with pytest.raises(Exception) as e:
        collect(out)
    assert "batch refused" in causes(e.value)


def test_missing_fnworker_binary_reports_the_boot_log(tmp_path):
    """A runner directory with pyflink-udf-runner.sh but no fnworker: the
    script says so in the boot log, and Flink puts the boot log into the
    exception the job fails with."""
    runner = fnw_e2e.make_runner_dir(str(tmp_path / "runner"), binary=None)
    assert not os.path.exists(os.path.join(runner, "fnworker"))
    r = fnw_e2e.run_job_script(JOB, runner, timeout=240)
    assert r.returncode == 1 and "FAILED" in r.stdout, r.stdout[-3000:]
    assert ("pyflink-udf-runner.sh: fnworker not found at %s/fnworker" % runner) in r.stdout, r.stdout[-3000:]


def test_own_process_job_runs(tmp_path):
    """The control of the case above: the same script with fnworker in its
    runner directory succeeds, so the failure is the missing binary."""
    runner = fnw_e2e.make_runner_dir(str(tmp_path / "runner"))
    r = fnw_e2e.run_job_script(JOB, runner, timeout=240)
    assert r.returncode == 0 and "RESULT [(1, 'a'), (2, 'b')]" in r.stdout, r.stdout[-3000:]
    assert fnw_e2e.launches(runner) == 1
