"""AVRO (GenericRecordAvroTypeInfo) through `identity` on a real Flink: records
of a schema with every Avro type (primitives, null unions, enum, fixed,
bytes, arrays, maps, nested records) are written to an Avro file in the JVM,
read by Flink's AvroInputFormat, sent through fnworker with Flink's
AvroSerializer on both sides, and must come back equal to what the same job
without fnworker collects. The Avro format is not in the wheels:
scripts/e2e-jars.sh fetches flink-sql-avro (tests/e2e/jars-LINE.txt) into
build/e2e/jars/LINE/, and the job adds it with env.add_jars."""

import glob
import os

from pyflink.common import Time
from pyflink.java_gateway import get_gateway

import fnworker
import fnw_e2e
import jvals as J
from fnworker import Operation

SCHEMA = """{"type": "record", "name": "Order", "namespace": "e2e", "fields": [
  {"name": "id", "type": "long"},
  {"name": "qty", "type": "int"},
  {"name": "ok", "type": "boolean"},
  {"name": "f", "type": "float"},
  {"name": "d", "type": "double"},
  {"name": "name", "type": "string"},
  {"name": "note", "type": ["null", "string"]},
  {"name": "raw", "type": "bytes"},
  {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
  {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
  {"name": "tags", "type": {"type": "array", "items": "string"}},
  {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
  {"name": "inner", "type": ["null", {"type": "record", "name": "Inner", "fields": [
      {"name": "x", "type": "int"},
      {"name": "deeper", "type": {"type": "array", "items": {"type": "array", "items": "double"}}}]}]}
]}"""


def flink_line():
    from pyflink.version import __version__
    return ".".join(__version__.split(".")[:2])


def avro_jar():
    jars = glob.glob(os.path.join(fnw_e2e.BUILD, "e2e", "jars", flink_line(), "flink-sql-avro-*.jar"))
    assert jars, ("flink-sql-avro for PyFlink %s is not in %s/e2e/jars/%s: run "
                  "`sh scripts/e2e-jars.sh build %s` (make e2e does)"
                  % (flink_line(), fnw_e2e.BUILD, flink_line(), flink_line()))
    return jars[0]


def avro():
    return get_gateway().jvm.org.apache.flink.avro.shaded.org.apache.avro


def record(schema, values):
    a = avro()
    r = a.generic.GenericData.Record(schema)
    for name, v in values.items():
        J.invoke(r, None, "put",
                 ["java.lang.String", "java.lang.Object"], [name, v])
    return r


def records(schema):
    a = avro()
    jvm = get_gateway().jvm
    kind, fixed = schema.getField("kind").schema(), schema.getField("hash").schema()
    inner = schema.getField("inner").schema().getTypes().get(1)

    def common(i, name, note, raw, k, h, tags, attrs, inr):
        return {"id": J.l(i), "qty": J.i(-i), "ok": J.z(i % 2 == 0), "f": J.f(0.5 * i),
                "d": J.d(float("-inf") if i == 3 else i / 3.0), "name": name, "note": note,
                "raw": jvm.java.nio.ByteBuffer.wrap(raw), "kind": a.generic.GenericData.EnumSymbol(kind, k),
                "hash": a.generic.GenericData.Fixed(fixed, h), "tags": J.jlist(tags),
                "attrs": J.jmap(attrs), "inner": inr}
    return [
        record(schema, common(1, "first", "n", b"\x00\x01\xff", "A", b"abcd", ["x", "", "\u4e2d"],
                              [("k", J.l(7))],
                              record(inner, {"x": J.i(5), "deeper": J.jlist([J.jlist([J.d(1.5)]), J.jlist([])])}))),
        record(schema, common(2, "", None, b"", "C", b"\x00\x00\x00\x00", [], [], None)),
        record(schema, common(3, "é\u0000\U0001F600" * 100, "", b"\x80" * 300, "B", b"\xff\xfe\xfd\xfc",
                              ["a"] * 200, [("z", None)],
                              record(inner, {"x": J.i(-2 ** 31), "deeper": J.jlist([])}))),
    ]


def write_file(path, schema, recs):
    a = avro()
    jvm = get_gateway().jvm
    w = a.file.DataFileWriter(a.generic.GenericDatumWriter(schema))
    w.create(schema, jvm.java.io.File(path))
    for r in recs:
        w.append(r)
    w.close()


def test_avro_generic_records_through_identity(env, ran_in_fnworker, tmp_path):
    from pyflink.datastream.formats.avro import AvroInputFormat, AvroSchema, GenericRecordAvroTypeInfo
    env.add_jars("file://" + avro_jar())
    schema = AvroSchema.parse_string(SCHEMA)
    recs = records(schema._j_schema)
    path = str(tmp_path / "orders.avro")
    write_file(path, schema._j_schema, recs)
    t = GenericRecordAvroTypeInfo(schema)

    # What Flink itself reads (no fnworker): the reference, and a check of the file.
    control = J.collect(env.create_input(AvroInputFormat(path, schema)), recs)
    assert [str(r) for r in control] == [str(r) for r in recs]

    ds = env.create_input(AvroInputFormat(path, schema))
    out = fnworker.ordered_wait(ds, Operation("identity"), Time.seconds(10), output_type=t)
    got = J.collect(out, recs)
    ok, e, a = J.same(control, got)
    assert ok, "results differ:\n expected %s\n got      %s" % (e, a)
