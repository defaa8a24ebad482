"""The mixed job of the relay's cluster case (test_relay.py), submitted with
`bin/flink run -py relay_pipeline_job.py '<json>'`: NumberSequenceSource
1..n -> the mixed pipeline of relay_jobs.mixed_stream (Python map parsing
JSON, Python timestamps, key_by, fnworker redis, key_by, Python
KeyedProcessFunction with state and a timer, fnworker http batch) -> an
exactly-once FileSink (Row.toString per line, part files rolled on every
checkpoint). The JSON: n, parallelism, checkpoint_ms, redis, http, sink."""

import json
import os
import sys

from pyflink.common.serialization import Encoder
from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSink, RollingPolicy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import relay_jobs  # noqa: E402


def main(cfg):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(cfg["parallelism"])
    env.enable_checkpointing(cfg["checkpoint_ms"], CheckpointingMode.EXACTLY_ONCE)
    ds = relay_jobs.numbers(env, 1, cfg["n"])
    out = relay_jobs.mixed_stream(ds, cfg["redis"], cfg["http"], to_json=relay_jobs.slow_json)
    sink = FileSink.for_row_format(cfg["sink"], Encoder.simple_string_encoder()) \
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build()
    out.sink_to(sink).name("sink:files")
    env.execute("relay mixed on a cluster")


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
