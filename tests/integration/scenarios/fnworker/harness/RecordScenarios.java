// Integration scenarios about the records and the functions that carry them:
// every type back byte-identical, two operators on one worker, records split
// across Data messages or sent before their ProcessBundleRequest, empty,
// large and many bundles, an undecodable element named by its index, a
// pickled (Python) function payload and an identity with unequal types
// refused with a message, a chain's declared step types, and type
// descriptions nested deep enough to be hostile.
// Listed in IntegrationTests.scenarios().
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.tail;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.CodecSelfTest;
import fnworker.harness.types.Hex;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import fnworker.proto.v1.OperationProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class RecordScenarios {
  private RecordScenarios() {}

  /** Every type, with nulls, empty and nested containers, back byte-identical with timestamps. */
  static void everyType(Ctx c) throws Exception {
    List<String> types = new ArrayList<>(List.of(CodecSelfTest.ALL_TYPES));
    StringBuilder wide = new StringBuilder("ROW<");
    int i = 0;
    for (String ty : CodecSelfTest.ALL_TYPES) {
      if (!ty.startsWith("AVRO")) {
        wide.append(i == 0 ? "" : ",").append("c").append(i++).append(':').append(ty);
      }
    }
    types.add(wide.append('>').toString());
    Worker w = c.worker();
    List<String> failed = new ArrayList<>();
    for (String ty : types) {
      TypeInfo type = t(ty);
      FunctionRunner r = c.runner(w, type, type, Ctx.spec("identity"));
      List<In> in = values(type, 60, ty.hashCode());
      try {
        Ctx.expectSame(type, in, Ctx.bundle(r, type, in));
      } catch (RuntimeException e) {
        failed.add(ty + ": " + Main.describe(e));
      }
    }
    check(failed.isEmpty(), failed.size() + " of " + types.size() + " types failed; " + String.join("; ", failed));
    check(w.servers.data.violations().isEmpty(), "protocol violations: " + w.servers.data.violations());
  }

  /** Two descriptors on one worker, with bundles interleaved and open at the same time. */
  static void twoOperators(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ta = t("ROW<a:INT,b:STRING>");
    TypeInfo tb = t("LIST<DOUBLE>");
    FunctionRunner a = c.runner(w, ta, ta, Ctx.spec("identity"));
    FunctionRunner b = c.runner(w, tb, tb, Ctx.spec("identity"));
    check(!a.descriptor().getId().equals(b.descriptor().getId()), "descriptor ids must differ");
    for (int round = 0; round < 3; round++) {
      List<In> ia = values(ta, 40, round);
      List<In> ib = values(tb, 40, 100 + round);
      a.startBundle();
      b.startBundle();
      for (int k = 0; k < 40; k++) {
        Ctx.send(a, ta, ia.subList(k, k + 1));
        Ctx.send(b, tb, ib.subList(k, k + 1));
        if (k == 20) {
          a.sendBuffered();
          b.sendBuffered();
        }
      }
      if (round % 2 == 0) {
        b.flush();
        a.flush();
      } else {
        a.flush();
        b.flush();
      }
      Ctx.expectSame(ta, ia, Ctx.drain(a));
      Ctx.expectSame(tb, ib, Ctx.drain(b));
    }
    List<String> asked = w.servers.control.descriptorRequests();
    check(asked.contains(a.descriptor().getId()) && asked.contains(b.descriptor().getId()),
        "the worker should have fetched both descriptors with GetProcessBundleDescriptor, asked for " + asked);
    check(w.servers.data.clientCount() == 1, "expected one Data stream for the one data endpoint, saw "
        + w.servers.data.clientCount());
  }

  /** Records cut at arbitrary byte offsets across Data messages (chunks of 7 and of 1 byte). */
  static void dataSplit(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<id:LONG,s:STRING,l:LIST<INT>>");
    for (int chunk : new int[]{7, 1, 13}) {
      FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(), cfg -> {
        cfg.maxChunkBytes = chunk;
        cfg.bufferLimitBytes = 300;
      });
      List<In> in = values(ty, chunk == 1 ? 30 : 200, chunk);
      in.add(new In(7, Row.of(1L, "x".repeat(300), List.of(1, 2, 3))));  // a 2-byte length varint
      Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    }
    check(w.servers.data.violations().isEmpty(), "protocol violations: " + w.servers.data.violations());
  }

  /** A bundle with no elements still gets is_last on the sink and a response. */
  static void emptyBundle(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    r.startBundle();
    r.flush();
    FunctionRunner.BundleRecord b = r.lastBundle();
    check(b.error == null && b.outputs == 0, "empty bundle: error=" + b.error + " outputs=" + b.outputs);
    List<In> in = values(ty, 10, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    r.startBundle();
    r.flush();
  }

  /** A garbage record fails its bundle with the transform and index named; the next bundle works. */
  static void undecodable(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<a:INT,s:STRING>");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> good = values(ty, 8, 5);
    Ctx.send(r, ty, good.subList(0, 4));
    // Row(ts, wm, Row(1, <string of length 0x7fffffff>)): the length runs past the record.
    r.process(fnworker.harness.types.Hex.parse("00 0000000000000001 8000000000000000 00 00000001 7fffffff 6162"));
    Ctx.send(r, ty, good.subList(4, 8));
    String err = Ctx.expectBundleError(r);
    check(err.contains(DescriptorBuilder.READ_ID) || err.contains("transform-0"),
        "the error should name the transform (fn/read/input:0 or transform-0): " + err);
    check(err.matches("(?is).*element\\D{0,20}\\b(4|5)\\b.*"),
        "the error should give the element index (element 4, or 5 counting from 1): " + err);
    // Output leaves when the worker's loop is idle, so the failed bundle may
    // have sent the outputs of the good records before the bad one (as Flink
    // forwards what a bundle sends before it fails); never anything after it.
    // They come back ahead of the next bundle's.
    List<FunctionRunner.Result> got = Ctx.drain(r);
    List<In> in = values(ty, 20, 6);
    got.addAll(Ctx.bundle(r, ty, in));
    int early = got.size() - in.size();
    check(early >= 0 && early <= 4, "the failed bundle sent " + early + " outputs; at most the 4 before the "
        + "undecodable record may come back (sent 20 records in the next bundle, got " + got.size() + ")");
    Ctx.expectSame(ty, good.subList(0, early), got.subList(0, early));
    Ctx.expectSame(ty, in, got.subList(early, got.size()));
  }

  /** A pickled Python function as payload, the relay off: a bundle error pointing at native operations and docs/pyflink.md. */
  static void picklePayload(Ctx c) throws Exception {
    Worker w = c.worker(o -> o.env.put("FNW_RELAY", "off")); // relay on: it would go to PyFlink's worker
    TypeInfo ty = t("INT");
    byte[] pickle = {(byte) 0x80, 0x04, (byte) 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, (byte) 0x8c, 0x08, 'b', 'u', 'i',
        'l', 't', 'i', 'n', 's', (byte) 0x94, '.'};
    FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, pickle, cfg -> { });
    Ctx.send(r, ty, values(ty, 3, 1));
    String err = Ctx.expectBundleError(r);
    check(err.toLowerCase(Locale.ROOT).contains("native"), "the error should mention native operations: " + err);
    check(err.contains("docs/pyflink.md"), "the error should point to docs/pyflink.md: " + err);
    FunctionRunner ok = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 5, 2);
    Ctx.expectSame(ty, in, Ctx.bundle(ok, ty, in));
  }

  /** identity with an output type different from the input type: a bundle error saying so. */
  static void typeMismatch(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = c.runner(w, t("INT"), t("STRING"), Ctx.spec("identity"));
    Ctx.send(r, t("INT"), values(t("INT"), 3, 1));
    String err = Ctx.expectBundleError(r);
    String low = err.toLowerCase(Locale.ROOT);
    check(low.contains("identity") && low.contains("type"), "the error should say identity needs equal types: " + err);
  }

  /** in's ROW value with fields at the given positions, same row kind (null stays null). */
  static Row projected(Object value, int... fields) {
    if (value == null) {
      return null;
    }
    Row r = (Row) value;
    Object[] f = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) {
      f[i] = r.get(fields[i]);
    }
    return new Row(r.kind, f);
  }

  /**
   * A fused chain whose first function changes the type, described as Flink describes it (only the
   * operator's input and output types; every collection between functions has the input coder):
   * `project` ROW<id,name,score> -> ROW<name,id> with output_type in its OperationSpec, then `echo`,
   * which keeps the type. Each output is the projected input with its timestamp. Without output_type,
   * or with one the operator does not output, the bundle fails naming the step and saying what to set.
   */
  static void chainStepTypes(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo in = t("ROW<id:LONG,name:STRING,score:DOUBLE>");
    TypeInfo out = t("ROW<name:STRING,id:LONG>");
    OperationProto.OperationSpec project = RunnerRows.spec("project", Map.of("fields", "name, id"), null);
    OperationProto.OperationSpec echo = RunnerRows.spec("echo", Map.of("delay_ms", "2"),
        "{\"capacity\":10,\"outputMode\":\"ORDERED\"}");
    FunctionRunner r = c.runner(w, in, out, FunctionType.PROCESS, RunnerRows.withOutputType(project, out).toByteArray(),
        cfg -> cfg.functions.add(RunnerRows.fn(echo)));
    List<In> inputs = values(in, 60, 17);
    List<FunctionRunner.Result> res = Ctx.bundle(r, in, inputs);
    check(res.size() == inputs.size(), "sent " + inputs.size() + " records, got " + res.size() + " back");
    for (int i = 0; i < inputs.size(); i++) {
      In x = inputs.get(i);
      byte[] want = RunnerRows.expectedOutput(out, x.ts, projected(x.value, 1, 0));
      check(res.get(i).tag.equals("output") && java.util.Arrays.equals(want, res.get(i).bytes), "record " + i
          + " (" + x.value + ") should come back as " + out + " " + projected(x.value, 1, 0) + ": got "
          + Hex.of(res.get(i).bytes) + ", expected " + Hex.of(want));
    }
    check(AsyncScenarios.metric(r, "transform-1", "recordsIn").value == inputs.size(),
        "transform-1 (echo) should see every projected record");

    // No output_type on the type-changing first function: its type cannot be known.
    FunctionRunner missing = c.runner(w, in, out, FunctionType.PROCESS, project.toByteArray(),
        cfg -> cfg.functions.add(RunnerRows.fn(echo)));
    Ctx.send(missing, in, inputs.subList(0, 2));
    String err = Ctx.expectBundleError(missing);
    for (String part : List.of("transform 'transform-0' (operation 'project')", "'transform-1'", "output_type")) {
      check(err.contains(part), "the error should contain \"" + part + "\": " + err);
    }
    // The last function declares a type the operator does not output.
    FunctionRunner wrong = c.runner(w, in, out, FunctionType.PROCESS,
        RunnerRows.withOutputType(project, t("ROW<id:LONG,name:STRING>")).toByteArray(), cfg -> { });
    Ctx.send(wrong, in, inputs.subList(0, 2));
    err = Ctx.expectBundleError(wrong);
    for (String part : List.of("transform 'transform-0'", "ROW<id LONG, name STRING>", "ROW<name STRING, id LONG>")) {
      check(err.contains(part), "the error should contain \"" + part + "\": " + err);
    }
  }

  /** All input and is_last arrive before the ProcessBundleRequest. */
  static void dataBeforeRequest(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<a:INT,s:STRING>");
    FunctionRunner first = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> warm = values(ty, 3, 9);
    Ctx.expectSame(ty, warm, Ctx.bundle(first, ty, warm));  // Data stream open
    FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.requestAfterData = true);
    for (int round = 0; round < 2; round++) {
      List<In> in = values(ty, 40, round);
      Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    }
  }

  /** Records bigger than the 1 MB input buffer and a bundle of several flushes. */
  static void largeRecords(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<id:INT,s:STRING,b:PRIMITIVE_ARRAY<BYTE>>");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = new ArrayList<>();
    byte[] big = new byte[3 << 20];
    new java.util.Random(1).nextBytes(big);
    for (int i = 0; i < 12; i++) {
      in.add(new In(i, Row.of(i, "x".repeat(i * 100_000), i % 3 == 0 ? big : new byte[i])));
    }
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
  }

  /** Many bundles back to back on one descriptor, sized like Flink would end them. */
  static void manyBundles(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<id:LONG,name:STRING,score:DOUBLE>");
    FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.bundleSize = 1000);
    List<In> in = values(ty, 20_000, 11);
    Ctx.send(r, ty, in);
    r.flush();
    check(r.bundles().size() == 20, "expected 20 bundles of 1000, got " + r.bundles().size());
    Ctx.expectSame(ty, in, Ctx.drain(r));
  }

  /**
   * A TypeInfo nested 10,000 levels deep, in the input coder and then in a function's key_type_info:
   * each descriptor's bundle fails naming the 64-level limit (instead of the worker overflowing its
   * stack in protobuf-c), and the same worker then runs a healthy bundle.
   */
  static void hostileTypeNesting(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    byte[] deep = WireBytes.deepListTypeInfo(10_000);
    byte[] spec = Ctx.spec("identity").toByteArray();
    for (String where : new String[]{"input coder", "key_type_info"}) {
      FunctionRunner bad = c.runner(w, ty, ty, FunctionType.PROCESS, spec, cfg -> {
        if (where.equals("input coder")) {
          cfg.inputCoderPayload = WireBytes.runnerInputCoder(deep);
        } else {
          cfg.functions.get(0).keyTypeInfo = deep;
        }
      });
      Ctx.send(bad, ty, values(ty, 3, 1));
      String err = Ctx.expectBundleError(bad);
      check(err.contains("TypeInfo nests deeper than 64 levels"), where + ": the error should name the limit: " + err);
      String names = where.equals("input coder") ? "coder 'input_coder'" : "transform 'transform-0'";
      check(err.contains(names), where + ": the error should name " + names + ": " + err);
      check(w.process().isAlive(), where + ": the worker died; output: " + tail(w.process().output()));
      FunctionRunner ok = c.runner(w, ty, ty, Ctx.spec("identity"));
      List<In> in = values(ty, 20, 2);
      Ctx.expectSame(ty, in, Ctx.bundle(ok, ty, in));
    }
  }
}
