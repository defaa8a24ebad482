// Integration scenarios for AVRO fields: records in Flink's encoding (what
// its AvroSerializer writes, not Avro binary) go through the real worker with
// the identity and echo operations and must come back byte for byte, with
// values chosen where the two encodings differ (negative numbers, strings
// and counts over 127, unions, enums, fixed, empty and nested containers).
package fnworker.harness;

import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Avro;
import fnworker.harness.types.CodecSelfTest;
import fnworker.harness.types.Hex;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeCodec;
import fnworker.harness.types.TypeInfo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class AvroScenarios {
  private AvroScenarios() {}

  static List<Scenario> scenarios() {
    return List.of(new Scenario("avro_flink_encoding", AvroScenarios::flinkEncoding));
  }

  /** The AVRO field sits between two others, so a wrongly measured datum shifts what follows. */
  static TypeInfo rowType() {
    return TypeInfo.parse("ROW<id:INT,ev:AVRO<" + CodecSelfTest.richAvroSchema() + ">,after:STRING>");
  }

  static void flinkEncoding(Ctx c) throws Exception {
    byte[] all = TypeCodec.encode(TypeInfo.avro(CodecSelfTest.ALL_SCHEMA), CodecSelfTest.allValue());
    check(Arrays.equals(all, Hex.parse(CodecSelfTest.ALL_BYTES)),
        "the harness codec should write the hand-worked bytes, wrote " + Hex.of(all));
    Worker w = c.worker();
    TypeInfo ty = rowType();
    List<In> in = new ArrayList<>();
    in.add(new In(1, Row.of(1, wide(), "after-1")));
    in.add(new In(2, Row.of(2, narrow(), "after-2")));
    in.add(new In(3, Row.of(3, null, "after-3")));
    in.addAll(IntegrationTests.values(ty, 60, 77));
    FunctionRunner[] runners = {
        c.runner(w, ty, ty, Ctx.spec("identity")),
        c.runner(w, ty, ty, Ctx.spec("echo")),
        c.runner(w, ty, ty, FunctionType.ASYNC_BATCH,
            RunnerRows.spec("echo", Map.of(), "{\"batchSize\":4,\"timeoutMs\":20000}").toByteArray(), cfg -> { }),
    };
    for (FunctionRunner r : runners) {
      Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    }
    handWorked(c, w);
    check(w.servers.data.violations().isEmpty(), "protocol violations: " + w.servers.data.violations());
  }

  /** The hand-worked datum as raw runner rows, compared as raw bytes (no codec on either side). */
  static void handWorked(Ctx c, Worker w) {
    TypeInfo t = TypeInfo.avro(CodecSelfTest.ALL_SCHEMA);
    FunctionRunner r = c.runner(w, t, t, Ctx.spec("echo"));
    String ts = "00000000000003E8";
    r.startBundle();
    r.process(Hex.parse("00 | " + ts + " | 8000000000000000 | " + CodecSelfTest.ALL_BYTES));
    r.flush();
    List<FunctionRunner.Result> out = Ctx.drain(r);
    byte[] want = Hex.parse("00 | " + ts + " | " + CodecSelfTest.ALL_BYTES);
    check(out.size() == 1 && Arrays.equals(out.get(0).bytes, want), "hand-worked AVRO row came back as "
        + (out.isEmpty() ? "nothing" : Hex.of(out.get(0).bytes)) + ", expected " + Hex.of(want));
  }

  /** Long strings and bytes, a count over 127, extremes, the null branch, nested records. */
  static Map<String, Object> wide() {
    List<Object> big = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      big.add(-i);
    }
    Map<String, Object> tags = new LinkedHashMap<>();
    tags.put("a", tag(-1.5, "BLUE"));
    tags.put("é".repeat(70), tag(Double.MIN_VALUE, "RED"));
    return event(-1, Long.MIN_VALUE, -0.0f, 1e300, true, "é".repeat(100), new byte[300], "GREEN",
        new byte[]{(byte) 0xff, 0, 1, 2}, null, List.of(List.of(), big, List.of()), tags, null);
  }

  /** Empty containers, the enum and string branches, a nested Event. */
  static Map<String, Object> narrow() {
    Map<String, Object> inner = event(Integer.MAX_VALUE, -2, Float.MIN_VALUE, -2.25, false, "x", new byte[]{1},
        "BLUE", new byte[4], new Avro.EnumSymbol("BLUE"), List.of(List.of(-1)), Map.of(), null);
    return event(Integer.MIN_VALUE, -200, Float.MAX_VALUE, -0.0, false, "", new byte[0], "RED",
        new byte[]{9, 8, 7, 6}, "text", List.of(), Map.of(), inner);
  }

  static Map<String, Object> tag(double w, String color) {
    Map<String, Object> t = new LinkedHashMap<>();
    t.put("w", w);
    t.put("c", new Avro.EnumSymbol(color));
    return t;
  }

  static Map<String, Object> event(int i, long l, float f, double d, boolean ok, String s, byte[] raw, String color,
      byte[] id, Object opt, List<?> grid, Map<String, Object> tags, Map<String, Object> next) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("i", i);
    e.put("l", l);
    e.put("f", f);
    e.put("d", d);
    e.put("ok", ok);
    e.put("s", s);
    e.put("raw", raw);
    e.put("color", new Avro.EnumSymbol(color));
    e.put("id", id);
    e.put("opt", opt);
    e.put("grid", grid);
    e.put("tags", tags);
    e.put("next", next);
    return e;
  }
}
