"""examples/pyflink/{enrich_job,score_job}.py run as written, each in a
process of its own (its own MiniCluster), against local servers whose
addresses they take from the environment: the examples cannot rot. Their
rows come out of Flink's print sink (fnworker.print) on stdout."""

import os
import re

from fnw_e2e import ROOT, launches, run_job_script
from services import redis_client, serve

EXAMPLES = os.path.join(ROOT, "examples", "pyflink")


def printed_rows(out):
    """The rows Flink's print sink wrote, sorted: '2> +I[a, 1, 2.0]' -> ['a', '1', '2.0']
    (the example runs at the default parallelism, so a subtask prefix, and
    no order across subtasks)."""
    return sorted(m.group(1).split(", ") for m in re.finditer(r"^(?:\d+> )?\+I\[(.*)\]$", out, re.M))


def test_enrich_job_as_written(runner_dir):
    with serve("redis", "--requirepass", "s3cret") as redis, serve("pyhttp") as http:
        r = redis_client(redis, password="s3cret")
        r.hset("user:7", mapping={"name": "ann", "tier": "gold"})
        r.hset("user:8", mapping={"name": "bob", "tier": "silver"})
        before = launches(runner_dir)
        p = run_job_script(os.path.join(EXAMPLES, "enrich_job.py"), runner_dir, extra_env={
            "REDIS_ADDRESS": redis.address, "SCORER_URL": http.url("/v1/score"),
            "FNW_SECRET_REDIS_PASSWORD": "s3cret", "FNW_SECRET_SCORER_TOKEN": "t0ken"})
    assert p.returncode == 0, p.stdout[-3000:]
    assert launches(runner_dir) > before
    # user 9 has no hash: name and tier null, so the score is amount * 1.0
    assert printed_rows(p.stdout) == [["ann", "1", "18.75"], ["ann", "3", "4.875"],
                                      ["bob", "2", "123.75"], ["null", "4", "42.0"]]


def test_score_job_as_written(runner_dir):
    with serve("kserve") as kserve:
        before = launches(runner_dir)
        p = run_job_script(os.path.join(EXAMPLES, "score_job.py"), runner_dir,
                           extra_env={"KSERVE_TARGET": kserve.address})
    assert p.returncode == 0, p.stdout[-3000:]
    assert launches(runner_dir) > before
    assert printed_rows(p.stdout) == [["1", "[15.0", "3.0]"], ["2", "[0.5", "-3.5]"]]
