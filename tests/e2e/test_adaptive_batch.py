"""Adaptive batching on a real Flink: a kserve batch job with
batch_size="auto" and a latency target against the test server's `slow`
model (5 ms + 0.5 ms per row, 2 requests at once). Every output is exact, and
the batch sizes the server saw follow the load: a trickle (an echo step
ahead of it lets through one row every 2 ms) gets small batches, sent by the
tuner's delay; a burst of the same rows gets batches near the maximum,
since the calls are then the bottleneck."""

import json
import os
import time

from pyflink.common import Time, Types

import fnworker
from fnworker import Operation
from fnw_e2e import collect
from services import serve

IN = Types.ROW_NAMED(["id", "x"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
OUT = Types.ROW_NAMED(["id", "y"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
MAX = 64


def slow_stats(server):
    """(requests, rows) the server answered for `slow` so far (its stats.json
    is rewritten within 100 ms of a change)."""
    time.sleep(0.3)
    path = os.path.join(server.dir, "stats.json")
    if not os.path.exists(path):
        return 0, 0
    with open(path) as f:
        s = json.load(f).get("slow", {})
    return s.get("requests", 0), s.get("rows", 0)


def scored(env, server, data, trickle):
    ds = env.from_collection(data, type_info=IN)
    if trickle:
        # one row at a time, 2 ms each: ~500 rows/s reach the model step
        ds = fnworker.ordered_wait(ds, Operation("echo", delay_ms=2), Time.seconds(10), capacity=1,
                                   output_type=IN)
    model = Operation("kserve", target=server.address, model_name="slow", inputs="x:FP32[1]=x",
                      outputs="y:FP32[1]=y")
    # capacity 2 x MAX: two calls at once, what the server runs in parallel
    ds = fnworker.ordered_wait_batch(ds, model, Time.seconds(30), "auto", capacity=2 * MAX, output_type=OUT,
                                     target_latency_ms=100, max_batch_size=MAX)
    return [(r[0], list(r[1])) for r in collect(ds)]


def test_batch_size_follows_the_load(env, ran_in_fnworker):
    data = [(i, [(i % 64) / 4.0 - 8.0]) for i in range(1500)]
    want = [(i, [2 * x[0]]) for i, x in data]
    with serve("kserve", "--slow-base-ms", "5", "--slow-row-ms", "0.5", "--slow-concurrency", "2") as server:
        r0, n0 = slow_stats(server)
        assert scored(env, server, data, trickle=True) == want
        r1, n1 = slow_stats(server)
        assert scored(env, server, data, trickle=False) == want
        r2, n2 = slow_stats(server)
    trickle_rows, trickle_reqs = n1 - n0, r1 - r0
    burst_rows, burst_reqs = n2 - n1, r2 - r1
    assert trickle_rows == len(data) and burst_rows == len(data)
    trickle_mean, burst_mean = trickle_rows / trickle_reqs, burst_rows / burst_reqs
    print("rows per request: trickle %.1f (%d requests), burst %.1f (%d requests)"
          % (trickle_mean, trickle_reqs, burst_mean, burst_reqs))
    # 100 ms target, planned with 40%: (40 - 5) ms / (2 ms to arrive + 0.5 ms
    # to serve) ~ 18 rows a batch at most while trickling
    assert trickle_mean <= MAX / 2, (trickle_mean, burst_mean)
    assert burst_mean >= 2 * trickle_mean, (trickle_mean, burst_mean)
