"""An enrichment job run through fnworker: orders are "scored" by a batched
asynchronous call and projected to (name, id), all as native fnworker
operations; no Python runs on the TaskManagers.

The call is the built-in ``echo`` operation (it answers after 10 ms with its
input), a stand-in for a model server until fnworker's service operations
come (see the hook below). Run it with a Flink whose TaskManagers have
PYFLINK_UDF_RUNNER_DIR pointing at fnworker (flink-conf.yaml here):

    PYTHONPATH=/path/to/fnworker/python flink run -py enrich_job.py
"""

from pyflink.common import Time, Types
from pyflink.datastream import StreamExecutionEnvironment

import fnworker
from fnworker import Operation

ORDER = Types.ROW_NAMED(["id", "name", "score"], [Types.LONG(), Types.STRING(), Types.DOUBLE()])
NAME_AND_ID = Types.ROW_NAMED(["name", "id"], [Types.STRING(), Types.LONG()])


def build(env):
    orders = env.from_collection(
        [(1, "ada", 0.5), (2, "grace", 0.9), (3, "edsger", 0.7), (4, "barbara", 0.8)],
        type_info=ORDER)

    # The call to the scoring service: batches of up to 32 orders, a partial
    # batch leaves after 5 ms, up to 1000 orders in flight, 5 s per batch.
    scorer = Operation("echo", delay_ms=10)
    # Hook: when fnworker ships its service operations, name one here instead,
    # keeping the rest of the job, e.g.
    #   scorer = Operation("http", url="http://scorer:8080/v1/score")
    #   scorer = Operation("redis", address="redis:6379", key_field="id")
    #   scorer = Operation("kserve", endpoint="kserve:8081", model="fraud")
    # (names and options are placeholders until those operations are documented).
    scored = fnworker.unordered_wait_batch(
        orders, scorer, Time.seconds(5), batch_size=32, batch_timeout=Time.milliseconds(5),
        capacity=1000, output_type=ORDER)

    # Keep (name, id): fused with the call above into one Flink operator.
    return fnworker.process(scored, Operation("project", fields="name,id"), output_type=NAME_AND_ID)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    build(env).print()
    env.execute("fnworker enrichment")


if __name__ == "__main__":
    main()
