"""bench/flink_jobs.py — the jobs of the W15-W20 rows: one source
(Flink's datagen table source: N rows `Row(k STRING, n INT)`, k = 'key' +
n % 1000, through Flink's Table-to-DataStream conversion), the operator under
test, and Flink's DiscardingSink in a vertex of its own (its read-records
count proves every row arrived). The sides of a row differ only in the
operator and in the worker the job picks (`python.executable`, see
flink-udf-runner.sh). W20's jobs are a SQL query over a table of their own
(w20_job), into the same sink.

The Python functions PyFlink's own worker runs are here too; the driver has
cloudpickle pickle this module by value, so the worker needs nothing of it."""

import asyncio
import json

from pyflink.common import Row, Time, Types
from pyflink.datastream.functions import AsyncFunction

KEYS = 1000
IN_ROW = Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.INT()])
W15_ROW = Types.ROW_NAMED(["k", "n", "v"], [Types.STRING(), Types.INT(), Types.STRING()])
W16_ROW = Types.ROW_NAMED(["k", "n", "score"], [Types.STRING(), Types.INT(), Types.DOUBLE()])
# What the null worker's echo decodes as: it sends the input element
# Row(LONG ts, LONG wm, Row(k, n)) back unparsed, and Flink reads an output
# element as Row(LONG ts, <output type>); a TUPLE(LONG, ROW) has no null mask
# of its own, so the watermark's 8 bytes and the data row fill it exactly.
NULL_OUT = Types.TUPLE([Types.LONG(), IN_ROW])


def source(t_env, rows):
    """The datagen source as a DataStream of IN_ROW."""
    name = "gen_%d" % id(t_env)
    t_env.execute_sql(
        "CREATE TEMPORARY TABLE %s (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d', "
        "'rows-per-second' = '1000000000')" % (name, rows))
    table = t_env.sql_query(
        "SELECT CONCAT('key', CAST(MOD(id, %d) AS STRING)) AS k, CAST(id AS INT) AS n FROM %s"
        % (KEYS, name))
    return t_env.to_data_stream(table)


def discard(ds):
    """Flink's DiscardingSink (sink v2), not chained, so it is a vertex whose
    read-records are the rows that reached it."""
    from pyflink.datastream.connectors import Sink
    from pyflink.java_gateway import get_gateway
    j_sink = get_gateway().jvm.org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink()
    return ds.sink_to(Sink(j_sink)).name("discard").disable_chaining()


# ---- PyFlink's side: Python functions run by PyFlink's own worker -------------------------

class RedisLookup(AsyncFunction):
    """W15 in Python: one GET per row with redis.asyncio (redis-py's asyncio
    client; its pool opens a connection per command in flight)."""

    def __init__(self, port):
        self.port = port
        self.client = None

    async def async_invoke(self, value):
        if self.client is None:
            import redis.asyncio
            self.client = redis.asyncio.Redis(host="127.0.0.1", port=self.port, decode_responses=True)
        v = await self.client.get(value[0])
        return [Row(value[0], value[1], v)]


class NoIo(AsyncFunction):
    """W15's reference: PyFlink's async operator with a function that does no
    I/O (what PyFlink's machinery alone allows)."""

    async def async_invoke(self, value):
        return [Row(value[0], value[1], "value")]


class ScorePerRow(AsyncFunction):
    """W16 in Python, per element: one POST per row with aiohttp (16
    connections, as fnworker's max_connections)."""

    def __init__(self, url, connections):
        self.url = url
        self.connections = connections
        self.session = None

    async def async_invoke(self, value):
        if self.session is None:
            import aiohttp
            self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.connections))
        async with self.session.post(self.url, json={"inputs": [{"n": value[1], "k": value[0]}]}) as r:
            r.raise_for_status()
            out = await r.json(content_type=None)
        return [Row(value[0], value[1], float(out["outputs"][0]["score"]))]


class ScoreBatched(AsyncFunction):
    """W16 in Python, batched by hand: the rows in flight are gathered into one
    POST of up to `batch` rows (sent when full, or `linger_ms` after its first
    row), each row awaiting its own result; aiohttp, 16 connections. All of it
    runs on the one asyncio loop of PyFlink's async operator, so no locks."""

    def __init__(self, url, connections, batch, linger_ms):
        self.url = url
        self.connections = connections
        self.batch = batch
        self.linger = linger_ms / 1000.0
        self.session = None
        self.pending = []
        self.timer = None

    async def async_invoke(self, value):
        loop = asyncio.get_running_loop()
        if self.session is None:
            import aiohttp
            self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.connections))
        fut = loop.create_future()
        self.pending.append((value, fut))
        if len(self.pending) >= self.batch:
            self._flush()
        elif self.timer is None:
            self.timer = loop.call_later(self.linger, self._flush)
        score = await fut
        return [Row(value[0], value[1], score)]

    def _flush(self):
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        asyncio.ensure_future(self._send(batch))

    async def _send(self, batch):
        body = json.dumps({"inputs": [{"n": v[1], "k": v[0]} for v, _ in batch]})
        try:
            async with self.session.post(self.url, data=body,
                                         headers={"Content-Type": "application/json"}) as r:
                r.raise_for_status()
                out = (await r.json(content_type=None))["outputs"]
            for i, (_, fut) in enumerate(batch):
                fut.set_result(float(out[i]["score"]))
        except Exception as e:  # every row of the batch fails with it
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(e)


def identity(r):
    return r


# ---- W19: PyFlink's own Python functions, in its worker or relayed by fnworker -----------------

def parse_json(r):
    """W19a: a Python map that parses JSON (json.loads of a small object per row)."""
    return json.loads('{"k": "%s", "n": %d}' % (r[0], r[1]))["n"]


def _key_counter():
    """W19b's KeyedProcessFunction (made here: pyflink.datastream imports the JVM's classes)."""
    from pyflink.datastream import KeyedProcessFunction
    from pyflink.datastream.state import ValueStateDescriptor

    class KeyCounter(KeyedProcessFunction):
        """A ValueState counter per key: one state read and write per row."""

        def open(self, ctx):
            self.count = ctx.get_state(ValueStateDescriptor("count", Types.LONG()))

        def process_element(self, value, ctx):
            c = (self.count.value() or 0) + 1
            self.count.update(c)
            yield c
    return KeyCounter()


def side_map(v):
    """W19c's Python function: 0.5 ms asleep per row, so the relayed side
    pipeline stays busy (some 2000 rows/s) for the whole measured window
    while using little CPU: what is measured is the relay's presence next to
    the native operator, not the Python work competing for 2 cores."""
    import time
    time.sleep(0.0005)
    return v + 1


def side_pipeline(ds, rows, python):
    """W19c's second pipeline in the same job (its own source and sink, so no
    back-pressure reaches the measured one): NumberSequenceSource -> a Python
    map (python=True: side_map, relayed to PyFlink's worker while fnworker
    runs the native operator) -> DiscardingSink named side-sink."""
    from pyflink.common import WatermarkStrategy
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.datastream.connectors import Sink
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource
    from pyflink.java_gateway import get_gateway
    env = StreamExecutionEnvironment(ds._j_data_stream.getExecutionEnvironment())
    side = env.from_source(NumberSequenceSource(1, rows), WatermarkStrategy.no_watermarks(), "side-source")
    if python:
        side = side.map(side_map, output_type=Types.LONG()).name("side-map")
    j_sink = get_gateway().jvm.org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink()
    side.sink_to(Sink(j_sink)).name("side-sink").disable_chaining()


# ---- W20: one SQL scoring query, three ways to run score() -------------------------------------

W20_FEATURES = 8
W20_QUERY = "SELECT id, score(features) AS score FROM events"
# W20's reference: the same query with a SQL expression in place of score(),
# no Python operator at all (what the JVM's side of the query costs alone)
W20_JAVA_QUERY = "SELECT id, CAST(ARRAY_MAX(features) AS DOUBLE) + 0.5 AS score FROM events"


def w20_events(t_env, rows):
    """W20's table `events(id BIGINT, features ARRAY<FLOAT>)`: datagen's
    sequence 1..rows, features[j] = ((id + j) mod 7) / 2 (exact in FLOAT), as
    a temporary view over the source. In DOUBLE arithmetic: `/ 2.0` (a
    DECIMAL literal) made the JVM's part of the query cost 11 us a row and
    bounded every side at ~70 k rows/s."""
    gen = "w20gen_%d" % id(t_env)
    t_env.execute_sql(
        "CREATE TEMPORARY TABLE %s (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d', "
        "'rows-per-second' = '1000000000')" % (gen, rows))
    feats = ", ".join("CAST(MOD(id + %d, 7) * 0.5e0 AS FLOAT)" % j for j in range(W20_FEATURES))
    t_env.execute_sql("CREATE TEMPORARY VIEW events AS SELECT id, ARRAY[%s] AS features FROM %s"
                      % (feats, gen))


def _w20_python_udf(url):
    """W20's side (a): a plain PyFlink scalar function in PyFlink's own worker,
    one blocking POST per row to /score1 over one keep-alive connection
    (http.client: a scalar function's eval is synchronous, one row at a time)."""
    from pyflink.table import DataTypes
    from pyflink.table.udf import ScalarFunction, udf

    class Score(ScalarFunction):
        def __init__(self, url):
            self.url = url
            self.conn = None

        def open(self, function_context):
            import urllib.parse
            u = urllib.parse.urlsplit(self.url)
            self.host, self.port, self.path = u.hostname, u.port, u.path

        def eval(self, features):
            import http.client
            body = json.dumps({"inputs": [{"features": list(features)}]})
            for attempt in (0, 1):   # a keep-alive connection the server closed: once more
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
                try:
                    self.conn.request("POST", self.path, body, {"Content-Type": "application/json"})
                    r = self.conn.getresponse()
                    data = r.read()
                    break
                except (http.client.HTTPException, OSError):
                    self.conn.close()
                    self.conn = None
                    if attempt:
                        raise
            if r.status != 200:
                raise RuntimeError("score: HTTP %d from %s" % (r.status, self.url))
            return float(json.loads(data)["outputs"][0]["score"])

    return udf(Score(url), result_type=DataTypes.DOUBLE())


def _w20_async_udf(url, connections):
    """W20's side (b): Flink 2.x's async scalar function path (PyFlink 2.3's
    AsyncScalarFunction: the JVM's PythonAsyncScalarFunctionOperator, PyFlink's
    worker runs eval on an asyncio loop, up to
    table.exec.async-scalar.max-concurrent-operations rows in flight), one
    POST per row to /score1 with aiohttp (`connections` connections). None on a
    PyFlink without it (1.20)."""
    from pyflink.table import DataTypes
    from pyflink.table import udf as pudf
    if not hasattr(pudf, "AsyncScalarFunction"):
        return None

    class AsyncScore(pudf.AsyncScalarFunction):
        def __init__(self, url, connections):
            self.url = url
            self.connections = connections
            self.session = None

        async def eval(self, features):
            if self.session is None:
                import aiohttp
                self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=self.connections))
            async with self.session.post(self.url, json={"inputs": [{"features": list(features)}]}) as r:
                r.raise_for_status()
                out = await r.json(content_type=None)
            return float(out["outputs"][0]["score"])

    return pudf.udf(AsyncScore(url, connections), result_type=DataTypes.DOUBLE())


def _w20_fnworker_udf(p):
    """W20's side (c): fnworker's `http` operation as the scalar function, in
    batch mode: up to `batch` rows per POST to /score ({"inputs": [{"features":
    [...]}, ...]}), row i's score at /outputs/i/score; run by fnworker in
    place of PyFlink's worker (Flink's general scalar function operator)."""
    import fnworker
    from fnworker import Operation
    from pyflink.table import DataTypes
    op = Operation("http", method="POST", url=p["url"], body='{{"features": {features}}}',
                   batch_body='{"inputs": {items}}', max_connections=p["connections"],
                   **{"result.score": "/outputs/{i}/score"})
    op = op.with_settings(mode="BATCH", batch_size=p["batch"], batch_timeout_ms=p["batch_timeout_ms"],
                          capacity=p["capacity"], timeout_ms=p["timeout_ms"])
    if hasattr(fnworker, "udf"):
        return fnworker.udf(op, DataTypes.DOUBLE(), argument_names=["features"], result_field="score")
    # Until fnworker.udf is on main: the function it builds, by hand (a
    # ScalarFunction whose pickle is run_in_fnworker(<OperationSpec>), the
    # spec with result_type DOUBLE (13), argument_names (14), result_field (15)).
    from fnworker import _wire
    from fnworker._payload import run_in_fnworker
    from pyflink.table.udf import ScalarFunction, UserDefinedScalarFunctionWrapper
    spec = (op.to_spec() + _wire.message_field(13, _wire.int_field(1, 7) + _wire.int_field(2, 1)) +
            _wire.bytes_field(14, "features") + _wire.bytes_field(15, "score"))

    class FnworkerScore(ScalarFunction):
        def __init__(self, spec):
            self.spec = spec

        def eval(self, *args):
            raise RuntimeError("fnworker's function ran in Python: the job's worker is not fnworker")

        def __reduce__(self):
            return (run_in_fnworker, (self.spec,))

    return UserDefinedScalarFunctionWrapper(FnworkerScore(spec), None, DataTypes.DOUBLE(), "general",
                                            True, "fnworker_http")


def w20_job(side, t_env, rows, p):
    """W20: registers side's score() and returns W20_QUERY's result over
    `rows` events as a DataStream (the caller puts the DiscardingSink behind
    it, whose read-records count every row)."""
    w20_events(t_env, rows)
    if side == "w20-pyflink":
        fn = _w20_python_udf(p["url"] + "1")
    elif side == "w20-async":
        fn = _w20_async_udf(p["url"] + "1", p["connections"])
        t_env.get_config().set("table.exec.async-scalar.max-concurrent-operations", str(p["capacity_row"]))
        # as W15/W16's PyFlink sides: no timeout unless --pyflink-timeout (PyFlink
        # starts a threading.Timer per row when it has one, and always with
        # retries, which Flink's default FIXED_DELAY turns on:
        # pyflink/fn_execution/table/async_function/operations.py); fnworker's
        # side does not retry either
        t_env.get_config().set("table.exec.async-scalar.retry-strategy", "NO_RETRY")
        t_env.get_config().set("table.exec.async-scalar.timeout", "%d ms" % p["py_timeout_ms"])
    elif side == "w20-fnworker":
        fn = _w20_fnworker_udf(p)
    elif side == "w20-java":
        return t_env.to_data_stream(t_env.sql_query(W20_JAVA_QUERY))
    else:
        raise ValueError(side)
    t_env.create_temporary_function("score", fn)
    return t_env.to_data_stream(t_env.sql_query(W20_QUERY))


# ---- the operators of each side -------------------------------------------------------------

def build(side, ds, p):
    """The operator of one side on ds; p holds the row's settings."""
    import fnworker
    from fnworker import Operation
    from pyflink.datastream import AsyncDataStream
    timeout = Time.milliseconds(p["timeout_ms"])
    # PyFlink starts a threading.Timer per row when its timeout is > 0
    # (pyflink/fn_execution/datastream/process/async_function/operation.py);
    # by default its side runs without one (0: no timeout), its fastest.
    py_timeout = Time.milliseconds(p["py_timeout_ms"])
    if side == "w15-pyflink":
        return AsyncDataStream.unordered_wait(ds, RedisLookup(p["redis_port"]), py_timeout,
                                              p["capacity"], output_type=W15_ROW)
    if side == "w15-pyflink-noio":
        return AsyncDataStream.unordered_wait(ds, NoIo(), py_timeout, p["capacity"], output_type=W15_ROW)
    if side == "w15-fnworker":
        op = Operation("redis", address="127.0.0.1:%d" % p["redis_port"], command="GET {k}",
                       result_field="v")
        return fnworker.unordered_wait(ds, op, timeout, p["capacity"], output_type=W15_ROW)
    if side == "w16-pyflink-row":
        return AsyncDataStream.unordered_wait(ds, ScorePerRow(p["url"] + "1", p["connections"]), py_timeout,
                                              p["capacity_row"], output_type=W16_ROW)
    if side == "w16-pyflink-batch":
        fn = ScoreBatched(p["url"], p["connections"], p["batch"], p["batch_timeout_ms"])
        return AsyncDataStream.unordered_wait(ds, fn, py_timeout, p["capacity"], output_type=W16_ROW)
    if side == "w16-fnworker":
        op = Operation("http", method="POST", url=p["url"], body='{{"n": {n}, "k": {k}}}',
                       batch_body='{"inputs": {items}}', max_connections=p["connections"],
                       **{"result.score": "/outputs/{i}/score"})
        return fnworker.unordered_wait_batch(ds, op, timeout, p["batch"],
                                             Time.milliseconds(p["batch_timeout_ms"]),
                                             p["capacity"], output_type=W16_ROW)
    if side == "w17-pyflink":
        return ds.map(identity, output_type=IN_ROW)
    if side == "w17-fnworker":
        return fnworker.process(ds, Operation("identity"), output_type=IN_ROW)
    if side == "w17-null":
        # the null worker reads no spec; output_type in the spec tells the
        # package's build-time check (an identity's output type must be its
        # input's) that NULL_OUT is meant
        return fnworker.process(ds, Operation("identity").with_settings(output_type=NULL_OUT),
                                output_type=NULL_OUT)
    if side == "w17-java":
        return ds
    if side in ("w19a-pyflink", "w19a-relay"):
        return ds.map(parse_json, output_type=Types.INT())
    if side in ("w19b-pyflink", "w19b-relay"):
        return ds.key_by(lambda r: r[0], key_type=Types.STRING()).process(_key_counter(), output_type=Types.LONG())
    if side in ("w19c-mixed", "w19c-native"):
        out = fnworker.process(ds, Operation("identity"), output_type=IN_ROW)
        side_pipeline(ds, p["side_rows"], side == "w19c-mixed")
        return out
    raise ValueError(side)


# The worker each side runs in: None for PyFlink's own (python.executable is
# the venv's Python), "relay" for fnworker relaying to PyFlink's worker
# (python.executable is the runner's relay/python, which runs the venv's
# Python), else the name under the runner's workers/.
WORKER = {"w15-pyflink": None, "w15-pyflink-noio": None, "w16-pyflink-row": None, "w16-pyflink-batch": None,
          "w17-pyflink": None, "w15-fnworker": "fnworker", "w16-fnworker": "fnworker",
          "w17-fnworker": "fnworker", "w17-null": "null_worker", "w17-java": "none",
          "w19a-pyflink": None, "w19b-pyflink": None, "w19a-relay": "relay", "w19b-relay": "relay",
          "w19c-mixed": "relay", "w19c-native": "fnworker",
          "w20-pyflink": None, "w20-async": None, "w20-fnworker": "fnworker",
          "w20-java": "none"}
