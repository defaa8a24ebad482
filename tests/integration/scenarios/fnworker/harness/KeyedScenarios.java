// Integration scenarios for an operator on a PyFlink KeyedStream: its input
// records are Row(f0=<key>, f1=<value>) (PyFlink's key_by adds that row), and
// the fnworker package sets OperationSpec.input_field "f1" so that the
// operation takes the value. The worker unwraps the field natively: outputs
// are byte-identical to the values (null values included), through a fused
// chain whose first step changes the type too; a field the input lacks fails
// the bundle with a message naming it, and the same worker runs on.
// Listed in scenarios() here, added to IntegrationTests.scenarios().
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.tail;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Hex;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import fnworker.proto.v1.OperationProto;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class KeyedScenarios {
  private KeyedScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("keyed_input_field_value", KeyedScenarios::value));
    s.add(new Scenario("keyed_input_field_refused", KeyedScenarios::refused));
    return s;
  }

  static final String VALUE = "ROW<id:LONG,name:STRING,score:DOUBLE>";

  /** The type PyFlink's key_by gives the stream: ROW(key type, value type); key PICKLED_BYTES by default. */
  static TypeInfo keyed(String key, String value) {
    return t("ROW<f0:" + key + ",f1:" + value + ">");
  }

  /** Each value behind a key (a pickled-looking key for PICKLED_BYTES, a string otherwise); null keys too. */
  static List<In> wrap(List<In> in, boolean pickledKey) {
    List<In> out = new ArrayList<>();
    for (int i = 0; i < in.size(); i++) {
      In x = in.get(i);
      Object key = i % 7 == 3 ? null
          : pickledKey ? new byte[]{(byte) 0x80, 0x05, 0x4b, (byte) i} : "k" + (i % 5);
      out.add(new In(x.ts, x.watermark, Row.of(key, x.value)));
    }
    return out;
  }

  static OperationProto.OperationSpec onValue(OperationProto.OperationSpec spec) {
    return spec.toBuilder().setInputField("f1").build();
  }

  /** echo (unordered, delayed) and identity see the values; project changes the type before an echo. */
  static void value(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo vt = t(VALUE);
    for (String key : new String[]{"PICKLED_BYTES", "STRING"}) {
      TypeInfo kt = keyed(key, VALUE);
      List<In> values = values(vt, 80, key.hashCode());  // the first is a null value
      List<In> in = wrap(values, key.equals("PICKLED_BYTES"));
      FunctionRunner id = c.runner(w, kt, vt, onValue(Ctx.spec("identity")));
      Ctx.expectSame(vt, values, Ctx.bundle(id, kt, in));
      // a second bundle on the same descriptor, records cut into 5-byte chunks
      FunctionRunner echo = c.runner(w, kt, vt, FunctionType.PROCESS, onValue(RunnerRows.spec("echo",
          Map.of("delay_ms", "1"), "{\"capacity\":16}")).toByteArray(), cfg -> cfg.maxChunkBytes = 5);
      Ctx.expectSame(vt, values, Ctx.bundle(echo, kt, in));
      Ctx.expectSame(vt, values, Ctx.bundle(echo, kt, in));
    }

    // project(name, id) on the value, then echo in the same operator
    TypeInfo kt = keyed("PICKLED_BYTES", VALUE);
    TypeInfo out = t("ROW<name:STRING,id:LONG>");
    OperationProto.OperationSpec project = onValue(RunnerRows.withOutputType(
        RunnerRows.spec("project", Map.of("fields", "name,id"), null), out));
    FunctionRunner r = c.runner(w, kt, out, FunctionType.PROCESS, project.toByteArray(),
        cfg -> cfg.functions.add(RunnerRows.fn(Ctx.spec("echo"))));
    List<In> values = values(vt, 40, 5);
    List<FunctionRunner.Result> res = Ctx.bundle(r, kt, wrap(values, true));
    check(res.size() == values.size(), "sent " + values.size() + " records, got " + res.size() + " back");
    for (int i = 0; i < values.size(); i++) {
      In x = values.get(i);
      byte[] want = RunnerRows.expectedOutput(out, x.ts, RecordScenarios.projected(x.value, 1, 0));
      check(Arrays.equals(want, res.get(i).bytes), "record " + i + " (" + x.value + ") should come back as "
          + RecordScenarios.projected(x.value, 1, 0) + ": got " + Hex.of(res.get(i).bytes) + ", expected "
          + Hex.of(want));
    }
  }

  /** A field the input lacks, and an input that is not a ROW: the bundle fails naming it; the worker runs on. */
  static void refused(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo vt = t(VALUE);
    TypeInfo kt = keyed("PICKLED_BYTES", VALUE);
    OperationProto.OperationSpec wrong = Ctx.spec("identity").toBuilder().setInputField("value").build();
    FunctionRunner bad = c.runner(w, kt, vt, wrong);
    Ctx.send(bad, kt, wrap(values(vt, 3, 1), true));
    String err = Ctx.expectBundleError(bad);
    for (String part : List.of("transform 'transform-0' (operation 'identity')", "input_field 'value'",
        "ROW<f0 PICKLED_BYTES, f1 ROW<id LONG, name STRING, score DOUBLE>> does not have",
        "Row(f0=<key>, f1=<value>)")) {
      check(err.contains(part), "the error should contain \"" + part + "\": " + err);
    }
    FunctionRunner notRow = c.runner(w, t("STRING"), t("STRING"), onValue(Ctx.spec("identity")));
    Ctx.send(notRow, t("STRING"), List.of(new In(1, "x")));
    err = Ctx.expectBundleError(notRow);
    check(err.contains("input type STRING does not have (it is not a ROW)"), "the error should say STRING is "
        + "not a ROW: " + err);
    check(w.process().isAlive(), "the worker died; output: " + tail(w.process().output()));
    FunctionRunner ok = c.runner(w, kt, vt, onValue(Ctx.spec("identity")));
    List<In> values = values(vt, 10, 2);
    Ctx.expectSame(vt, values, Ctx.bundle(ok, kt, wrap(values, true)));
  }
}
