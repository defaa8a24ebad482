"""A job the cluster cases submit with `bin/flink run -py pipeline_job.py
'<json>'`: a Java source, branches of fnworker operations, each branch ending
in an exactly-once Java FileSink (FileSink.for_row_format with
Encoder.simple_string_encoder: one line per record, no Python operator after
fnworker; part files roll on every checkpoint, so each completed checkpoint
commits the rows before it). The JSON says:

  name           the job name
  source         {"kind": "seq", "count": N}: NumberSequenceSource 1..N (LONG);
                 {"kind": "files", "dir": D}: every line of the files in D, and
                 of files added later (FileSource monitoring D; STRING; never ends)
  parallelism    of everything
  checkpoint_ms  checkpoint interval (0: off)
  branches       [{"name": operator name, "sink": output dir,
                   "ops": [{"op": name, "options": {...}, "settings": {...}}]}]
                 settings are Operation.with_settings's; "retry" is
                 {"fixed_delay": [max_attempts, delay_ms, on_error, on_empty]}
"""

import json
import sys

from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.common.serialization import Encoder
from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSink, FileSource, RollingPolicy, StreamFormat
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

import fnworker
from fnworker import Operation, RetryStrategy


def source(env, spec):
    if spec["kind"] == "seq":
        return env.from_source(NumberSequenceSource(1, spec["count"]),
                               WatermarkStrategy.no_watermarks(), "numbers"), Types.LONG()
    files = FileSource.for_record_stream_format(StreamFormat.text_line_format(), spec["dir"]) \
        .monitor_continuously(Duration.of_millis(300)).build()
    return env.from_source(files, WatermarkStrategy.no_watermarks(), "lines"), Types.STRING()


def operation(spec):
    settings = dict(spec.get("settings", {}))
    retry = settings.get("retry")
    if retry is not None:
        settings["retry"] = RetryStrategy.fixed_delay(*retry["fixed_delay"])
    settings.setdefault("mode", "PER_ELEMENT")
    return Operation(spec["op"], **spec.get("options", {})).with_settings(**settings)


def main(cfg):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(cfg.get("parallelism", 1))
    if cfg.get("checkpoint_ms"):
        env.enable_checkpointing(cfg["checkpoint_ms"], CheckpointingMode.EXACTLY_ONCE)
    ds, type_info = source(env, cfg["source"])
    for branch in cfg["branches"]:
        out = ds
        for op in branch["ops"]:
            out = fnworker.process(out, operation(op), type_info)
        if branch.get("name"):
            out = out.name(branch["name"])
        sink = FileSink.for_row_format(branch["sink"], Encoder.simple_string_encoder()) \
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build()
        out.sink_to(sink).name("sink:" + (branch.get("name") or "out"))
    env.execute(cfg.get("name", "fnworker-e2e"))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
