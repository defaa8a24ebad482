"""The lookup cache of the redis and http operations (cache_max_rows, per
element) in real Flink jobs: rows with repeated keys get exactly the outputs
an uncached job gives, while the service is called once per distinct key
(Redis: server-side INFO commandstats; HTTP: the test server's /count)."""

import json
import os
import re
import tempfile
import urllib.request

from pyflink.common import Time, Types

import fnworker
from fnworker import Operation
from fnw_e2e import ROOT, collect, launches, run_job_script
from services import http_server, redis_client, redis_server, serve  # noqa: F401 (fixtures)

CLICK = Types.ROW_NAMED(["id", "user_id"], [Types.LONG(), Types.LONG()])
PROFILE = Types.ROW_NAMED(["id", "user_id", "name", "tier"],
                          [Types.LONG(), Types.LONG(), Types.STRING(), Types.STRING()])


def hgetall_calls(r):
    return r.info("commandstats").get("cmdstat_hgetall", {}).get("calls", 0)


def test_cached_profile_lookup_calls_redis_once_per_user(env, ran_in_fnworker, redis_server):
    """600 clicks of 25 users (users 21..25 have no profile): every output is
    the click's own id with its user's profile (null fields for a missing
    one), in input order; Redis sees one HGETALL per user, missing ones
    included (cache_missing true)."""
    r = redis_client(redis_server)
    r.flushall()
    for u in range(1, 21):
        r.hset("profile:%d" % u, mapping={"name": "user-%d" % u, "tier": ("gold", "silver")[u % 2]})
    r.config_resetstat()
    clicks = [(i, i * 7 % 25 + 1) for i in range(600)]
    ds = env.from_collection(clicks, type_info=CLICK)
    op = Operation("redis", address=redis_server.address, command="HGETALL profile:{user_id}",
                   result_fields="name,tier", cache_max_rows=10000, cache_ttl_ms=600000,
                   cache_missing=True)
    got = [tuple(x) for x in collect(fnworker.ordered_wait(ds, op, Time.seconds(10), 100,
                                                           output_type=PROFILE))]
    want = [(i, u, "user-%d" % u, ("gold", "silver")[u % 2]) if u <= 20 else (i, u, None, None)
            for i, u in clicks]
    assert got == want
    assert hgetall_calls(r) == 25


def test_uncached_lookup_calls_redis_per_row(env, ran_in_fnworker, redis_server):
    """The control: the same job without cache_max_rows calls Redis for every row."""
    r = redis_client(redis_server)
    r.flushall()
    for u in range(1, 21):
        r.hset("profile:%d" % u, mapping={"name": "user-%d" % u, "tier": "gold"})
    r.config_resetstat()
    clicks = [(i, i % 20 + 1) for i in range(200)]
    ds = env.from_collection(clicks, type_info=CLICK)
    op = Operation("redis", address=redis_server.address, command="HGETALL profile:{user_id}",
                   result_fields="name,tier")
    got = [tuple(x) for x in collect(fnworker.ordered_wait(ds, op, Time.seconds(10), 100,
                                                           output_type=PROFILE))]
    assert got == [(i, u, "user-%d" % u, "gold") for i, u in clicks]
    assert hgetall_calls(r) == 200


def test_cached_http_lookup_requests_once_per_key(env, ran_in_fnworker, http_server):
    """http per element with the cache: 300 rows of 12 keys, each row's own
    id kept, one request per key at the server."""
    def count():
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
        with opener.open(http_server.url("/count"), timeout=5) as resp:
            return json.loads(resp.read())["requests"]

    out = Types.ROW_NAMED(["id", "user_id", "path"], [Types.LONG(), Types.LONG(), Types.STRING()])
    rows = [(i, i * 5 % 12) for i in range(300)]
    ds = env.from_collection(rows, type_info=CLICK)
    op = Operation("http", url=http_server.url("/headers/u/{user_id}"), **{"result.path": "/_path"},
                   cache_max_rows=100)
    before = count()
    got = [tuple(x) for x in collect(fnworker.unordered_wait(ds, op, Time.seconds(10), 64,
                                                             output_type=out))]
    assert sorted(got) == [(i, u, "/headers/u/%d" % u) for i, u in rows]
    assert count() - before == 12


def test_docs_cached_profile_lookup_as_written(runner_dir):
    """docs/cache.md's worked example runs as written (only its Redis address
    changes), in a process of its own, prints the rows the doc shows, and
    Redis answers the three HGETALLs the doc promises for six clicks."""
    with open(os.path.join(ROOT, "docs", "cache.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"## Example: a cached profile lookup\n.*?```python\n(.*?)```", text, re.S)
    assert m, "docs/cache.md has no python block in its example"
    source = m.group(1)
    assert '"127.0.0.1:6379"' in source
    with serve("redis") as redis, tempfile.TemporaryDirectory() as tmp:
        r = redis_client(redis)
        r.hset("profile:7", mapping={"name": "ann", "tier": "gold"})
        r.hset("profile:9", mapping={"name": "bob", "tier": "silver"})
        r.config_resetstat()
        script = os.path.join(tmp, "cache_job.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(source.replace('"127.0.0.1:6379"', '"%s"' % redis.address))
        before = launches(runner_dir)
        p = run_job_script(script, runner_dir)
        calls = hgetall_calls(r)
    assert p.returncode == 0, p.stdout[-3000:]
    assert launches(runner_dir) > before
    rows = [m.group(1) for m in re.finditer(r"^(?:\d+> )?\+I\[(.*)\]$", p.stdout, re.M)]
    assert rows == ["1, 7, ann, gold", "2, 9, bob, silver", "3, 7, ann, gold", "4, 12, null, null",
                    "5, 7, ann, gold", "6, 12, null, null"], p.stdout[-3000:]
    assert calls == 3
