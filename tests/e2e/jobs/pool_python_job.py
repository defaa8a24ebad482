"""A job with a Python map and no fnworker operation, for the pool-mode
cluster case (test_cluster_pool.py): `bin/flink run -py pool_python_job.py
'<json>'`. NumberSequenceSource 1..count -> a Python map -> an exactly-once
Java FileSink (one line per record, part files committed on checkpoints).
The map writes `<3x>:<where>`, where is `taskmanager` when the Python worker
runs in the launcher's environment (which has FNW_POOL_ADDRESS, as Flink's
TaskManager gave it) and `sidecar` when it does not (the pool's workers
never have it). The JSON says: name, count, parallelism, out (a directory).
PyFlink's Python worker runs with this client's interpreter
(set_python_executable), which has PyFlink."""

import json
import os
import sys

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.serialization import Encoder
from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSink, RollingPolicy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource


def triple_and_where(x):
    return "%d:%s" % (x * 3, "taskmanager" if os.environ.get("FNW_POOL_ADDRESS") else "sidecar")


def main(cfg):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(cfg.get("parallelism", 1))
    env.set_python_executable(sys.executable)
    env.enable_checkpointing(500, CheckpointingMode.EXACTLY_ONCE)
    ds = env.from_source(NumberSequenceSource(1, cfg["count"]), WatermarkStrategy.no_watermarks(), "numbers")
    out = ds.map(triple_and_where, output_type=Types.STRING()).name("python-map")
    out.sink_to(FileSink.for_row_format(cfg["out"], Encoder.simple_string_encoder())
                .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build())
    env.execute(cfg.get("name", "pool-python"))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
