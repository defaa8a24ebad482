"""The relay cases' jobs that need a process of their own (their own gateway
JVM and MiniCluster, so Flink's print sink writes to this process's stdout,
and their own Flink configuration): `relay_job.py '<json>'`, the JSON says

  job      pure   JSON strings -> Python map (json.loads, no output type: pickled)
                  -> Python filter -> PyFlink's print() (which inserts a Python
                  map to str); no fnworker operation
           sleepy a Python map that sleeps `sleep_s` per element, logs
                  `SLEEPY <i>`, with checkpointing and a fixed-delay restart
                  strategy (3 attempts, 1 s); collected (exactly once through
                  the collect sink's checkpointed buffer)
           mixed  JSON -> Python map -> Python timestamps -> key_by -> fnworker
                  redis (ordered, on the KeyedStream) -> key_by -> Python
                  KeyedProcessFunction (ValueState + event-time timer) ->
                  fnworker http batch -> print()
  n        rows
  redis, http   the mixed job's service addresses (127.0.0.1:<port>)

Prints RESULT <json> for collected jobs; on failure FAILED and the
'Caused by:' lines of the exception, exit 1."""

import json
import os
import sys

from pyflink.common import Configuration, Types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import relay_jobs  # noqa: E402


def main(cfg):
    from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment
    conf = Configuration()
    if cfg["job"] == "sleepy":
        conf.set_string("restart-strategy.type", "fixed-delay")
        conf.set_string("restart-strategy.fixed-delay.attempts", "3")
        conf.set_string("restart-strategy.fixed-delay.delay", "1 s")
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(1)
    try:
        if cfg["job"] == "pure":
            relay_jobs.pure(env, cfg["n"]).print()
            env.execute("relay pure")
        elif cfg["job"] == "sleepy":
            env.enable_checkpointing(300, CheckpointingMode.EXACTLY_ONCE)
            ds = relay_jobs.numbers(env, 0, cfg["n"] - 1)
            out = ds.map(relay_jobs.Sleepy(cfg["sleep_s"]), output_type=Types.LONG())
            with out.execute_and_collect() as it:
                print("RESULT " + json.dumps(sorted(it)))
        elif cfg["job"] == "mixed":
            relay_jobs.mixed(env, cfg["n"], cfg["redis"], cfg["http"]).print()
            env.execute("relay mixed")
        else:
            raise SystemExit("unknown job %r" % cfg["job"])
    except Exception as e:  # what Flink reports, without the stacks
        causes = [ln.strip() for ln in str(e).splitlines() if ln.strip().startswith("Caused by:")]
        print("FAILED\n" + "\n".join(causes or [str(e)]))
        sys.stdout.flush()
        sys.exit(1)
    sys.stdout.flush()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
