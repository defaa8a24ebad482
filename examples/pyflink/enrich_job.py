"""An enrichment and scoring job run through fnworker: no Python runs on the
TaskManagers, every function below is a native fnworker operation.

1. Each order is enriched from Redis, one lookup per order
   (`HGETALL user:{user_id}` fills the order's `name` and `tier` fields).
2. The enriched orders are scored by an HTTP/JSON model service in batches of
   64 (one POST per batch; a partial batch leaves after 50 ms).
3. Only (name, id, score) are kept, and printed by Flink's own print sink.

Steps 1-3 are fused by Flink into one Python operator, so fnworker runs them
as one chain. The services' addresses come from the environment of the
script (they go into the job): REDIS_ADDRESS (default 127.0.0.1:6379), a
Redis holding hashes user:<id> with fields name and tier, and SCORER_URL
(default http://127.0.0.1:8080/v1/score), a scoring service answering
POST {"inputs": [...]} with {"outputs": [{"score": ...}, ...]} in input
order. The secrets come from the TaskManagers' environment, read by
fnworker: FNW_SECRET_REDIS_PASSWORD and FNW_SECRET_SCORER_TOKEN (only
FNW_SECRET_* variables by default: docs/security.md, "Environment references").

Run it on a Flink whose TaskManagers have PYFLINK_UDF_RUNNER_DIR pointing at
fnworker (flink-conf.yaml here):

    PYTHONPATH=/path/to/fnworker/python flink run -py enrich_job.py

`make demo` runs this job on a local Flink with 100,000 orders, a local
Redis and a local scoring server (scripts/demo-flink.py). For a KServe v2 /
Triton model server, see score_job.py: the `kserve` operation sends the
rows' tensors over gRPC in batches.
"""

import os

from pyflink.common import Time, Types
from pyflink.datastream import StreamExecutionEnvironment

import fnworker
from fnworker import Operation, RetryStrategy

ORDER = Types.ROW_NAMED(["id", "user_id", "amount"], [Types.LONG(), Types.LONG(), Types.DOUBLE()])
ENRICHED = Types.ROW_NAMED(["id", "user_id", "amount", "name", "tier"],
                           [Types.LONG(), Types.LONG(), Types.DOUBLE(), Types.STRING(), Types.STRING()])
SCORED = Types.ROW_NAMED(["id", "user_id", "amount", "name", "tier", "score"],
                         [Types.LONG(), Types.LONG(), Types.DOUBLE(), Types.STRING(), Types.STRING(),
                          Types.DOUBLE()])
RESULT = Types.ROW_NAMED(["name", "id", "score"], [Types.STRING(), Types.LONG(), Types.DOUBLE()])

# Redis: an IP address (the worker never blocks on a DNS lookup), the
# password from the TaskManager's environment, never from the job (only
# FNW_SECRET_* variables by default: docs/security.md, "Environment references").
USERS = Operation("redis", address=os.environ.get("REDIS_ADDRESS", "127.0.0.1:6379"),
                  command="HGETALL user:{user_id}", password_env="FNW_SECRET_REDIS_PASSWORD",
                  on_missing="null")

# The model service: one JSON object per order, the batch wrapped in
# {"inputs": [...]}, each order's score read from the response by index.
SCORER = Operation("http", method="POST",
                   url=os.environ.get("SCORER_URL", "http://127.0.0.1:8080/v1/score"),
                   body='{{"amount": {amount}, "tier": {tier}}}',
                   batch_body='{"inputs": {items}}',
                   **{"result.score": "/outputs/{i}/score",
                      "header.Authorization": "Bearer {env:FNW_SECRET_SCORER_TOKEN}"})


def build(orders):
    """orders: a DataStream of ORDER; returns the DataStream of RESULT."""
    # Up to 1000 lookups in flight, 1 s each, retried twice after 100 ms.
    enriched = fnworker.unordered_wait_with_retry(
        orders, USERS, Time.seconds(1),
        RetryStrategy.fixed_delay(2, 100, retry_on_error=True), capacity=1000, output_type=ENRICHED)

    # Batches of 64, a partial batch after 50 ms, 5 s per batch, outputs in input order.
    scored = fnworker.ordered_wait_batch(
        enriched, SCORER, Time.seconds(5), batch_size=64, batch_timeout=Time.milliseconds(50),
        capacity=1024, output_type=SCORED)

    return fnworker.process(scored, Operation("project", fields="name,id,score"), output_type=RESULT)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    orders = env.from_collection(
        [(1, 7, 12.5), (2, 8, 99.0), (3, 7, 3.25), (4, 9, 42.0)], type_info=ORDER)
    # Flink's print sink (each row's toString on the TaskManager's stdout);
    # PyFlink's own .print() would add a Python map (a Python hop per record).
    fnworker.print(build(orders))
    env.execute("fnworker enrichment and scoring")


if __name__ == "__main__":
    main()
