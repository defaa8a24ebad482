"""examples/pyflink/enrich_job.py and score_job.py against stand-ins for the
few PyFlink names they use (PyFlink is not installed here): the jobs build,
and the functions they hand to DataStream.process carry the specs they
describe; docs/pyflink.md's "A complete job" block is enrich_job.py. (tests/e2e/
test_examples.py runs both on a real Flink.)"""

import ast
import os
import re
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "pyflink"))

import fnworker  # noqa: E402
from protoc_decode import decode, flat  # noqa: E402
from test_datastream import StandInDataStream  # noqa: E402
from test_spec import BasicTypeInfo, RowTypeInfo  # noqa: E402


class PrimitiveArrayTypeInfo(object):
    """Stands in for PyFlink's class of that name (the package maps it by name)."""

    def __init__(self, element_type):
        self._element_type = element_type


class _StandInTime(object):
    def __init__(self, ms):
        self.ms = ms

    def to_milliseconds(self):
        return self.ms


def _stand_in_pyflink():
    """Modules pyflink.common and pyflink.datastream holding only what the example imports."""
    common = types.ModuleType("pyflink.common")
    common.Time = types.SimpleNamespace(seconds=lambda s: _StandInTime(s * 1000),
                                        milliseconds=lambda ms: _StandInTime(ms))
    common.Types = types.SimpleNamespace(
        LONG=lambda: BasicTypeInfo("LONG"), STRING=lambda: BasicTypeInfo("STRING"),
        DOUBLE=lambda: BasicTypeInfo("DOUBLE"), FLOAT=lambda: BasicTypeInfo("FLOAT"),
        PRIMITIVE_ARRAY=PrimitiveArrayTypeInfo, ROW_NAMED=lambda names, ts: RowTypeInfo(ts, names))
    datastream = types.ModuleType("pyflink.datastream")
    datastream.StreamExecutionEnvironment = None
    return {"pyflink": types.ModuleType("pyflink"), "pyflink.common": common,
            "pyflink.datastream": datastream}


class StandInEnv(object):
    def __init__(self):
        self.stream = StandInDataStream()

    def from_collection(self, rows, type_info=None):
        return self.stream


def _build(module_name):
    """Imports the example with the stand-ins in place and builds its job."""
    saved = {k: sys.modules.get(k) for k in ("pyflink", "pyflink.common", "pyflink.datastream")}
    sys.modules.update(_stand_in_pyflink())
    try:
        module = __import__(module_name)
        env = StandInEnv()
        module.build(env.from_collection([]))
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return env


class ExampleTest(unittest.TestCase):
    def test_score_job_batches_rows_to_the_model(self):
        env = _build("score_job")
        ((model, out_type),) = env.stream.calls
        self.assertIsInstance(model, fnworker.FnworkerFunction)
        m = flat(decode(model.operation_spec))
        self.assertIn('operation: "kserve"', m)
        self.assertIn('key: "inputs" value: "x:FP32[4]=features"', m)
        self.assertIn('key: "outputs" value: "y:FP32[2]=scores"', m)
        self.assertIn("capacity: 512 timeout_ms: 10000 batch_size: 64 batch_timeout_ms: 50", m)
        self.assertIn("mode: BATCH", m)
        self.assertIn("kind: EXPONENTIAL_BACKOFF max_attempts: 5", m)
        self.assertIn('field_name: "scores" field_type { type_name: PRIMITIVE_ARRAY '
                      'collection_element_type { type_name: FLOAT } }', m)

    def test_enrich_job_builds_its_three_functions(self):
        env = _build("enrich_job")
        (users, _), (scorer, _), (project, out_type) = env.stream.calls
        for f in (users, scorer, project):
            self.assertIsInstance(f, fnworker.FnworkerFunction)
        u = flat(decode(users.operation_spec))
        self.assertIn('operation: "redis"', u)
        self.assertIn('key: "command" value: "HGETALL user:{user_id}"', u)
        self.assertIn('key: "password_env" value: "FNW_SECRET_REDIS_PASSWORD"', u)
        self.assertIn("output_mode: UNORDERED capacity: 1000 timeout_ms: 1000", u)
        self.assertIn("retry { kind: FIXED_DELAY max_attempts: 2 delay_ms: 100 retry_on_error: true }", u)
        sc = flat(decode(scorer.operation_spec))
        self.assertIn('operation: "http"', sc)
        self.assertIn('key: "batch_body" value: "{\\"inputs\\": {items}}"', sc)
        self.assertIn('key: "result.score" value: "/outputs/{i}/score"', sc)
        self.assertNotIn("UNORDERED", sc)   # ORDERED is the proto default: not written
        self.assertIn("capacity: 1024 timeout_ms: 5000 batch_size: 64 batch_timeout_ms: 50 mode: BATCH", sc)
        self.assertIn('field_name: "score" field_type { type_name: DOUBLE }', sc)
        self.assertEqual(out_type._field_names, ["name", "id", "score"])
        self.assertIn('operation: "project" options { key: "fields" value: "name,id,score" }',
                      flat(decode(project.operation_spec)))

    def test_docs_complete_job_is_enrich_job(self):
        """docs/pyflink.md shows enrich_job.py as it is, without its docstring."""
        with open(os.path.join(HERE, "..", "..", "docs", "pyflink.md"), encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"^## A complete job\n.*?```python\n(.*?)```", text, re.S | re.M)
        self.assertIsNotNone(m, "docs/pyflink.md has no python block after ## A complete job")
        with open(os.path.join(HERE, "..", "..", "examples", "pyflink", "enrich_job.py"),
                  encoding="utf-8") as f:
            source = f.read()
        doc = ast.get_docstring(ast.parse(source), clean=False)
        body = source.split('"""' + doc + '"""\n', 1)[1].lstrip("\n")
        self.assertEqual(m.group(1), body)

    def test_examples_take_addresses_from_the_environment(self):
        saved = dict(os.environ)
        os.environ.update(REDIS_ADDRESS="127.0.0.1:16379", SCORER_URL="http://127.0.0.1:18080/s",
                          KSERVE_TARGET="127.0.0.1:18001")
        try:
            for name in ("enrich_job", "score_job"):
                sys.modules.pop(name, None)
            (users, _), (scorer, _), _ = _build("enrich_job").stream.calls
            ((model, _),) = _build("score_job").stream.calls
        finally:
            os.environ.clear()
            os.environ.update(saved)
            for name in ("enrich_job", "score_job"):
                sys.modules.pop(name, None)
        self.assertIn('key: "address" value: "127.0.0.1:16379"', flat(decode(users.operation_spec)))
        self.assertIn('key: "url" value: "http://127.0.0.1:18080/s"', flat(decode(scorer.operation_spec)))
        self.assertIn('key: "target" value: "127.0.0.1:18001"', flat(decode(model.operation_spec)))


if __name__ == "__main__":
    unittest.main()
