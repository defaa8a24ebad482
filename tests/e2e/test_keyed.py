"""fnworker's helpers on a KeyedStream (issue 21, docs/pyflink.md "Keyed
streams"): as PyFlink's AsyncDataStream, the helper adds a PROCESS operator on
the Java KeyedStream, whose rows are key_by's Row(f0=<key>, f1=<value>); the
package sets the OperationSpec's input_field "f1" and fnworker unwraps the
value natively, so the operation sees what it would see before key_by.

test_keyed_stream_helper is the user's job: key_by's AddKey is a Python map,
which runs in PyFlink's Python worker through fnworker's relay, so it needs
the relay (docs/design/relay.md). test_keyed_rows_unwrapped_natively builds
the same KeyedStream without any Python function (the key rows come from the
source, partitioned by Flink's Java KeyByKeySelector, what key_by uses), so
it exercises the native unwrap on a real Flink alone. Results are exact."""

import pickle

from pyflink.common import Time, Types
from pyflink.datastream.data_stream import KeyedStream
from pyflink.java_gateway import get_gateway

import fnworker
from fnworker import Operation
from fnw_e2e import collect

ORDER = Types.ROW_NAMED(["id", "user", "amount"], [Types.LONG(), Types.STRING(), Types.DOUBLE()])
OUT = Types.ROW_NAMED(["user", "id"], [Types.STRING(), Types.LONG()])
ORDERS = [(n, None if n == 4 else "u%d" % (n % 3), n * 1.5) for n in range(40)]


def _expected():
    return sorted(((u, n) for n, u, _ in ORDERS), key=lambda r: r[1])


def _run(keyed):
    ds = fnworker.unordered_wait(keyed, Operation("echo", delay_ms=1, jitter_ms=2), Time.seconds(10))
    assert ds.get_type() == ORDER                      # the values' type, by default
    ds = fnworker.ordered_wait(ds, Operation("project", fields="user,id"), Time.seconds(10),
                               output_type=OUT)
    return sorted((tuple(r) for r in collect(ds)), key=lambda r: r[1])


def test_keyed_stream_helper(env, ran_in_fnworker):
    """ds.key_by(...) then fnworker operations: the operation sees the values."""
    ds = env.from_collection(ORDERS, type_info=ORDER)
    keyed = ds.key_by(lambda r: r[1] or "", key_type=Types.STRING())
    assert _run(keyed) == _expected()


def test_keyed_rows_unwrapped_natively(env, ran_in_fnworker):
    """The KeyedStream key_by would make, keyed by Flink's Java KeyByKeySelector on f0 of
    Row(f0=<key>, f1=<value>) rows that the source makes: fnworker hands the operation f1."""
    keyed_type = Types.ROW([Types.PICKLED_BYTE_ARRAY(), ORDER])
    # the key as AddKey's output carries it: pickled (PICKLED_BYTE_ARRAY, as key_by without key_type)
    rows = env.from_collection([(pickle.dumps(n % 3), r) for n, r in enumerate(ORDERS)],
                               type_info=keyed_type)
    j_keyed = rows._j_data_stream.keyBy(get_gateway().jvm.KeyByKeySelector(),
                                        Types.ROW([Types.PICKLED_BYTE_ARRAY()]).get_java_type_info())
    assert _run(KeyedStream(j_keyed, ORDER, rows)) == _expected()
