"""Calling services the way production needs (docs/resilience.md), on a real
Flink: a job against a rate-limited HTTP service completes with every row
and no failure (adaptive concurrency, Retry-After), and a job whose service
goes down mid-job finishes with the fallback value on the rows of the
outage while the circuit breaker keeps calls away from the service; and
the two jobs of docs/resilience.md run as written."""

import json
import os
import re
import tempfile
import threading
import time
import urllib.request
import uuid

from pyflink.common import Time, Types

import fnworker
from fnworker import Operation, RetryStrategy
from fnw_e2e import ROOT, collect, run_job_script
from services import http_server, kserve_server, serve  # noqa: F401 (fixtures)

SRC = Types.ROW_NAMED(["id"], [Types.LONG()])
OUT = Types.ROW_NAMED(["id", "ok"], [Types.LONG(), Types.BOOLEAN()])


def stats(server, key):
    with urllib.request.urlopen(server.url("/stats?key=" + key), timeout=10) as r:
        return json.load(r)


def test_rate_limited_service_completes_every_row(env, ran_in_fnworker, http_server):
    """600 rows, capacity 1000, to a service that takes 150 calls a second
    and answers 429 + Retry-After: 1 above that: the job ends with all 600
    rows answered by the service, no failure and no retry setting; the
    service did refuse calls (so the limiter was exercised)."""
    key = uuid.uuid4().hex
    op = Operation("http", url=http_server.url("/limited?rps=150&key=" + key), **{"result.ok": "/ok"})
    ds = env.from_collection([(i,) for i in range(600)], type_info=SRC)
    got = [tuple(r) for r in collect(fnworker.ordered_wait(ds, op, Time.seconds(120), 1000, output_type=OUT))]
    assert got == [(i, True) for i in range(600)]
    st = stats(http_server, key)
    assert st["ok"] == 600
    assert st["refused"] > 0


def test_outage_with_breaker_and_fallback(env, ran_in_fnworker, http_server):
    """1000 rows paced at about 200 a second (an echo step, 5 ms a row, one
    at a time, in front); the service is down from 1 s to 3 s
    after its first call. With a breaker (3 failures, 300 ms cool-down) and
    fallback {"ok": false}, the job succeeds: every row comes out, rows of
    the outage carry the fallback, and the service saw few calls while down
    (the breaker's first 3 and one probe per cool-down, not one per row)."""
    key = uuid.uuid4().hex
    op = Operation("http", url=http_server.url("/outage?after=1&for=2&key=" + key), **{"result.ok": "/ok"})
    ds = env.from_collection([(i,) for i in range(1000)], type_info=SRC)
    paced = fnworker.ordered_wait(ds, Operation("echo", delay_ms=5), Time.seconds(60), 1, output_type=SRC)
    # the settings as the helper's keyword arguments (Operation.with_settings takes the same)
    got = [tuple(r) for r in collect(fnworker.ordered_wait(paced, op, Time.seconds(60), 4, output_type=OUT,
                                                           circuit_breaker={"failures": 3, "cooldown_ms": 300},
                                                           fallback={"ok": False}))]
    assert len(got) == 1000
    oks = [ok for _, ok in got]
    fell_back = oks.count(False)
    assert fell_back > 100, fell_back           # about 2 s of rows at ~200/s
    assert oks[0] is True and oks[-1] is True   # before and after the outage
    st = stats(http_server, key)
    assert st["ok"] == oks.count(True)
    assert st["down"] < 0.1 * fell_back, st     # the breaker kept calls away


# ---- docs/resilience.md's examples, as written ---------------------------------------

def doc_example(title):
    """The python block after docs/resilience.md's heading `title`, as written."""
    with open(os.path.join(ROOT, "docs", "resilience.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(re.escape("## " + title) + r"\n.*?```python\n(.*?)```", text, re.S)
    assert m, "docs/resilience.md has no python block after %r" % title
    return m.group(1)


def run_doc_example(title, port, runner_dir):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "example.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(doc_example(title))
        p = run_job_script(script, runner_dir, args=[str(port)], timeout=600)
    assert p.returncode == 0, p.stdout[-3000:]
    return re.findall(r"^(?:\d+> )?\+I\[(.*)\]$", p.stdout, re.M)


def test_doc_rate_limited_example_as_written(runner_dir, http_server):
    """docs/resilience.md's rate-limited embedding API job: every one of its
    1000 rows answered by the service, which refused some (429)."""
    rows = run_doc_example("Example: a rate-limited embedding API", http_server.port, runner_dir)
    assert len(rows) == 1000
    assert all(r.endswith(", true") for r in rows), rows[:3]
    st = stats(http_server, "docs")
    assert st["ok"] == 1000 and st["refused"] > 0, st


def test_doc_flapping_model_example_as_written(runner_dir, kserve_server):
    """docs/resilience.md's flapping model server job, the server up: every
    row scored by the model (linear: [1, 2, 3, 4] -> [15.0, 3.0])."""
    rows = run_doc_example("Example: a flapping model server", kserve_server.port, runner_dir)
    assert len(rows) == 10000
    assert all(r.endswith("[15.0, 3.0]") for r in rows), rows[:3]


# ---- a flapping model server ---------------------------------------------------------

def kserve_requests(server, model):
    try:
        with open(os.path.join(server.dir, "stats.json")) as f:
            return json.load(f).get(model, {}).get("requests", 0)
    except (OSError, ValueError):
        return 0


def kserve_inject(server, control):
    tmp = os.path.join(server.dir, "control.json.tmp")
    with open(tmp, "w") as f:
        json.dump(control, f)
    os.rename(tmp, os.path.join(server.dir, "control.json"))


def test_flapping_model_server_with_breaker_and_fallback(env, ran_in_fnworker):
    """kserve, batches of 8, rows paced by an echo step: once the job is
    scoring, the model server answers UNAVAILABLE for 2 s, then recovers.
    With retries, a breaker (3 failed attempts, 500 ms cool-down) and a
    fallback that gives only the scores, the job succeeds; rows scored while
    the server was down carry [-1, -1] and keep their own id; rows before
    and after are scored by the model."""
    feats = Types.ROW_NAMED(["id", "features"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
    scores = Types.ROW_NAMED(["id", "scores"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
    with serve("kserve") as ks:
        def flap():
            deadline = time.time() + 240
            while kserve_requests(ks, "linear") < 20 and time.time() < deadline:
                time.sleep(0.05)
            kserve_inject(ks, {"linear": {"unavailable": 1000000}})
            time.sleep(2)
            kserve_inject(ks, {})
        t = threading.Thread(target=flap, daemon=True)
        t.start()
        ds = env.from_collection([(i, [1.0, 2.0, 3.0, 4.0]) for i in range(1200)], type_info=feats)
        paced = fnworker.ordered_wait(ds, Operation("echo", delay_ms=5), Time.seconds(60), 1, output_type=feats)
        model = Operation("kserve", target=ks.address, model_name="linear",
                          inputs="x:FP32[4]=features", outputs="y:FP32[2]=scores").with_settings(
            timeout_ms=5000, retry=RetryStrategy.fixed_delay(2, 100),
            circuit_breaker={"failures": 3, "cooldown_ms": 500}, fallback={"scores": [-1.0, -1.0]})
        got = [(i, list(s)) for i, s in collect(fnworker.ordered_wait_batch(
            paced, model, Time.seconds(10), batch_size=8, batch_timeout=Time.milliseconds(20), capacity=64,
            output_type=scores))]
        t.join(5)
    assert [i for i, _ in got] == list(range(1200))          # every row, its own id, in order
    fell_back = [i for i, s in got if s == [-1.0, -1.0]]
    assert len(fell_back) > 50, len(fell_back)              # about 2 s of rows at ~200/s
    assert got[0][1] == [15.0, 3.0] and got[-1][1] == [15.0, 3.0]
    assert all(s in ([15.0, 3.0], [-1.0, -1.0]) for _, s in got)
