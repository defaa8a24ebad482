"""Batch inference from a PyFlink job: each row's four features are scored by
a KServe v2 / Triton model over gRPC, 64 rows per request (a partial batch
leaves after 50 ms), as a native fnworker operation; no Python runs on the
TaskManagers. The model `linear` takes `x` FP32 [-1, 4] and answers `y` FP32
[-1, 2] (docs/operations.md, "kserve"). The model server's gRPC address comes from
KSERVE_TARGET (default 127.0.0.1:8001). Run it on a Flink whose TaskManagers
have PYFLINK_UDF_RUNNER_DIR pointing at fnworker (flink-conf.yaml here):

    PYTHONPATH=/path/to/fnworker/python flink run -py score_job.py
"""

import os

from pyflink.common import Time, Types
from pyflink.datastream import StreamExecutionEnvironment

import fnworker
from fnworker import Operation, RetryStrategy

FEATURES = Types.ROW_NAMED(["id", "features"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
SCORES = Types.ROW_NAMED(["id", "scores"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])

MODEL = Operation("kserve", target=os.environ.get("KSERVE_TARGET", "127.0.0.1:8001"), model_name="linear",
                  inputs="x:FP32[4]=features", outputs="y:FP32[2]=scores")


def build(rows):
    """rows: a DataStream of FEATURES; returns the DataStream of SCORES."""
    # Up to 8 batches of 64 in flight, 10 s per batch, UNAVAILABLE retried
    # with exponential backoff; outputs in input order.
    return fnworker.ordered_wait_batch(
        rows, MODEL.with_settings(timeout_ms=10000,
                                  retry=RetryStrategy.exponential_backoff(5, 100, 2000, 2.0)),
        Time.seconds(10), batch_size=64, batch_timeout=Time.milliseconds(50), capacity=512,
        output_type=SCORES)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    rows = env.from_collection(
        [(1, [1.0, 2.0, 3.0, 4.0]), (2, [-1.0, 0.5, 2.0, 0.0])], type_info=FEATURES)
    # Flink's print sink: each row's toString on the TaskManager's stdout.
    fnworker.print(build(rows))
    env.execute("fnworker batch inference")


if __name__ == "__main__":
    main()
