"""The relay cases' jobs (issue 21, docs/design/relay.md section 12) and the
results each must give, computed here in plain Python (not by a Flink run),
so a case checks the relayed job against what PyFlink's semantics say.

Used in the test session (test_relay.py), by jobs/relay_job.py (a process
of its own) and jobs/relay_pipeline_job.py (the standalone cluster). The
module is pickled by value (cloudpickle.register_pickle_by_value below): the
Python worker has no tests/e2e on its path."""

import json
import time

import cloudpickle
from pyflink.common import Row, Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import KeyedProcessFunction, MapFunction, RuntimeContext
from pyflink.datastream.state import MapStateDescriptor, ValueStateDescriptor

import sys
cloudpickle.register_pickle_by_value(sys.modules[__name__])


# ---- pure: map + filter + print(), no fnworker operation ------------------------------------

def pure(env, n):
    """JSON strings -> map(json.loads; no output type: pickled) -> filter ->
    PyFlink's print() inserts a Python map to str (DataStream._align_output_type)."""
    rows = [json.dumps({"id": i, "name": "r%d" % i}) for i in range(n)]
    ds = env.from_collection(rows, type_info=Types.STRING())
    return ds.map(lambda s: (json.loads(s)["id"], json.loads(s)["name"].upper())) \
             .filter(lambda t: t[0] % 3 != 0)


def pure_expected(n):
    return [str((i, "R%d" % i)) for i in range(n) if i % 3 != 0]


# ---- keyed: the job of section 1 ----------------------------------------------------------

class ThirdField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


class Count(KeyedProcessFunction):
    """ValueState cnt, MapState seen, an event-time timer per element at
    t + 1000 (after every element's time: all fire at the end of input, when
    seen is complete)."""

    def open(self, ctx: RuntimeContext):
        self.cnt = ctx.get_state(ValueStateDescriptor("cnt", Types.LONG()))
        self.seen = ctx.get_map_state(MapStateDescriptor("seen", Types.STRING(), Types.LONG()))

    def process_element(self, v, ctx):
        c = (self.cnt.value() or 0) + 1
        self.cnt.update(c)
        self.seen.put(str(v[1]), v[2])
        ctx.timer_service().register_event_time_timer(v[2] + 1000)
        yield "%s v=%d n=%d" % (v[0], v[1], c)

    def on_timer(self, ts, ctx):
        yield "timer %s@%d size=%d" % (ctx.get_current_key(), ts, len(list(self.seen.keys())))


KEYED_TUPLE = Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])


def keyed(env, n, keys="abc"):
    rows = [json.dumps({"k": keys[i % len(keys)], "v": i, "t": 1000 + i}) for i in range(n)]
    ds = env.from_collection(rows, type_info=Types.STRING())
    ds = ds.map(lambda s: (json.loads(s)["k"], json.loads(s)["v"], json.loads(s)["t"]), output_type=KEYED_TUPLE)
    ds = ds.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ThirdField()))
    return ds.key_by(lambda r: r[0], key_type=Types.STRING()).process(Count(), output_type=Types.STRING())


def keyed_expected(n, keys="abc"):
    out, cnt, seen = [], {}, {}
    for i in range(n):
        k = keys[i % len(keys)]
        cnt[k] = cnt.get(k, 0) + 1
        seen.setdefault(k, set()).add(i)
        out.append("%s v=%d n=%d" % (k, i, cnt[k]))
    for i in range(n):
        k = keys[i % len(keys)]
        out.append("timer %s@%d size=%d" % (k, 1000 + i + 1000, len(seen[k])))
    return sorted(out)


def numbers(env, first, last):
    """Flink's NumberSequenceSource first..last (LONG): a FLIP-27 source whose
    position is checkpointed (a restored job does not read a number twice)."""
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource
    return env.from_source(NumberSequenceSource(first, last), WatermarkStrategy.no_watermarks(), "numbers")


# ---- sleepy: a map that takes its time --------------------------------------------------------

class Sleepy(MapFunction):
    def __init__(self, seconds):
        self.seconds = seconds

    def map(self, v):
        print("SLEEPY %d" % v)      # PyFlink's worker turns print into a log entry
        time.sleep(self.seconds)
        return v * 10


# ---- raising: the traceback case -----------------------------------------------------------

def explode_on_seven(v):
    if v == 7:
        raise ValueError("relay e2e: the row %d is cursed" % v)
    return v + 1


# ---- mixed: Python and fnworker operations in one job ----------------------------------------

USERS = 7
PARSED = Types.ROW_NAMED(["id", "user"], [Types.LONG(), Types.STRING()])
ENRICHED = Types.ROW_NAMED(["id", "user", "price"], [Types.LONG(), Types.STRING(), Types.DOUBLE()])
TALLIED = Types.ROW_NAMED(["id", "user", "x", "n"], [Types.LONG(), Types.STRING(), Types.DOUBLE(), Types.LONG()])
SCORED = Types.ROW_NAMED(["id", "user", "x", "n", "score"],
                         [Types.LONG(), Types.STRING(), Types.DOUBLE(), Types.LONG(), Types.DOUBLE()])
END_TIMER = 1 << 40          # after every element's time: fires at the end of input


def price(user_index):
    """The price the test puts into Redis as price:u<i>."""
    return user_index + 0.25


def mixed_json(i):
    return '{"id": %d, "user": "u%d"}' % (i, i % USERS)


def slow_json(i):
    """mixed_json, 1 ms later: the cluster case's job must outlast its first
    checkpoint (a TaskManager is killed after rows are committed)."""
    time.sleep(0.001)
    return mixed_json(i)


def parse(s):
    d = json.loads(s)
    return Row(d["id"], d["user"])


class IdTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[0]


class Tally(KeyedProcessFunction):
    """Per user: a count and a sum in ValueState; each row goes on as
    (id, user, price, 0); an event-time timer at END_TIMER emits
    (-1, user, sum of prices, count) at the end of input."""

    def open(self, ctx: RuntimeContext):
        self.n = ctx.get_state(ValueStateDescriptor("n", Types.LONG()))
        self.total = ctx.get_state(ValueStateDescriptor("total", Types.DOUBLE()))

    def process_element(self, v, ctx):
        self.n.update((self.n.value() or 0) + 1)
        self.total.update((self.total.value() or 0.0) + v[2])
        ctx.timer_service().register_event_time_timer(END_TIMER)
        yield Row(v[0], v[1], v[2], 0)

    def on_timer(self, ts, ctx):
        yield Row(-1, ctx.get_current_key(), self.total.value(), self.n.value())


def mixed_ops(redis, http):
    from fnworker import Operation
    enrich = Operation("redis", address=redis, command="GET price:{user}", result_field="price")
    # tests/servers/http_server.py /batch doubles every number of {"inputs": [...]}
    score = Operation("http", method="POST", url="http://%s/batch" % http, body="{x}",
                      batch_body='{"inputs": {items}}', **{"result.score": "/outputs/{i}"})
    return enrich, score


def mixed_stream(ds, redis, http, to_json=None):
    """ds: JSON strings (or numbers, with to_json) -> Python map (json.loads)
    -> Python timestamps -> key_by(user) -> fnworker redis (ordered, on the
    KeyedStream) -> key_by(user) -> Python Tally -> fnworker http batch."""
    if redis is None:   # PyFlink's own worker: the services' answers computed in Python
        return _mixed_python(ds, to_json)
    import fnworker
    enrich, score = mixed_ops(redis, http)
    if to_json is None:
        parsed = ds.map(parse, output_type=PARSED)
    else:
        parsed = ds.map(lambda v: parse(to_json(v)), output_type=PARSED)
    parsed = parsed.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(IdTime()))
    keyed_in = parsed.key_by(lambda r: r[1], key_type=Types.STRING())
    enriched = fnworker.ordered_wait(keyed_in, enrich, Time.seconds(10), 100, output_type=ENRICHED)
    tallied = enriched.key_by(lambda r: r[1], key_type=Types.STRING()).process(Tally(), output_type=TALLIED)
    return fnworker.ordered_wait_batch(tallied, score, Time.seconds(10), batch_size=16,
                                       batch_timeout=Time.milliseconds(20), capacity=256, output_type=SCORED)


def _mixed_python(ds, to_json):
    """The mixed pipeline with Python maps where fnworker calls the services
    (the price Redis holds; /batch doubles x): what the expected lines are
    checked against on PyFlink's own worker."""
    if to_json is None:
        parsed = ds.map(parse, output_type=PARSED)
    else:
        parsed = ds.map(lambda v: parse(to_json(v)), output_type=PARSED)
    parsed = parsed.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(IdTime()))
    enriched = parsed.key_by(lambda r: r[1], key_type=Types.STRING()) \
        .map(lambda r: Row(r[0], r[1], price(int(r[1][1:]))), output_type=ENRICHED)
    tallied = enriched.key_by(lambda r: r[1], key_type=Types.STRING()).process(Tally(), output_type=TALLIED)
    return tallied.map(lambda r: Row(r[0], r[1], r[2], r[3], 2 * r[2]), output_type=SCORED)


def mixed(env, n, redis, http):
    ds = env.from_collection([mixed_json(i) for i in range(1, n + 1)], type_info=Types.STRING())
    return mixed_stream(ds, redis, http)


def mixed_expected(ids, java=False):
    """The lines the mixed job writes for the ids: PyFlink's print() (a Python
    map to '+I[f0,f1,...]' with str() of each field, DataStream._align_output_type),
    or with java=True Row.toString ('+I[f0, f1, ...]', the FileSink's encoder;
    Double.toString and Python's str agree on these values)."""
    sep = ", " if java else ","
    out, n, total = [], {}, {}

    def line(*fields):
        return "+I[%s]" % sep.join(str(f) for f in fields)
    for i in ids:
        u = i % USERS
        p = price(u)
        n[u] = n.get(u, 0) + 1
        total[u] = total.get(u, 0.0) + p
        out.append(line(i, "u%d" % u, p, 0, 2 * p))
    for u in n:
        out.append(line(-1, "u%d" % u, total[u], n[u], 2 * total[u]))
    return sorted(out)
