// Self-test of the harness's own type codec: the exact bytes of a runner
// input row Row(LONG ts, LONG watermark, Row(STRING, INT)) and a runner
// output row Row(LONG ts, INT) as Flink frames them (with the null variants),
// of row kinds and null masks and of each atomic layout, then
// encode/decode/JSON round trips of generated values for every type.
//   java -cp $(cat build/harness/classpath) fnworker.harness.types.CodecSelfTest
package fnworker.harness.types;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public final class CodecSelfTest {
  private int passed;
  private final List<String> failures = new ArrayList<>();

  /** Every type the codec supports, as one-type jobs would use them. */
  public static final String[] ALL_TYPES = {
      "STRING", "BYTE", "BOOLEAN", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "CHAR", "BIG_INT", "BIG_DEC",
      "SQL_DATE", "SQL_TIME", "SQL_TIMESTAMP", "INSTANT", "LOCAL_DATE", "LOCAL_TIME", "LOCAL_DATETIME",
      "PICKLED_BYTES", "PRIMITIVE_ARRAY<BYTE>", "PRIMITIVE_ARRAY<BOOLEAN>", "PRIMITIVE_ARRAY<SHORT>",
      "PRIMITIVE_ARRAY<INT>", "PRIMITIVE_ARRAY<LONG>", "PRIMITIVE_ARRAY<FLOAT>", "PRIMITIVE_ARRAY<DOUBLE>",
      "PRIMITIVE_ARRAY<CHAR>", "BASIC_ARRAY<STRING>", "BASIC_ARRAY<INT>", "OBJECT_ARRAY<ROW<a:INT,b:STRING>>",
      "LIST<STRING>", "LIST<LIST<INT>>", "MAP<STRING,INT>", "MAP<INT,LIST<STRING>>", "TUPLE<INT,DOUBLE,STRING>",
      "TUPLE<>", "ROW<>", "ROW<a:INT,b:ROW<c:STRING,d:LIST<LONG>>,e:MAP<STRING,DOUBLE>>",
      "ROW<f0:INT,f1:INT,f2:INT,f3:INT,f4:INT,f5:INT,f6:INT,f7:INT,f8:INT,f9:INT>",
      "AVRO<" + avroSchema() + ">", "AVRO<" + richAvroSchema() + ">",
  };

  public static String avroSchema() {
    return "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
        + "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"age\",\"type\":[\"null\",\"int\"]},"
        + "{\"name\":\"ok\",\"type\":\"boolean\"},{\"name\":\"score\",\"type\":\"double\"}]}";
  }

  /** Every Avro kind, names used again by reference, a recursive field. */
  public static String richAvroSchema() {
    return "{\"type\":\"record\",\"name\":\"Event\",\"namespace\":\"fnw.test\",\"fields\":["
        + "{\"name\":\"i\",\"type\":\"int\"},{\"name\":\"l\",\"type\":\"long\"},"
        + "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":\"double\"},"
        + "{\"name\":\"ok\",\"type\":\"boolean\"},{\"name\":\"s\",\"type\":\"string\"},"
        + "{\"name\":\"raw\",\"type\":\"bytes\"},"
        + "{\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"RED\",\"GREEN\",\"BLUE\"]}},"
        + "{\"name\":\"id\",\"type\":{\"type\":\"fixed\",\"name\":\"Id\",\"size\":4}},"
        + "{\"name\":\"opt\",\"type\":[\"null\",\"Color\",\"string\"]},"
        + "{\"name\":\"grid\",\"type\":{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":\"int\"}}},"
        + "{\"name\":\"tags\",\"type\":{\"type\":\"map\",\"values\":{\"type\":\"record\",\"name\":\"Tag\","
        + "\"fields\":[{\"name\":\"w\",\"type\":\"double\"},{\"name\":\"c\",\"type\":\"fnw.test.Color\"}]}}},"
        + "{\"name\":\"next\",\"type\":[\"null\",\"Event\"]}]}";
  }

  /** The hand-worked record of tests/unit/codecs/test_serializer_avro.c (every primitive). */
  public static final String ALL_SCHEMA = "{\"type\":\"record\",\"name\":\"All\",\"fields\":["
      + "{\"name\":\"b\",\"type\":\"boolean\"},{\"name\":\"i\",\"type\":\"int\"},"
      + "{\"name\":\"l\",\"type\":\"long\"},{\"name\":\"f\",\"type\":\"float\"},"
      + "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"s\",\"type\":\"string\"},"
      + "{\"name\":\"y\",\"type\":\"bytes\"},"
      + "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"R\",\"G\",\"B\"]}},"
      + "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"F3\",\"size\":3}},"
      + "{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"c\",\"type\":\"Color\"}]}";

  /** All{b=true, i=-2, l=-3, f=1.5, d=-2.25, s="hé", y=[1,2], e=B, x="abc", n=null, c=R}. */
  public static java.util.Map<String, Object> allValue() {
    java.util.Map<String, Object> v = new java.util.LinkedHashMap<>();
    v.put("b", true);
    v.put("i", -2);
    v.put("l", -3L);
    v.put("f", 1.5f);
    v.put("d", -2.25d);
    v.put("s", "hé");
    v.put("y", new byte[]{1, 2});
    v.put("e", new Avro.EnumSymbol("B"));
    v.put("x", new byte[]{'a', 'b', 'c'});
    v.put("n", null);
    v.put("c", new Avro.EnumSymbol("R"));
    return v;
  }

  /** allValue() in Flink's encoding, worked out by hand. */
  public static final String ALL_BYTES = "01 | FFFFFFFE | FFFFFFFFFFFFFFFD | 3FC00000 | C002000000000000"
      + " | 00000003 68C3A9 | 00000002 0102 | 00000002 | 616263 | 00000000";

  public static void main(String[] args) {
    CodecSelfTest t = new CodecSelfTest();
    t.run();
    System.out.println(t.passed + " passed, " + t.failures.size() + " failed");
    System.exit(t.failures.isEmpty() ? 0 : 1);
  }

  private void check(String name, boolean ok, String detail) {
    if (ok) {
      passed++;
      System.out.println("PASS " + name);
    } else {
      failures.add(name);
      System.out.println("FAIL " + name + ": " + detail);
    }
  }

  private void bytes(String name, TypeInfo t, Object v, String hex) {
    byte[] want = Hex.parse(hex);
    byte[] got;
    try {
      got = TypeCodec.encode(t, v);
    } catch (RuntimeException e) {
      check(name, false, "encode threw " + e);
      return;
    }
    if (!Arrays.equals(got, want)) {
      check(name, false, "encoded " + Hex.of(got) + ", expected " + Hex.of(want));
      return;
    }
    Object back;
    try {
      back = TypeCodec.decode(t, want);
    } catch (RuntimeException e) {
      check(name, false, "decode threw " + e);
      return;
    }
    String d = Values.firstDifference(t, v, back, "");
    check(name, d == null, "decode differs: " + d);
  }

  /** hex decodes to v (for inputs the encoder never writes, e.g. several blocks). */
  private void decodes(String name, TypeInfo t, String hex, Object v) {
    Object back;
    try {
      back = TypeCodec.decode(t, Hex.parse(hex));
    } catch (RuntimeException e) {
      check(name, false, "decode threw " + e);
      return;
    }
    String d = Values.firstDifference(t, v, back, "");
    check(name, d == null, "decode differs: " + d);
  }

  private void rejects(String name, TypeInfo t, String hex) {
    try {
      Object v = TypeCodec.decode(t, Hex.parse(hex));
      check(name, false, "decoded " + v + " instead of failing");
    } catch (ByteReader.DecodeException e) {
      check(name, true, "");
    }
  }

  void run() {
    TypeInfo inner = TypeInfo.parse("ROW<s:STRING,i:INT>");
    TypeInfo in = TypeInfo.runnerInput(inner);
    // A runner input row: Row(1000, MIN, Row("ab", 5)).
    byte[] rec = TypeCodec.encode(in, Row.of(1000L, Long.MIN_VALUE, Row.of("ab", 5)));
    byte[] framed = new ByteWriter().varint(rec.length).bytes(rec).toByteArray();
    check("input row on the wire",
        Arrays.equals(framed, Hex.parse("1C | 00 | 00 00 00 00 00 00 03 E8 | 80 00 00 00 00 00 00 00 | 00 | 00 00 00 02 61 62 | 00 00 00 05")),
        Hex.of(framed));
    bytes("input row, inner STRING null", in, Row.of(1000L, Long.MIN_VALUE, Row.of(null, 5)),
        "00 00000000000003E8 8000000000000000 20 00000005");
    byte[] innerNull = TypeCodec.encode(in, Row.of(1000L, Long.MIN_VALUE, Row.of(null, 5)));
    check("input row, inner null is 22 bytes", innerNull.length == 22, "got " + innerNull.length);
    bytes("input row, outer data null", in, Row.of(1000L, Long.MIN_VALUE, null), "08 00000000000003E8 8000000000000000");
    // A runner output row: Row(1000, 7) as Row(LONG, INT).
    TypeInfo out = TypeInfo.runnerOutput(TypeInfo.atomic(TypeName.INT));
    byte[] o = TypeCodec.encode(out, Row.of(1000L, 7));
    byte[] of = new ByteWriter().varint(o.length).bytes(o).toByteArray();
    check("output row on the wire", Arrays.equals(of, Hex.parse("0D 00 00000000000003E8 00000007")), Hex.of(of));

    // Row kinds and null masks (Flink's RowSerializer).
    TypeInfo r1 = TypeInfo.parse("ROW<a:INT>");
    bytes("row kind UPDATE_BEFORE", r1, new Row(Row.UPDATE_BEFORE, 1), "80 00000001");
    bytes("row kind UPDATE_AFTER", r1, new Row(Row.UPDATE_AFTER, 1), "40 00000001");
    bytes("row kind DELETE + null", r1, new Row(Row.DELETE, (Object) null), "E0");
    TypeInfo r7 = TypeInfo.parse("ROW<INT,INT,INT,INT,INT,INT,INT>");
    bytes("row of 7: two mask bytes, field 6 null", r7, Row.of(1, 2, 3, 4, 5, 6, null),
        "00 80 00000001 00000002 00000003 00000004 00000005 00000006");
    bytes("row of 6: one mask byte, all null", TypeInfo.parse("ROW<INT,INT,INT,INT,INT,INT>"),
        Row.of(null, null, null, null, null, null), "3F");
    rejects("row mask padding bits set", TypeInfo.parse("ROW<INT>"), "01 00000001");
    bytes("empty row", TypeInfo.parse("ROW<>"), Row.of(), "00");

    // Atomic layouts (each type's Flink serializer).
    bytes("STRING utf-8", t("STRING"), "é", "00000002 C3A9");
    bytes("STRING empty", t("STRING"), "", "00000000");
    bytes("BYTE", t("BYTE"), (byte) -2, "FE");
    bytes("BOOLEAN", t("BOOLEAN"), true, "01");
    rejects("BOOLEAN 2", t("BOOLEAN"), "02");
    bytes("SHORT", t("SHORT"), (short) -2, "FFFE");
    bytes("INT", t("INT"), 0x01020304, "01020304");
    bytes("LONG", t("LONG"), -2L, "FFFFFFFFFFFFFFFE");
    bytes("FLOAT", t("FLOAT"), 1.5f, "3FC00000");
    bytes("DOUBLE", t("DOUBLE"), 1.5d, "3FF8000000000000");
    bytes("CHAR utf-16 unit", t("CHAR"), '\u00e9', "00E9");
    bytes("BIG_INT null", t("BIG_INT"), null, "00000000");
    bytes("BIG_INT ZERO", t("BIG_INT"), BigInteger.ZERO, "00000001");
    bytes("BIG_INT ONE", t("BIG_INT"), BigInteger.ONE, "00000002");
    bytes("BIG_INT TEN", t("BIG_INT"), BigInteger.TEN, "00000003");
    bytes("BIG_INT 255", t("BIG_INT"), BigInteger.valueOf(255), "00000006 00FF");
    bytes("BIG_INT -1", t("BIG_INT"), BigInteger.valueOf(-1), "00000005 FF");
    bytes("BIG_DEC", t("BIG_DEC"), new BigDecimal("-1.50"), "00000005 2D312E3530");
    bytes("SQL_DATE", t("SQL_DATE"), LocalDate.of(1970, 1, 2), "00000001");
    bytes("SQL_TIME", t("SQL_TIME"), LocalTime.of(0, 0, 1, 500_000_000), "000005DC");
    bytes("SQL_TIMESTAMP", t("SQL_TIMESTAMP"), LocalDateTime.of(1970, 1, 1, 0, 0, 1), "00000000000003E8");
    bytes("INSTANT", t("INSTANT"), Instant.ofEpochSecond(1, 5), "0000000000000001 00000005");
    bytes("INSTANT null", t("INSTANT"), null, "8000000000000000 80000000");
    bytes("LOCAL_DATE", t("LOCAL_DATE"), LocalDate.of(2024, 2, 29), "000007E8 02 1D");
    bytes("LOCAL_TIME", t("LOCAL_TIME"), LocalTime.of(23, 59, 58, 7), "17 3B 3A 00000007");
    bytes("LOCAL_DATETIME", t("LOCAL_DATETIME"), LocalDateTime.of(2024, 2, 29, 1, 2, 3, 4),
        "000007E8 02 1D 01 02 03 00000004");
    bytes("PRIMITIVE_ARRAY<BYTE>", t("PRIMITIVE_ARRAY<BYTE>"), new byte[]{1, 2}, "00000002 0102");
    bytes("PRIMITIVE_ARRAY<INT>", t("PRIMITIVE_ARRAY<INT>"), List.of(1, -1), "00000002 00000001 FFFFFFFF");
    bytes("BASIC_ARRAY<STRING> with null", t("BASIC_ARRAY<STRING>"), Arrays.asList("a", null),
        "00000002 01 00000001 61 00");
    bytes("OBJECT_ARRAY<ROW<a:INT>>", t("OBJECT_ARRAY<ROW<a:INT>>"), Arrays.asList(null, Row.of(3)),
        "00000002 00 01 00 00000003");
    bytes("LIST<INT>", t("LIST<INT>"), List.of(7), "00000001 00000007");
    bytes("LIST empty", t("LIST<STRING>"), List.of(), "00000000");
    bytes("MAP<STRING,INT> null value", t("MAP<STRING,INT>"), new MapValue().put("k", 1).put("n", null),
        "00000002 00000001 6B 00 00000001 00000001 6E 01");
    bytes("TUPLE<INT,STRING>", t("TUPLE<INT,STRING>"), List.of(1, "x"), "00000001 00000001 78");
    bytes("PICKLED_BYTES", t("PICKLED_BYTES"), new byte[]{(byte) 0x80, 4}, "00000002 8004");
    TypeInfo avro = t("AVRO<" + avroSchema() + ">");
    java.util.Map<String, Object> user = new java.util.LinkedHashMap<>();
    user.put("id", 1L);
    user.put("name", "ab");
    user.put("age", null);
    user.put("ok", true);
    user.put("score", 1.5d);
    // AVRO: Flink's encoding (no zigzag varints, no length prefix).
    bytes("AVRO record", avro, user, "0000000000000001 | 00000002 6162 | 00000000 | 01 | 3FF8000000000000");
    avroExamples();
    rejects("STRING truncated", t("STRING"), "00000005 6162");
    rejects("STRING bad utf-8", t("STRING"), "00000001 FF");
    rejects("trailing byte", t("INT"), "00000001 00");

    // Text form.
    String wide = "ROW<id:LONG,name:STRING,tags:LIST<STRING>,m:MAP<STRING,INT>,t:TUPLE<INT,DOUBLE>,"
        + "raw:PRIMITIVE_ARRAY<BYTE>,ints:PRIMITIVE_ARRAY<INT>,names:BASIC_ARRAY<STRING>,objs:OBJECT_ARRAY<ROW<a:INT>>>";
    check("text form round trip", TypeInfo.parse(wide).toString().equals(wide), TypeInfo.parse(wide).toString());
    check("unnamed row fields", TypeInfo.parse("ROW<INT, x:LONG>").toString().equals("ROW<f0:INT,x:LONG>"),
        TypeInfo.parse("ROW<INT, x:LONG>").toString());
    check("avro text form", TypeInfo.parse("AVRO<" + avroSchema() + ">").avroSchema.fieldNames.size() == 5, "");
    try {
      TypeInfo.parse("PRIMITIVE_ARRAY<STRING>");
      check("PRIMITIVE_ARRAY<STRING> rejected", false, "accepted");
    } catch (IllegalArgumentException e) {
      check("PRIMITIVE_ARRAY<STRING> rejected", true, "");
    }

    // JSON.
    TypeInfo jt = TypeInfo.parse(wide);
    Object jv = JsonValues.fromJson(jt, JsonParser.parseString(
        "{\"id\":9007199254740993,\"name\":\"x\",\"tags\":[\"a\"],\"m\":{\"k\":1},\"t\":[1,2.5],"
            + "\"raw\":\"AQI=\",\"ints\":[1,2],\"names\":[null,\"b\"],\"objs\":[{\"a\":1},null]}"));
    check("json long precision", ((Row) jv).get(0).equals(9007199254740993L), String.valueOf(((Row) jv).get(0)));
    JsonElement back = JsonValues.toJson(jt, jv);
    check("json round trip", Values.equal(jt, jv, JsonValues.fromJson(jt, back)), back.toString());

    // Round trips of generated values, every type, also as the data of a runner row.
    for (String ts : ALL_TYPES) {
      TypeInfo ty = t(ts);
      ValueGenerator g = new ValueGenerator(ts.hashCode());
      String problem = null;
      for (int i = 0; i < 300 && problem == null; i++) {
        Object v = g.value(ty, true);
        problem = roundTrip(TypeInfo.runnerInput(ty), Row.of((long) i, Long.MIN_VALUE, v));
        if (problem == null && (v != null || TypeCodec.nullEncodable(ty.name))) {
          problem = roundTrip(ty, v);
        }
      }
      check("round trip " + ts, problem == null, problem);
    }
  }

  /** The hand-worked bytes of tests/unit/codecs/test_serializer_avro.c, checked by this codec too. */
  private void avroExamples() {
    bytes("AVRO every primitive", TypeInfo.avro(ALL_SCHEMA), allValue(), ALL_BYTES);
    bytes("AVRO int -1", TypeInfo.avro("\"int\""), -1, "FFFFFFFF");
    bytes("AVRO long MIN", TypeInfo.avro("\"long\""), Long.MIN_VALUE, "8000000000000000");
    TypeInfo str = TypeInfo.avro("\"string\"");
    String x200 = "x".repeat(200);
    bytes("AVRO string of 200 bytes", str, x200, "000000C8" + Hex.of(x200.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    TypeInfo union = TypeInfo.avro("[\"null\",\"string\",\"long\"]");
    TypeInfo holder = TypeInfo.avro("{\"type\":\"record\",\"name\":\"U\",\"fields\":[{\"name\":\"u\","
        + "\"type\":[\"null\",\"string\",\"long\"]}]}");
    java.util.Map<String, Object> none = new java.util.LinkedHashMap<>();
    none.put("u", null);
    bytes("AVRO union null", holder, none, "00000000");
    bytes("AVRO union string", union, "ab", "00000001 00000002 6162");
    bytes("AVRO union long", union, -5L, "00000002 FFFFFFFFFFFFFFFB");
    rejects("AVRO union index 3 of 3", union, "00000003");
    TypeInfo ints = TypeInfo.avro("{\"type\":\"array\",\"items\":\"int\"}");
    bytes("AVRO empty array", ints, List.of(), "00");
    bytes("AVRO array [1,-1]", ints, List.of(1, -1), "02 00000001 FFFFFFFF 00");
    decodes("AVRO array in two blocks", ints, "01 00000001 | 02 00000002 00000003 | 00", List.of(1, 2, 3));
    List<Integer> many = new ArrayList<>();
    StringBuilder manyHex = new StringBuilder("C801");
    for (int i = 0; i < 200; i++) {
      many.add(-10);
      manyHex.append("FFFFFFF6");
    }
    bytes("AVRO array of 200: count C8 01", ints, many, manyHex.append("00").toString());
    TypeInfo nested = TypeInfo.avro("{\"type\":\"map\",\"values\":{\"type\":\"array\",\"items\":\"long\"}}");
    java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("k", List.of(7L));
    m.put("", List.of());
    bytes("AVRO map of arrays", nested, m, "02 | 00000001 6B | 01 0000000000000007 00 | 00000000 | 00 | 00");
    bytes("AVRO array of arrays", TypeInfo.avro("{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":\"boolean\"}}"),
        List.of(List.of(true), List.of()), "02 | 01 01 00 | 00 | 00");
    TypeInfo color = TypeInfo.avro("{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"R\",\"G\",\"B\"]}");
    bytes("AVRO enum", color, new Avro.EnumSymbol("B"), "00000002");
    rejects("AVRO enum index 3 of 3", color, "00000003");
    rejects("AVRO enum index -1", color, "FFFFFFFF");
    TypeInfo list = TypeInfo.avro("{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\",\"type\":\"int\"},"
        + "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}");
    java.util.Map<String, Object> n2 = new java.util.LinkedHashMap<>();
    n2.put("v", 2);
    n2.put("next", null);
    java.util.Map<String, Object> n1 = new java.util.LinkedHashMap<>();
    n1.put("v", 1);
    n1.put("next", n2);
    bytes("AVRO recursive record", list, n1, "00000001 00000001 | 00000002 00000000");
    // Avro binary of Ev{a=42, s="hi", u=-3, arr=[1,2,3]} is not Flink's encoding.
    TypeInfo ev = TypeInfo.avro("{\"type\":\"record\",\"name\":\"Ev\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
        + "{\"name\":\"s\",\"type\":\"string\"},{\"name\":\"u\",\"type\":[\"null\",\"long\"]},"
        + "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"int\"}}]}");
    rejects("AVRO: Avro binary is refused", ev, "54 04 6869 02 05 06 02 04 06 00");
    rejects("AVRO bytes length beyond the input", TypeInfo.avro("\"bytes\""), "7FFFFFFF 6162");
    rejects("AVRO bytes negative length", TypeInfo.avro("\"bytes\""), "FFFFFFFF");
    rejects("AVRO array count 2^62", ints, "80 80 80 80 80 80 80 80 40 00000001");
    rejects("AVRO array without its closing 0", ints, "01 00000001");
    rejects("AVRO truncated record", TypeInfo.avro(ALL_SCHEMA), ALL_BYTES.substring(0, ALL_BYTES.length() - 2));
    try {
      TypeInfo.avro("{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"f\","
          + "\"type\":{\"type\":\"fixed\",\"name\":\"N\",\"size\":2}}]}");
      check("AVRO name defined twice refused", false, "accepted");
    } catch (IllegalArgumentException e) {
      check("AVRO name defined twice refused", e.getMessage().contains("defined twice"), e.getMessage());
    }
  }

  private static String roundTrip(TypeInfo t, Object v) {
    try {
      byte[] b = TypeCodec.encode(t, v);
      Object back = TypeCodec.decode(t, b);
      String d = Values.firstDifference(t, v, back, "");
      if (d != null) {
        return "binary: " + d;
      }
      byte[] again = TypeCodec.encode(t, back);
      if (!Arrays.equals(b, again)) {
        return "re-encoding differs: " + Hex.of(b) + " vs " + Hex.of(again);
      }
      JsonElement j = JsonValues.toJson(t, v);
      Object fromJ = JsonValues.fromJson(t, JsonParser.parseString(j.toString()));
      if (t.name != TypeName.AVRO) {
        d = Values.firstDifference(t, v, fromJ, "");
        if (d != null) {
          return "json " + j + ": " + d;
        }
      }
      return null;
    } catch (RuntimeException e) {
      return e.toString() + " for " + Values.show(v);
    }
  }

  private static TypeInfo t(String s) {
    return TypeInfo.parse(s);
  }
}
