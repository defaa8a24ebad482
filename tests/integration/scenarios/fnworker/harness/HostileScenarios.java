/*
 * Descriptors and input past the worker's limits, through the real binary:
 * each fails its bundle (or its registration) with a message naming the
 * limit, and the same worker, on the same Control stream, then runs a
 * healthy bundle. The limits: a descriptor nested 10,000 levels deep in the
 * descriptor message itself (a windowing strategy's Trigger), a descriptor
 * over 64 MiB, a ROW of 65,536 fields, and a record whose length prefix
 * claims more than 1 GiB. (Types nested deeply inside payloads are
 * hostile_type_nesting's.)
 */
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.tail;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class HostileScenarios {
  private HostileScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("hostile_descriptor_nesting", HostileScenarios::descriptorNesting));
    s.add(new Scenario("hostile_descriptor_size", HostileScenarios::descriptorSize));
    s.add(new Scenario("hostile_row_width", HostileScenarios::rowWidth));
    s.add(new Scenario("hostile_record_size", HostileScenarios::recordSize));
    return s;
  }

  /** Trigger { repeat { subtrigger { Trigger { repeat { ... } } } } }, `levels` Triggers deep. */
  static byte[] deepTrigger(int levels) {
    long[] trig = new long[levels];   // trig[k]: bytes of the Trigger k levels from the bottom
    long[] rep = new long[levels];    // rep[k]: bytes of its Repeat
    for (int k = 1; k < levels; k++) {
      rep[k] = 1 + WireBytes.varintSize(trig[k - 1]) + trig[k - 1];
      trig[k] = 1 + WireBytes.varintSize(rep[k]) + rep[k];
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) trig[levels - 1]);
    for (int k = levels - 1; k > 0; k--) {
      out.write(11 << 3 | 2);         // Trigger.repeat
      WireBytes.varint(out, rep[k]);
      out.write(1 << 3 | 2);          // Repeat.subtrigger
      WireBytes.varint(out, trig[k - 1]);
    }
    return out.toByteArray();         // the bottom Trigger is empty
  }

  /** The descriptor with one more windowing strategy, written as raw bytes (Java would not read it back). */
  static BeamFnApi.ProcessBundleDescriptor withDeepWindowing(BeamFnApi.ProcessBundleDescriptor d) {
    byte[] strategy = WireBytes.field(4, deepTrigger(10_000));   // WindowingStrategy.trigger
    byte[] entry = WireBytes.concat(WireBytes.field(1, "deep_windowing".getBytes()), WireBytes.field(2, strategy));
    UnknownFieldSet.Field f = UnknownFieldSet.Field.newBuilder().addLengthDelimited(ByteString.copyFrom(entry)).build();
    return d.toBuilder()   // field 4: ProcessBundleDescriptor.windowing_strategies
        .setUnknownFields(UnknownFieldSet.newBuilder().addField(4, f).build()).build();
  }

  /** A runner whose registration is expected to fail: the failure's text. */
  static String expectRegisterError(Ctx c, Worker w, TypeInfo ty, Consumer<FunctionRunner.Config> tweak) {
    try {
      c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(), tweak);
    } catch (RuntimeException e) {
      StringBuilder all = new StringBuilder();
      for (Throwable x = e; x != null; x = x.getCause()) {
        all.append(x.getMessage()).append(" / ");
      }
      return all.toString();
    }
    throw new Scenario.Failure("the register request succeeded but an error was expected");
  }

  /** The same worker still runs a healthy bundle: the worker and its Control stream survived. */
  static void stillHealthy(Ctx c, Worker w, String after) {
    check(w.process().isAlive(), after + ": the worker died; output: " + tail(w.process().output()));
    TypeInfo ty = t("ROW<a:INT,b:STRING>");
    FunctionRunner ok = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 20, 2);
    Ctx.expectSame(ty, in, Ctx.bundle(ok, ty, in));
  }

  static void descriptorNesting(Ctx c) throws Exception {
    TypeInfo ty = t("INT");
    Worker fetching = c.worker();
    FunctionRunner bad = c.runner(fetching, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.editDescriptor = HostileScenarios::withDeepWindowing);
    Ctx.send(bad, ty, values(ty, 3, 1));
    String err = Ctx.expectBundleError(bad);
    check(err.contains("returned bytes the worker cannot read") && err.contains("nest deeper than"),
        "fetched: the error should name the nesting limit: " + err);
    stillHealthy(c, fetching, "fetched");

    Worker registering = c.worker(o -> o.useRegister = true);
    err = expectRegisterError(c, registering, ty, cfg -> cfg.editDescriptor = HostileScenarios::withDeepWindowing);
    check(err.contains("nest deeper than"), "registered: the error should name the nesting limit: " + err);
    stillHealthy(c, registering, "registered");
  }

  /** CoderInfoDescriptor of the input type, plus an unknown field of `padding` zero bytes. */
  static byte[] paddedInputCoder(int padding) {
    byte[] intType = WireBytes.varintField(1, WireBytes.TYPE_NAME_INT);
    return WireBytes.concat(WireBytes.runnerInputCoder(intType), WireBytes.field(15, new byte[padding]));
  }

  static void descriptorSize(Ctx c) throws Exception {
    TypeInfo ty = t("INT");
    int over = (64 << 20) + 1024;
    Worker registering = c.worker(o -> o.useRegister = true);
    String err = expectRegisterError(c, registering, ty, cfg -> cfg.inputCoderPayload = paddedInputCoder(over));
    check(err.contains("is more than fnworker's limit of 67108864 bytes (64 MiB)"),
        "registered: the error should name the size cap: " + err);
    stillHealthy(c, registering, "registered");

    Worker fetching = c.worker();
    FunctionRunner bad = c.runner(fetching, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.inputCoderPayload = paddedInputCoder(over));
    Ctx.send(bad, ty, values(ty, 3, 1));
    err = Ctx.expectBundleError(bad);
    check(err.contains("is more than fnworker's limit of 67108864 bytes (64 MiB)"),
        "fetched: the error should name the size cap: " + err);
    stillHealthy(c, fetching, "fetched");
  }

  /** ROW of `n` INT fields, as TypeInfo bytes. */
  static byte[] wideRow(int n) {
    byte[] field = WireBytes.concat(WireBytes.field(1, "f".getBytes()),
        WireBytes.field(2, WireBytes.varintField(1, WireBytes.TYPE_NAME_INT)));
    byte[] one = WireBytes.field(1, field);   // RowTypeInfo.fields
    ByteArrayOutputStream fields = new ByteArrayOutputStream(one.length * n);
    for (int i = 0; i < n; i++) {
      fields.writeBytes(one);
    }
    return WireBytes.field(3, fields.toByteArray());   // TypeInfo.row_type_info (type_name ROW is 0)
  }

  static void rowWidth(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    FunctionRunner bad = c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.inputCoderPayload = WireBytes.runnerInputCoder(wideRow(65_536)));
    Ctx.send(bad, ty, values(ty, 3, 1));
    String err = Ctx.expectBundleError(bad);
    check(err.contains("ROW type has 65536 fields; fnworker accepts at most 65535 fields per ROW"),
        "the error should name the field cap: " + err);
    check(err.contains("coder 'input_coder'"), "the error should name the coder: " + err);
    stillHealthy(c, w, "row width");
  }

  static void recordSize(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    FunctionRunner bad = c.runner(w, ty, ty, Ctx.spec("identity"));
    ByteArrayOutputStream prefix = new ByteArrayOutputStream();
    WireBytes.varint(prefix, (1L << 30) + 1);
    prefix.writeBytes(new byte[16]);
    bad.processRaw(prefix.toByteArray());
    String err = Ctx.expectBundleError(bad);
    check(err.contains("it claims 1073741825 bytes; a record may have at most 1073741824"),
        "the error should name the record's size and the cap: " + err);
    stillHealthy(c, w, "record size");
  }
}
