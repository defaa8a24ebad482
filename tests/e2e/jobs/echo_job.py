"""A job for the cases that need a process of their own (its own gateway JVM
and MiniCluster, with the environment the case gives it): ROW rows through
`echo` ordered, collected; prints RESULT <rows> on success, and on failure
FAILED followed by the 'Caused by:' lines of the exception, exit 1."""

import sys

from pyflink.common import Time, Types
from pyflink.datastream import StreamExecutionEnvironment

import fnworker
from fnworker import Operation

ROW = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection([(1, "a"), (2, "b")], type_info=ROW)
    out = fnworker.ordered_wait(ds, Operation("echo"), Time.seconds(5), output_type=ROW)
    try:
        with out.execute_and_collect() as it:
            rows = [tuple(r) for r in it]
    except Exception as e:  # what Flink reports, without the stacks
        causes = [ln.strip() for ln in str(e).splitlines() if ln.strip().startswith("Caused by:")]
        print("FAILED\n" + "\n".join(causes or [str(e)]))
        sys.exit(1)
    print("RESULT %r" % (rows,))


if __name__ == "__main__":
    main()
