"""make demo: the enrichment job of docs/pyflink.md (examples/pyflink/enrich_job.py) on
a local Flink (PyFlink's MiniCluster) through fnworker, with 100,000 orders.

It starts redis-server (with a password) and the test HTTP server (whose
/v1/score is the scoring model) on free loopback ports, seeds the users,
points the job at them through the environment (REDIS_ADDRESS, SCORER_URL;
FNW_SECRET_REDIS_PASSWORD and FNW_SECRET_SCORER_TOKEN for the worker), runs the job, checks every
output row exactly against the same computation done here, and prints the
rate and what ran where.

    build/flink/2.3/venv/bin/python scripts/demo-flink.py BUILD [ROWS]
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
USERS = 1000            # user ids 1..USERS; every 10th has no hash (name and tier null)
TIERS = ("gold", "silver", "bronze", "basic")
os.environ["FNW_BUILD"] = BUILD
sys.path[:0] = [os.path.join(ROOT, "tests", "e2e"), os.path.join(ROOT, "examples", "pyflink")]

import fnw_e2e  # noqa: E402
from services import redis_client, serve  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "servers"))
from http_server import SCORE_WEIGHTS  # noqa: E402


def say(msg):
    print("demo: " + msg, flush=True)


def user(uid):
    return None if uid % 10 == 0 else ("user-%d" % uid, TIERS[uid % len(TIERS)])


def orders():
    return [(i, 1 + (i * 7919) % USERS, (i % 1000) * 0.25 + 1.0) for i in range(1, ROWS + 1)]


def expected(order_rows):
    out = collections.Counter()
    for oid, uid, amount in order_rows:
        u = user(uid)
        name, tier = u if u else (None, None)
        out[(name, oid, amount * SCORE_WEIGHTS.get(tier, 1.0))] += 1
    return out


def job(out_json):
    """The job itself, in a process of its own whose stdout (the MiniCluster's
    print sink) goes to a file: enrich_job.build on ROWS orders, fnworker.print."""
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.version import __version__ as flink_version
    import enrich_job
    import fnworker

    rows = orders()
    # The plan of the same job (on one order: asking a job for its plan
    # applies PyFlink's chaining, which a job must not see twice).
    shown = StreamExecutionEnvironment.get_execution_environment()
    enrich_job.build(shown.from_collection(rows[:1], type_info=enrich_job.ORDER))
    nodes = json.loads(shown.get_execution_plan()).get("nodes", [])
    env = StreamExecutionEnvironment.get_execution_environment()
    fnworker.print(enrich_job.build(env.from_collection(rows, type_info=enrich_job.ORDER)))
    t0 = time.time()
    result = env.execute("fnworker demo: enrichment and scoring")
    info = {"flink": flink_version, "parallelism": env.get_parallelism(), "wall_s": time.time() - t0,
            "net_ms": result.get_net_runtime(),
            "operators": sorted(set(w for n in nodes for w in (n.get("contents") or "").replace(",", " ").split()
                                    if w.startswith("fnworker:")))}
    with open(out_json, "w") as f:
        json.dump(info, f)


ROW_LINE = re.compile(r"^(?:\d+> )?\+I\[(.*), (-?\d+), ([^,]+)\]$")


def read_rows(path):
    """The print sink's lines '1> +I[name, id, score]' as (name, id, score)."""
    got = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW_LINE.match(line.rstrip("\n"))
            if m:
                name = None if m.group(1) == "null" else m.group(1)
                got[(name, int(m.group(2)), float(m.group(3)))] += 1
    return got


def main():
    if not os.access(fnw_e2e.FNWORKER, os.X_OK):
        sys.exit("demo: %s is missing; run make first" % fnw_e2e.FNWORKER)
    base = os.path.join(BUILD, "demo")
    os.makedirs(base, exist_ok=True)
    runner = fnw_e2e.make_runner_dir(tempfile.mkdtemp(prefix="runner-", dir=base))
    password, token = "demo-%d" % os.getpid(), "token-%d" % os.getpid()
    out_txt, out_json = os.path.join(base, "printed.txt"), os.path.join(base, "job.json")
    with serve("redis", "--requirepass", password, directory=tempfile.mkdtemp(prefix="redis-", dir=base)) \
            as redis, serve("pyhttp", directory=tempfile.mkdtemp(prefix="http-", dir=base)) as http:
        r = redis_client(redis, password=password)
        pipe = r.pipeline(transaction=False)
        for uid in range(1, USERS + 1):
            if user(uid):
                name, tier = user(uid)
                pipe.hset("user:%d" % uid, mapping={"name": name, "tier": tier})
        pipe.execute()
        say("redis-server on %s (%d users), scoring server on %s" % (redis.address, r.dbsize(),
                                                                     http.url("/v1/score")))
        # What the job script reads (the addresses) and what the worker reads
        # (the secrets; the MiniCluster's TaskManagers inherit this environment).
        env = fnw_e2e.job_env(runner, {"REDIS_ADDRESS": redis.address, "SCORER_URL": http.url("/v1/score"),
                                       "FNW_SECRET_REDIS_PASSWORD": password, "FNW_SECRET_SCORER_TOKEN": token})
        say("running examples/pyflink/enrich_job.py on %d orders on a local Flink (MiniCluster) ..." % ROWS)
        t0 = time.time()
        with open(out_txt, "w") as out:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), BUILD, str(ROWS), "--job", out_json],
                               env=env, stdout=out, stderr=subprocess.STDOUT)
        wall = time.time() - t0
    if p.returncode != 0:
        with open(out_txt, encoding="utf-8", errors="replace") as f:
            tail = [line for line in f.read().splitlines() if "Caused by" in line or "Error" in line][-5:]
        say("FAILED: the job exited with %d; its output is in %s:\n  %s" % (p.returncode, out_txt,
                                                                          "\n  ".join(tail)))
        sys.exit(1)
    with open(out_json) as f:
        info = json.load(f)
    got, want = read_rows(out_txt), expected(orders())
    if got != want:
        missing, extra = want - got, got - want
        say("FAILED: %d rows missing, %d unexpected (e.g. missing %s, unexpected %s); output in %s" % (
            sum(missing.values()), sum(extra.values()), list(missing)[:3], list(extra)[:3], out_txt))
        sys.exit(1)
    launched = fnw_e2e.launches(runner)
    say("all %d rows came back exactly as computed here (%d of them for users Redis does not have: name null)"
        % (ROWS, sum(n for (name, _, _), n in got.items() if name is None)))
    say("%.0f rows/s: %d rows in %.1f s, the job's run time on Flink (%.1f s with the MiniCluster's start)"
        % (ROWS / (info["net_ms"] / 1000.0), ROWS, info["net_ms"] / 1000.0, wall))
    say("Flink %s (PyFlink, local MiniCluster), parallelism %d" % (info["flink"], info["parallelism"]))
    say("ran in fnworker, fused into one Python operator: %s" % ", ".join(info["operators"]))
    say("Flink launched fnworker %d times (one per subtask of that operator); no Python worker ran" % launched)
    if launched == 0:
        say("FAILED: fnworker was never launched")
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) > 4 and sys.argv[3] == "--job":
        job(sys.argv[4])
    else:
        main()
