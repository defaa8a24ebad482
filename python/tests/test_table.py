"""fnworker.udf / fnworker.udtf and the SQL type encoder, without running
Flink: the OperationSpec's Table fields (result_type 13, argument_names 14,
result_field 15) as protoc reads them; with PyFlink installed (run this file
with a PyFlink virtualenv's python, e.g. build/flink/2.3/venv/bin/python),
every PyFlink DataType's Schema.FieldType bytes as PyFlink's own generated
proto (flink_fn_execution_pb2) decodes them, the function PyFlink pickles
(the fixed form run_in_fnworker(<spec>), no DelegatingScalarFunction), and
the refusals. Debian's python3 runs the first part and skips the rest.

    cd python && ../build/flink/2.3/venv/bin/python -m unittest tests.test_table
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fnworker  # noqa: E402
from fnworker import Operation, _sqltypes, _table  # noqa: E402
from fnworker._payload import operation_spec_of  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protoc_decode import decode, flat  # noqa: E402

try:
    from pyflink.fn_execution import flink_fn_execution_pb2 as pb
    from pyflink.table import DataTypes as D
    from pyflink.table import udf as pudf
    import cloudpickle
except ImportError:
    pb = None


def standin(cls, **attrs):
    """An object shaped like a PyFlink DataType of class cls (the encoder goes by class name)."""
    attrs.setdefault("_nullable", True)
    return type(cls, (), attrs)()


class TableSpecTest(unittest.TestCase):
    """The spec fields, with stand-ins for PyFlink's types (no PyFlink needed)."""

    def test_fields_13_to_15(self):
        t = _sqltypes.field_type(standin("BigIntType", _nullable=False))
        spec = _table.table_spec(Operation("http", url="http://127.0.0.1/x", **{"result.s": "/s"}),
                                 t, ["user_id", "x"], "s")
        text = flat(decode(spec))
        self.assertIn('result_type { type_name: BIGINT }', text)
        self.assertIn('argument_names: "user_id" argument_names: "x" result_field: "s"', text)

    def test_result_field_default_is_left_out(self):
        t = _sqltypes.field_type(standin("IntType"))
        text = flat(decode(_table.table_spec(Operation("identity"), t, [], "result")))
        self.assertIn("result_type { type_name: INT nullable: true }", text)
        self.assertNotIn("result_field", text)
        self.assertNotIn("argument_names", text)

    def test_inferred_result_field(self):
        f = _table.inferred_result_field
        self.assertEqual(f(Operation("identity"), []), "arg0")
        self.assertEqual(f(Operation("echo"), ["v", "w"]), "v")
        self.assertEqual(f(Operation("redis", command="GET p:{id}", result_field="price"), ["id"]),
                         "price")
        self.assertEqual(f(Operation("redis", command="HGETALL u:{id}"), ["id"]), "result")
        self.assertEqual(f(Operation("http", url="u", **{"result.score": "/s"}), []), "score")
        self.assertEqual(f(Operation("http", url="u", **{"result.a": "/a", "result.b": "/b"}), []),
                         "result")
        self.assertEqual(f(Operation("kserve", outputs="y:FP32[2, 3]=scores"), []), "scores")
        self.assertEqual(f(Operation("kserve", outputs="y=a, z=b"), []), "result")
        self.assertEqual(f(Operation("project", fields="name"), []), "name")

    def test_string_types_are_refused(self):
        with self.assertRaisesRegex(TypeError, "DataTypes object.*'BIGINT'"):
            _sqltypes.field_type("BIGINT")

    def test_unknown_and_refused_types(self):
        with self.assertRaisesRegex(ValueError, "MULTISET.*it serves TINYINT"):
            _sqltypes.field_type(standin("MultisetType"))
        with self.assertRaisesRegex(ValueError, "does not serve the SQL type"):
            _sqltypes.field_type(standin("SomethingNew"))
        with self.assertRaisesRegex(TypeError, "not a PyFlink DataType"):
            _sqltypes.field_type(42)


@unittest.skipIf(pb is None, "PyFlink is not installed (run with a PyFlink virtualenv's python)")
class PyFlinkTypesTest(unittest.TestCase):
    """Each DataType's bytes, decoded by PyFlink's own flink_fn_execution_pb2."""

    def ft(self, t):
        return pb.Schema.FieldType.FromString(_sqltypes.field_type(t))

    def test_atomic_types(self):
        T = pb.Schema.TypeName
        for t, name in [(D.TINYINT(), T.TINYINT), (D.SMALLINT(), T.SMALLINT), (D.INT(), T.INT),
                        (D.BIGINT(), T.BIGINT), (D.BOOLEAN(), T.BOOLEAN), (D.FLOAT(), T.FLOAT),
                        (D.DOUBLE(), T.DOUBLE), (D.DATE(), T.DATE)]:
            got = self.ft(t)
            self.assertEqual((got.type_name, got.nullable, got.WhichOneof("type_info")),
                             (name, True, None), t)
        self.assertFalse(self.ft(D.INT(False)).nullable)

    def test_types_with_a_length_or_precision(self):
        cases = [(D.DECIMAL(38, 18), "DECIMAL", "decimal_info", (38, 18)),
                 (D.DECIMAL(10, 0), "DECIMAL", "decimal_info", (10, 0)),
                 (D.TIME(0), "TIME", "time_info", (0,)),
                 (D.TIMESTAMP(3), "TIMESTAMP", "timestamp_info", (3,)),
                 (D.TIMESTAMP(9), "TIMESTAMP", "timestamp_info", (9,)),
                 (D.TIMESTAMP_LTZ(6), "LOCAL_ZONED_TIMESTAMP", "local_zoned_timestamp_info", (6,)),
                 (D.CHAR(3), "CHAR", "char_info", (3,)),
                 (D.VARCHAR(10), "VARCHAR", "var_char_info", (10,)),
                 (D.STRING(), "VARCHAR", "var_char_info", (2147483647,)),
                 (D.BINARY(2), "BINARY", "binary_info", (2,)),
                 (D.VARBINARY(8), "VARBINARY", "var_binary_info", (8,)),
                 (D.BYTES(), "VARBINARY", "var_binary_info", (2147483647,))]
        for t, name, oneof, values in cases:
            got = self.ft(t)
            self.assertEqual(pb.Schema.TypeName.Name(got.type_name), name, t)
            self.assertEqual(got.WhichOneof("type_info"), oneof, t)
            info = getattr(got, oneof)
            got_values = ((info.precision, info.scale) if oneof == "decimal_info" else
                          (info.precision,) if oneof.endswith("time_info") or "timestamp" in oneof
                          else (info.length,))
            self.assertEqual(got_values, values, t)

    def test_array_map_row_nested(self):
        t = D.ROW([D.FIELD("a", D.ARRAY(D.INT(False))),
                   D.FIELD("m", D.MAP(D.STRING(), D.DECIMAL(5, 2))),
                   D.FIELD("r", D.ROW([D.FIELD("x", D.TIMESTAMP(3))], nullable=False))])
        got = self.ft(t)
        self.assertEqual(pb.Schema.TypeName.Name(got.type_name), "ROW")
        a, m, r = got.row_schema.fields
        self.assertEqual([a.name, m.name, r.name], ["a", "m", "r"])
        self.assertEqual(a.description, "")     # not PyFlink's '...' placeholder
        self.assertEqual(pb.Schema.TypeName.Name(a.type.type_name), "BASIC_ARRAY")
        self.assertEqual(pb.Schema.TypeName.Name(a.type.collection_element_type.type_name), "INT")
        self.assertFalse(a.type.collection_element_type.nullable)
        self.assertEqual(pb.Schema.TypeName.Name(m.type.map_info.key_type.type_name), "VARCHAR")
        self.assertEqual(m.type.map_info.value_type.decimal_info.precision, 5)
        self.assertFalse(r.type.nullable)
        self.assertEqual(r.type.row_schema.fields[0].type.timestamp_info.precision, 3)

    def test_refusals(self):
        for t, what in [(D.MULTISET(D.INT()), "MULTISET"), (D.NULL(), "NULL"),
                        (D.INTERVAL(D.DAY(), D.SECOND()), "INTERVAL DAY TO SECOND"),
                        (D.ARRAY(D.MULTISET(D.INT())), "MULTISET")]:
            with self.assertRaisesRegex(ValueError, "does not serve the SQL type " + what):
                _sqltypes.field_type(t)


@unittest.skipIf(pb is None, "PyFlink is not installed (run with a PyFlink virtualenv's python)")
class PyFlinkFunctionTest(unittest.TestCase):
    """What PyFlink pickles for the JVM (UserDefinedFunctionWrapper._java_user_defined_function:
    cloudpickle.dumps of the wrapper's function, which is a UserDefinedFunction as it is)."""

    def pickled(self, wrapper):
        self.assertIsInstance(wrapper._func, pudf.UserDefinedFunction)
        return cloudpickle.dumps(wrapper._func)

    def test_udf_pickle_is_the_fixed_form(self):
        op = Operation("http", url="http://127.0.0.1/s", **{"result.score": "/score"})
        op = op.with_settings(mode="BATCH", batch_size=8, timeout_ms=500, capacity=32)
        f = fnworker.udf(op, D.DOUBLE(), argument_names=["user_id"])
        self.assertIsInstance(f, pudf.UserDefinedScalarFunctionWrapper)
        self.assertEqual(f._name, "fnworker_http")
        spec = operation_spec_of(self.pickled(f))
        text = flat(decode(spec))
        for part in ('operation: "http"', "capacity: 32", "timeout_ms: 500", "batch_size: 8",
                     "mode: BATCH", "result_type { type_name: DOUBLE nullable: true }",
                     'argument_names: "user_id"', 'result_field: "score"'):
            self.assertIn(part, text)
        self.assertEqual(cloudpickle.dumps(f._func), self.pickled(f))   # the same each time
        with self.assertRaisesRegex(RuntimeError, "PYFLINK_UDF_RUNNER_DIR"):
            f._func.eval(1)
        with self.assertRaisesRegex(RuntimeError, "PYFLINK_UDF_RUNNER_DIR"):
            cloudpickle.loads(self.pickled(f))

    def test_row_result_has_no_result_field(self):
        row = D.ROW([D.FIELD("city", D.STRING()), D.FIELD("age", D.INT())])
        f = fnworker.udf(Operation("identity"), row, argument_names=["city", "age"], name="both")
        self.assertEqual(f._name, "both")
        text = flat(decode(operation_spec_of(self.pickled(f))))
        self.assertNotIn("result_field", text)
        self.assertIn('row_schema { fields { name: "city"', text)
        with self.assertRaisesRegex(ValueError, "is a ROW"):
            fnworker.udf(Operation("identity"), row, result_field="city")

    def test_deterministic_is_passed_on(self):
        f = fnworker.udf(Operation("echo"), D.INT(), deterministic=False)
        self.assertFalse(f._deterministic)
        self.assertFalse(f._func.is_deterministic())

    def test_udtf(self):
        t = fnworker.udtf(Operation("echo", repeat=3), [D.INT(), D.STRING()], argument_names=["a", "b"])
        self.assertIsInstance(t, pudf.UserDefinedTableFunctionWrapper)
        self.assertIsInstance(t._func, pudf.TableFunction)
        text = flat(decode(operation_spec_of(self.pickled(t))))
        # type_name ROW is 0, proto3's default: not written, so protoc does not show it
        self.assertIn('result_type { nullable: true row_schema { fields { name: "f0" '
                      'type { type_name: INT nullable: true } } fields { name: "f1"', text)
        self.assertNotIn("result_field", text)
        t2 = fnworker.udtf(Operation("echo"), D.ROW([D.FIELD("n", D.BIGINT())]))
        self.assertIn('name: "f0" type { type_name: BIGINT',
                      flat(decode(operation_spec_of(self.pickled(t2)))))

    def test_input_types(self):
        f = fnworker.udf(Operation("identity"), D.DECIMAL(3, 2), input_types=[D.DECIMAL(3, 2)])
        self.assertEqual([str(t) for t in f._input_types], [str(D.DECIMAL(3, 2))])   # Flink casts
        text = flat(decode(operation_spec_of(self.pickled(f))))
        self.assertIn("argument_types { type_name: DECIMAL nullable: true decimal_info { precision: 3 "
                      "scale: 2 } }", text)
        t = fnworker.udtf(Operation("echo"), [D.INT()], input_types=D.ROW([D.FIELD("a", D.INT()),
                                                                           D.FIELD("b", D.DATE())]))
        self.assertEqual(len(t._input_types), 2)
        self.assertEqual(flat(decode(operation_spec_of(self.pickled(t)))).count("argument_types {"), 2)
        self.assertNotIn("argument_types", flat(decode(operation_spec_of(
            self.pickled(fnworker.udf(Operation("echo"), D.INT()))))))
        with self.assertRaisesRegex(ValueError, "argument_names has 1 names but input_types 2 types"):
            fnworker.udf(Operation("echo"), D.INT(), argument_names=["a"], input_types=[D.INT(), D.INT()])
        with self.assertRaisesRegex(ValueError, "input_types is empty"):
            fnworker.udf(Operation("echo"), D.INT(), input_types=[])
        with self.assertRaisesRegex(ValueError, "MULTISET"):
            fnworker.udf(Operation("echo"), D.INT(), input_types=[D.MULTISET(D.INT())])

    def test_jvm_async(self):
        if hasattr(pudf, "UserDefinedAsyncScalarFunctionWrapper"):
            f = fnworker.udf(Operation("echo"), D.INT(), jvm_async=True)
            self.assertIsInstance(f, pudf.UserDefinedAsyncScalarFunctionWrapper)
            self.assertIsInstance(f._func, pudf.AsyncScalarFunction)
            self.assertIsNotNone(operation_spec_of(self.pickled(f)))
        else:
            with self.assertRaisesRegex(ValueError, r"PyFlink 2\.3 and later\); this is PyFlink 1\."):
                fnworker.udf(Operation("echo"), D.INT(), jvm_async=True)

    def test_refusals(self):
        with self.assertRaisesRegex(TypeError, "expected a fnworker.Operation"):
            fnworker.udf(lambda x: x, D.INT())
        with self.assertRaisesRegex(ValueError, "given twice"):
            fnworker.udf(Operation("echo"), D.INT(), argument_names=["a", "a"])
        with self.assertRaisesRegex(TypeError, "list of names"):
            fnworker.udf(Operation("echo"), D.INT(), argument_names="a")
        with self.assertRaisesRegex(ValueError, "input_field is a DataStream setting"):
            fnworker.udf(Operation("echo").with_settings(input_field="f1"), D.INT())
        with self.assertRaisesRegex(ValueError, "MULTISET"):
            fnworker.udf(Operation("echo"), D.MULTISET(D.INT()))
        with self.assertRaisesRegex(TypeError, "DataTypes object"):
            fnworker.udf(Operation("echo"), "INT")
        with self.assertRaisesRegex(ValueError, "at least one result type"):
            fnworker.udtf(Operation("echo"), [])


if __name__ == "__main__":
    unittest.main()
