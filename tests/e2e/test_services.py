"""The service operations (redis, http, kserve) in real Flink jobs, against
local servers on free loopback ports (services.py); outputs checked exactly."""

import os

import pytest
from pyflink.common import Time, Types

import fnworker
from fnworker import Operation, RetryStrategy
from fnw_e2e import collect
from services import http_server, kserve_server, redis_client, redis_server  # noqa: F401 (fixtures)

ITEM = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])


def rows(ds):
    return [tuple(r) for r in collect(ds)]


# ---- redis ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def users(redis_server):
    """Hashes user:<id> for ids 1..40 except multiples of 7 (misses), and prices price:<id>."""
    r = redis_client(redis_server)
    r.flushall()
    for i in range(1, 41):
        if i % 7:
            r.hset("user:%d" % i, mapping={"name": "user-%d" % i, "tier": ("gold", "silver")[i % 2],
                                           "age": str(20 + i), "extra": "ignored"})
            r.set("price:%d" % i, "%d.25" % i)
    return redis_server


@pytest.mark.smoke
def test_redis_hgetall_fills_fields_by_name(env, ran_in_fnworker, users):
    """HGETALL per element: hash keys fill the output fields of the same name
    (an INT parsed from its text), input fields are copied, a missing hash
    gives null fields (on_missing null), outputs in input order."""
    out_type = Types.ROW_NAMED(["id", "name", "tier", "age"],
                               [Types.LONG(), Types.STRING(), Types.STRING(), Types.INT()])
    src = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
    ds = env.from_collection([(i, None) for i in range(1, 41)], type_info=src)
    op = Operation("redis", address=users.address, command="HGETALL user:{id}",
                   result_fields="name,tier,age", on_missing="null")
    got = rows(fnworker.ordered_wait(ds, op, Time.seconds(5), 100, output_type=out_type))
    want = [(i, "user-%d" % i, ("gold", "silver")[i % 2], 20 + i) if i % 7 else (i, None, None, None)
            for i in range(1, 41)]
    assert got == want


def test_redis_get_hits_and_misses_on_missing_null(env, ran_in_fnworker, users):
    out_type = Types.ROW_NAMED(["id", "name", "price"], [Types.LONG(), Types.STRING(), Types.DOUBLE()])
    ds = env.from_collection([(i, "n%d" % i) for i in range(1, 41)], type_info=ITEM)
    op = Operation("redis", address=users.address, command="GET price:{id}", result_field="price")
    got = rows(fnworker.ordered_wait(ds, op, Time.seconds(5), 16, output_type=out_type))
    assert got == [(i, "n%d" % i, i + 0.25 if i % 7 else None) for i in range(1, 41)]


def test_redis_on_missing_empty_drops_misses_unordered(env, ran_in_fnworker, users):
    out_type = Types.ROW_NAMED(["id", "price"], [Types.LONG(), Types.STRING()])
    ds = env.from_collection([(i, "n%d" % i) for i in range(1, 41)], type_info=ITEM)
    op = Operation("redis", address=users.address, command="GET price:{id}", result_field="price",
                   on_missing="empty")
    got = rows(fnworker.unordered_wait(ds, op, Time.seconds(5), 1000, output_type=out_type))
    assert sorted(got) == [(i, "%d.25" % i) for i in range(1, 41) if i % 7]


def test_redis_batch_mget(env, ran_in_fnworker, users):
    """Batch mode: GET becomes one MGET per batch of 16; misses are null."""
    out_type = Types.ROW_NAMED(["id", "price"], [Types.LONG(), Types.DOUBLE()])
    ds = env.from_collection([(i, "n%d" % i) for i in range(1, 41)], type_info=ITEM)
    op = Operation("redis", address=users.address, command="GET price:{id}", result_field="price")
    got = rows(fnworker.ordered_wait_batch(ds, op, Time.seconds(5), batch_size=16,
                                           batch_timeout=Time.milliseconds(20), capacity=64,
                                           output_type=out_type))
    assert got == [(i, i + 0.25 if i % 7 else None) for i in range(1, 41)]


def test_redis_on_missing_fail_fails_the_job_naming_the_command(env, users):
    out_type = Types.ROW_NAMED(["id", "price"], [Types.LONG(), Types.STRING()])
    ds = env.from_collection([(6, "a"), (7, "b")], type_info=ITEM)
    op = Operation("redis", address=users.address, command="GET price:{id}", result_field="price",
                   on_missing="fail")
    out = fnworker.ordered_wait(ds, op, Time.seconds(5), 10, output_type=out_type)
    with pytest.raises(Exception) as e:
        rows(out)
    assert "no value (on_missing is fail)" in str(e.value)
    assert "GET price:7" in str(e.value)


# ---- http ----------------------------------------------------------------------

def test_http_get_per_element_with_404_and_absent_pointer(env, ran_in_fnworker, http_server):
    """GET /json/{key}: fields from JSON pointers; a 404 (no fixture) and a
    pointer that finds nothing give null (on_missing null)."""
    src = Types.ROW_NAMED(["id", "key"], [Types.LONG(), Types.STRING()])
    out_type = Types.ROW_NAMED(["id", "key", "n", "nested_ok"],
                               [Types.LONG(), Types.STRING(), Types.INT(), Types.BOOLEAN()])
    keys = ["a", "b", "nope", "a", "b/../a"]
    ds = env.from_collection([(i, k) for i, k in enumerate(keys)], type_info=src)
    op = Operation("http", url=http_server.url("/json/{key}"),
                   **{"result.n": "/n", "result.nested_ok": "/nested/ok"})
    got = rows(fnworker.ordered_wait(ds, op, Time.seconds(10), 8, output_type=out_type))
    assert got == [(0, "a", 1, None), (1, "b", None, True), (2, "nope", None, None), (3, "a", 1, None),
                   (4, "b/../a", None, None)]


def test_http_post_batches_with_batch_body_and_item_pointer(env, ran_in_fnworker, http_server):
    """Batch mode: 150 rows in POSTs of up to 64 ({"inputs": [...]}); each row's
    result read at /outputs/{i} (the server upper-cases strings, doubles numbers)."""
    src = Types.ROW_NAMED(["id", "text", "x"], [Types.LONG(), Types.STRING(), Types.DOUBLE()])
    out_type = Types.ROW_NAMED(["id", "upper", "twice"], [Types.LONG(), Types.STRING(), Types.DOUBLE()])
    data = [(i, "row é %d" % i, i * 0.5) for i in range(150)]
    ds = env.from_collection(data, type_info=src)
    op = Operation("http", method="POST", url=http_server.url("/batch"),
                   body='{{"t": {text}, "x": {x}}}', batch_body='{"inputs": {items}}',
                   **{"result.upper": "/outputs/{i}/t", "result.twice": "/outputs/{i}/x"})
    # /batch leaves objects as they are: so the pointer reads the row's own values
    got = rows(fnworker.ordered_wait_batch(ds, op, Time.seconds(10), batch_size=64,
                                           batch_timeout=Time.milliseconds(20), capacity=256,
                                           output_type=out_type))
    assert got == [(i, t, x) for i, t, x in data]
    op2 = Operation("http", method="POST", url=http_server.url("/batch"), body="{text}",
                    batch_body='{"inputs": {items}}', **{"result.upper": "/outputs/{i}"})
    out2 = Types.ROW_NAMED(["id", "upper"], [Types.LONG(), Types.STRING()])
    ds2 = env.from_collection(data, type_info=src)
    got2 = rows(fnworker.unordered_wait_batch(ds2, op2, Time.seconds(10), batch_size=64,
                                              batch_timeout=Time.milliseconds(20), capacity=256,
                                              output_type=out2))
    assert sorted(got2) == [(i, t.upper()) for i, t, _ in data]


# ---- kserve --------------------------------------------------------------------

W = [[1.0, 2.0], [0.0, -1.0], [0.5, 0.0], [3.0, 1.0]]
B = [0.5, -1.0]


def linear(x):
    """The test server's model `linear` (kserve_server.py); exact for these small halves."""
    return [sum(x[k] * W[k][j] for k in range(4)) + B[j] for j in range(2)]


def test_kserve_batch_scoring_exact(env, ran_in_fnworker, kserve_server):
    """200 rows of four FP32 features to the model `linear`, 64 rows per
    ModelInfer, retries on; each row's two scores exact, in input order."""
    feats = Types.ROW_NAMED(["id", "features"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
    scores = Types.ROW_NAMED(["id", "scores"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
    data = [(i, [float(i % 5), -0.5 * (i % 3), 2.0, float(i % 11) - 5.0]) for i in range(200)]
    ds = env.from_collection(data, type_info=feats)
    model = Operation("kserve", target=kserve_server.address, model_name="linear",
                      inputs="x:FP32[4]=features", outputs="y:FP32[2]=scores")
    model = model.with_settings(timeout_ms=10000, retry=RetryStrategy.exponential_backoff(5, 100, 2000, 2.0))
    got = rows(fnworker.ordered_wait_batch(ds, model, Time.seconds(10), batch_size=64,
                                           batch_timeout=Time.milliseconds(50), capacity=512,
                                           output_type=scores))
    assert [(i, list(s)) for i, s in got] == [(i, linear(x)) for i, x in data]


# ---- failures and timeouts, as Flink reports them --------------------------------

def failure(ds):
    """The text of the exception that running ds's job raises (its whole cause chain)."""
    with pytest.raises(Exception) as e:
        rows(ds)
    return str(e.value)


def test_http_401_fails_the_job_with_status_and_path(env, http_server):
    """/v1/score without a bearer token answers 401: not retried, the job fails
    naming the method, the path and the status."""
    src = Types.ROW_NAMED(["id", "amount"], [Types.LONG(), Types.DOUBLE()])
    out_type = Types.ROW_NAMED(["id", "score"], [Types.LONG(), Types.DOUBLE()])
    ds = env.from_collection([(1, 2.0)], type_info=src)
    op = Operation("http", method="POST", url=http_server.url("/v1/score?secret=q"),
                   body='{{"amount": {amount}}}', batch_body='{"inputs": {items}}',
                   **{"result.score": "/outputs/{i}/score"})
    msg = failure(fnworker.ordered_wait_batch(
        ds, op.with_settings(timeout_ms=5000, retry=RetryStrategy.fixed_delay(3, 10, retry_on_error=True)),
        Time.seconds(5),
        batch_size=8, batch_timeout=Time.milliseconds(10), output_type=out_type))
    assert "401" in msg and "/v1/score" in msg and "POST" in msg, msg[-2000:]
    assert "secret=q" not in msg


def test_http_unset_secret_variable_fails_at_open(env, http_server):
    src = Types.ROW_NAMED(["id", "amount"], [Types.LONG(), Types.DOUBLE()])
    ds = env.from_collection([(1, 2.0)], type_info=src)
    op = Operation("http", url=http_server.url("/json/a"), **{
        "header.Authorization": "Bearer {env:FNW_SECRET_E2E_SURELY_UNSET}", "result.n": "/n"})
    out_type = Types.ROW_NAMED(["id", "n"], [Types.LONG(), Types.INT()])
    msg = failure(fnworker.ordered_wait(ds, op, Time.seconds(5), output_type=out_type))
    assert "FNW_SECRET_E2E_SURELY_UNSET" in msg, msg[-2000:]


def test_http_env_reference_outside_the_allowed_prefix_is_refused(env, http_server):
    """A job cannot read the TaskManager's other variables (here PATH) into a
    request: only FNW_SECRET_* (or FNW_SECRETS_ALLOW) names pass."""
    src = Types.ROW_NAMED(["id", "amount"], [Types.LONG(), Types.DOUBLE()])
    ds = env.from_collection([(1, 2.0)], type_info=src)
    op = Operation("http", url=http_server.url("/json/a"), **{
        "header.X-Leak": "{env:PATH}", "result.n": "/n"})
    out_type = Types.ROW_NAMED(["id", "n"], [Types.LONG(), Types.INT()])
    msg = failure(fnworker.ordered_wait(ds, op, Time.seconds(5), output_type=out_type))
    assert "PATH" in msg and "FNW_SECRET_" in msg, msg[-2000:]
    assert os.environ["PATH"] not in msg


def test_redis_down_fails_after_retries_naming_the_server(env):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()   # nothing listens there now
    ds = env.from_collection([(1, "a")], type_info=ITEM)
    op = Operation("redis", address="127.0.0.1:%d" % port, command="GET price:{id}", result_field="price")
    out_type = Types.ROW_NAMED(["id", "price"], [Types.LONG(), Types.STRING()])
    msg = failure(fnworker.ordered_wait_with_retry(
        ds, op, Time.seconds(3), RetryStrategy.fixed_delay(3, 100, retry_on_error=True), output_type=out_type))
    assert "127.0.0.1:%d" % port in msg and "Connection refused" in msg, msg[-2000:]


def test_kserve_unknown_model_fails_at_open(env, kserve_server):
    feats = Types.ROW_NAMED(["id", "features"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
    ds = env.from_collection([(1, [1.0, 2.0, 3.0, 4.0])], type_info=feats)
    model = Operation("kserve", target=kserve_server.address, model_name="no_such_model",
                      inputs="x:FP32[4]=features", outputs="y:FP32[2]=scores", connect_timeout_ms=3000)
    scores = Types.ROW_NAMED(["id", "scores"], [Types.LONG(), Types.PRIMITIVE_ARRAY(Types.FLOAT())])
    msg = failure(fnworker.ordered_wait(ds, model, Time.seconds(5), output_type=scores))
    assert "no_such_model" in msg, msg[-2000:]


def test_http_timeouts_with_on_timeout_empty_drop_only_the_slow_calls(env, ran_in_fnworker, http_server):
    """Per element, 1 s per call: the calls the server answers after 3 s are
    given up (no output for them), the others come out with their result.
    The HTTP request's own timeout is longer than the call's, so the call's
    timeout (and its action) is what ends the slow ones: with both at 1 s
    either could come first, and libcurl's fails the call."""
    src = Types.ROW_NAMED(["id", "ms"], [Types.LONG(), Types.INT()])
    out_type = Types.ROW_NAMED(["id", "delayed_ms"], [Types.LONG(), Types.INT()])
    data = [(i, 3000 if i % 4 == 0 else 0) for i in range(12)]
    ds = env.from_collection(data, type_info=src)
    op = Operation("http", url=http_server.url("/delay?ms={ms}"), request_timeout_ms=5000,
                   **{"result.delayed_ms": "/delayed_ms"})
    op = op.with_settings(on_timeout="EMPTY")
    got = rows(fnworker.ordered_wait(ds, op, Time.seconds(1), 100, output_type=out_type))
    assert got == [(i, 0) for i, ms in data if ms == 0]


def test_http_large_responses_into_strings(env, ran_in_fnworker, http_server):
    """A 300 KB JSON response per row, whole (pointer "") into a STRING: 30
    rows, about 9 MB of output going back to Flink, each row exact."""
    import os
    with open(os.path.join(http_server.dir, "www", "json", "big.json")) as f:
        big = f.read()
    src = Types.ROW_NAMED(["id", "key"], [Types.LONG(), Types.STRING()])
    out_type = Types.ROW_NAMED(["id", "doc"], [Types.LONG(), Types.STRING()])
    data = [(i, "big" if i % 3 else "a") for i in range(30)]
    ds = env.from_collection(data, type_info=src)
    op = Operation("http", url=http_server.url("/json/{key}"), **{"result.doc": ""})
    got = rows(fnworker.ordered_wait(ds, op, Time.seconds(20), 8, output_type=out_type))
    assert len(got) == 30
    for (i, doc), (_, key) in zip(got, data):
        assert doc == (big if key == "big" else '{"key":"a","n":1}'), (i, len(doc))


def test_redis_binary_safe_unicode_values(env, ran_in_fnworker, redis_server):
    """Keys rendered from fields holding spaces and non-ASCII text stay one
    argument; values come back byte for byte."""
    r = redis_client(redis_server)
    names = ["plain", "with space", "é\u4e2d\U0001F600", "tab\there", ""]
    for k in names:
        r.set("v:" + k, "<" + k + ">")
    out_type = Types.ROW_NAMED(["id", "name", "v"], [Types.LONG(), Types.STRING(), Types.STRING()])
    ds = env.from_collection([(i, k) for i, k in enumerate(names + ["absent"])], type_info=ITEM)
    op = Operation("redis", address=redis_server.address, command="GET v:{name}", result_field="v")
    got = rows(fnworker.ordered_wait(ds, op, Time.seconds(5), 10, output_type=out_type))
    assert got == [(i, k, "<" + k + ">") for i, k in enumerate(names)] + [(5, "absent", None)]


def test_kserve_bytes_tensor_per_element_and_batched(env, ran_in_fnworker, kserve_server):
    """The model `strlen` (BYTES in, INT64 out): STRING fields as BYTES
    tensors, per element (a batch of one per call) and in batches of 16,
    at parallelism 2; each row's length exact."""
    env.set_parallelism(2)
    src = Types.ROW_NAMED(["id", "text"], [Types.LONG(), Types.STRING()])
    out_type = Types.ROW_NAMED(["id", "len"], [Types.LONG(), Types.LONG()])
    data = [(i, "é" * (i % 7) + "x" * (i % 5)) for i in range(100)]
    model = Operation("kserve", target=kserve_server.address, model_name="strlen",
                      inputs="text:BYTES=text", outputs="len:INT64=len")
    want = sorted((i, len(t.encode())) for i, t in data)
    per_element = fnworker.unordered_wait(env.from_collection(data, type_info=src), model, Time.seconds(10),
                                          50, output_type=out_type)
    assert sorted(rows(per_element)) == want
    batched = fnworker.ordered_wait_batch(env.from_collection(data, type_info=src), model, Time.seconds(10),
                                          batch_size=16, batch_timeout=Time.milliseconds(20), capacity=64,
                                          output_type=out_type)
    assert sorted(rows(batched)) == want


def test_redis_batch_hgetall_on_missing_empty_and_null_keys(env, ran_in_fnworker, users):
    """Batch mode with HGETALL (pipelined): ordered outputs with the misses
    (no hash, or a null id rendering an empty key) dropped."""
    src = Types.ROW_NAMED(["id", "note"], [Types.LONG(), Types.STRING()])
    out_type = Types.ROW_NAMED(["id", "note", "name"], [Types.LONG(), Types.STRING(), Types.STRING()])
    data = [(i if i % 5 else None, "n%d" % i) for i in range(1, 41)]
    ds = env.from_collection(data, type_info=src)
    op = Operation("redis", address=users.address, command="HGETALL user:{id}", result_fields="name",
                   on_missing="empty")
    got = rows(fnworker.ordered_wait_batch(ds, op, Time.seconds(5), batch_size=8,
                                           batch_timeout=Time.milliseconds(20), capacity=32,
                                           output_type=out_type))
    assert got == [(i, n, "user-%d" % i) for i, n in data if i is not None and i % 7]


def test_http_batch_404_with_on_missing_empty_drops_the_batch(env, ran_in_fnworker, http_server):
    src = Types.ROW_NAMED(["id", "text"], [Types.LONG(), Types.STRING()])
    out_type = Types.ROW_NAMED(["id", "r"], [Types.LONG(), Types.STRING()])
    ds = env.from_collection([(i, "t%d" % i) for i in range(20)], type_info=src)
    op = Operation("http", method="POST", url=http_server.url("/status/404"), body="{text}",
                   on_missing="empty", **{"result.r": "/outputs/{i}"})
    got = rows(fnworker.unordered_wait_batch(ds, op, Time.seconds(5), batch_size=8,
                                             batch_timeout=Time.milliseconds(20), output_type=out_type))
    assert got == []


def test_partial_batch_without_batch_timeout_leaves_at_end_of_input(env, ran_in_fnworker, users):
    """No batch_timeout: 10 rows, batches of 64; the partial batch still goes
    out when the input ends (the bundle's end), so the job finishes."""
    out_type = Types.ROW_NAMED(["id", "price"], [Types.LONG(), Types.DOUBLE()])
    ds = env.from_collection([(i, "n") for i in range(1, 11)], type_info=ITEM)
    op = Operation("redis", address=users.address, command="GET price:{id}", result_field="price")
    got = rows(fnworker.unordered_wait_batch(ds, op, Time.seconds(30), batch_size=64, capacity=64,
                                             output_type=out_type))
    assert sorted(got) == [(i, i + 0.25 if i % 7 else None) for i in range(1, 11)]
