"""examples/pyflink/enrich_job.py against stand-ins for the few PyFlink names
it uses (PyFlink cannot be installed here): the job builds, and the two
functions it hands to DataStream.process carry the specs it describes."""

import os
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
        DOUBLE=lambda: BasicTypeInfo("DOUBLE"), ROW_NAMED=lambda names, ts: RowTypeInfo(ts, names))
    datastream = types.ModuleType("pyflink.datastream")
    datastream.StreamExecutionEnvironment = None
    return {"pyflink": types.ModuleType("pyflink"), "pyflink.common": common,
            "pyflink.datastream": datastream}


class StandInEnv(object):
    def __init__(self):
        self.stream = StandInDataStream()

    def from_collection(self, rows, type_info=None):
        return self.stream


class ExampleTest(unittest.TestCase):
    def test_enrich_job_builds_its_three_functions(self):
        saved = {k: sys.modules.get(k) for k in ("pyflink", "pyflink.common", "pyflink.datastream")}
        sys.modules.update(_stand_in_pyflink())
        try:
            import enrich_job
            env = StandInEnv()
            enrich_job.build(env)
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        (users, _), (scorer, _), (project, out_type) = env.stream.calls
        for f in (users, scorer, project):
            self.assertIsInstance(f, fnworker.FnworkerFunction)
        u = flat(decode(users.operation_spec))
        self.assertIn('operation: "redis"', u)
        self.assertIn('key: "command" value: "HGETALL user:{user_id}"', u)
        self.assertIn('key: "password_env" value: "REDIS_PASSWORD"', u)
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

if __name__ == "__main__":
    unittest.main()
