// Integration scenarios for PyFlink jobs built with the fnworker Python
// package (python/fnworker): the payloads are the pickles the package makes
// at test time, through the same call PyFlink makes (cloudpickle.dumps of the
// function its helpers hand to DataStream.process). A fused chain of two such
// functions runs natively with byte-identical results; with the relay off, a
// plain cloudpickled Python function fails the bundle with the message a user
// sees.
// Needs python3 with cloudpickle (FNW_PYTHON, else /usr/bin/python3); without
// them each scenario passes with a note saying it was skipped.
// Listed in scenarios() here, added to IntegrationTests.scenarios().
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Hex;
import fnworker.harness.types.TypeInfo;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class PyFlinkScenarios {
  private PyFlinkScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("pyflink_package_payloads", PyFlinkScenarios::packagePayloads));
    s.add(new Scenario("pyflink_plain_function_refused", PyFlinkScenarios::plainFunctionRefused));
    return s;
  }

  /** What a PyFlink job does with the package: helpers call process(fn), PyFlink cloudpickles fn. */
  static final String JOB = String.join("\n",
      "import pickle, sys, cloudpickle, fnworker",
      "from fnworker import Operation",
      "class StandInDataStream:  # records what PyFlink's DataStream.process would get",
      "    def process(self, fn, output_type=None):",
      "        self.fn = fn",
      "        return self",
      "def emit(name, data):",
      "    print(name, data.hex())",
      "project = Operation('project', fields='name, id').with_settings(output_type='ROW<name:STRING,id:LONG>')",
      "class StandInType:  # a PyFlink type the package does not map: the text form in the settings stays",
      "    pass",
      "emit('project', cloudpickle.dumps(fnworker.process(StandInDataStream(), project, StandInType()).fn))",
      "ds = fnworker.unordered_wait_batch(StandInDataStream(), Operation('echo', delay_ms=2), 5000, 8, 5, 100)",
      "emit('echo_p2', cloudpickle.dumps(ds.fn, protocol=2))",
      "emit('plain', cloudpickle.dumps(lambda row: row))",
      "");

  /** name -> bytes printed by JOB, or null (with a note) when python3 or cloudpickle is missing. */
  static Map<String, byte[]> runJob(Ctx c) throws Exception {
    String py = System.getenv().getOrDefault("FNW_PYTHON", "/usr/bin/python3");
    if (c.settings.runnerScript == null || !new File(py).canExecute()) {
      c.note("skipped: " + py + " not found");
      return null;
    }
    File root = new File(c.settings.runnerScript).getAbsoluteFile().getParentFile().getParentFile();
    ProcessBuilder pb = new ProcessBuilder(py, "-c", JOB).redirectErrorStream(true);
    pb.environment().put("PYTHONPATH", new File(root, "python").getPath());
    pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
    Process p = pb.start();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    p.getInputStream().transferTo(out);
    check(p.waitFor(c.ms(30_000), TimeUnit.MILLISECONDS), "python3 did not finish");
    String text = out.toString(StandardCharsets.UTF_8);
    if (p.exitValue() != 0 && text.contains("No module named 'cloudpickle'")) {
      c.note("skipped: cloudpickle missing (Debian: python3-cloudpickle)");
      return null;
    }
    check(p.exitValue() == 0, "the PyFlink-style job script failed: " + text);
    Map<String, byte[]> m = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] kv = line.trim().split(" ");
      if (kv.length == 2) {
        m.put(kv[0], Hex.parse(kv[1]));
      }
    }
    return m;
  }

  /**
   * A fused chain built the PyFlink way: `project` (cloudpickle's default protocol, output_type in
   * its spec) then a batching `echo` (pickled at protocol 2, bytes as _codecs.encode): every record
   * comes back projected, with its timestamp.
   */
  static void packagePayloads(Ctx c) throws Exception {
    Map<String, byte[]> p = runJob(c);
    if (p == null) {
      return;
    }
    check(p.get("project")[0] == (byte) 0x80 && p.get("echo_p2")[1] == 2, "the payloads should be pickles");
    Worker w = c.worker();
    TypeInfo in = t("ROW<id:LONG,name:STRING,score:DOUBLE>");
    TypeInfo out = t("ROW<name:STRING,id:LONG>");
    FunctionRunner r = c.runner(w, in, out, FunctionType.PROCESS, p.get("project"),
        cfg -> cfg.functions.add(new DescriptorBuilder.Fn(FunctionType.PROCESS, p.get("echo_p2"))));
    List<In> inputs = values(in, 50, 23);
    List<FunctionRunner.Result> res = Ctx.bundle(r, in, inputs);
    expectOutputs(out, inputs, x -> RecordScenarios.projected(x, 1, 0), res);
    check(AsyncScenarios.metric(r, "transform-1", "batches").value >= inputs.size() / 8,
        "echo should run in batches of at most 8");
  }

  /**
   * A plain cloudpickled Python function with the relay off (FNW_RELAY=off, for fnworker-only
   * jobs): the bundle fails saying what it is and what to use. (With the relay on, the default,
   * it runs in PyFlink's own worker: RelayScenarios.)
   */
  static void plainFunctionRefused(Ctx c) throws Exception {
    Map<String, byte[]> p = runJob(c);
    if (p == null) {
      return;
    }
    Worker w = c.worker(o -> o.env.put("FNW_RELAY", "off"));
    TypeInfo ty = t("ROW<id:LONG>");
    FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, p.get("plain"), cfg -> { });
    Ctx.send(r, ty, values(ty, 3, 1));
    String err = Ctx.expectBundleError(r);
    for (String part : List.of("transform 'transform-0'", "Python pickle (protocol 5) of "
        + "cloudpickle.cloudpickle._make_function", "native operations", "from fnworker import",
        "(see docs/pyflink.md, \"Also not supported\")")) {
      check(err.contains(part), "the error should contain \"" + part + "\": " + err);
    }
    FunctionRunner ok = c.runner(w, ty, ty, FunctionType.PROCESS, p.get("echo_p2"), cfg -> { });
    List<In> in = values(ty, 10, 2);
    expectOutputs(ty, in, x -> x, Ctx.bundle(ok, ty, in));
  }

  /** Each input comes back once as f(value) with its timestamp, in any order (echo runs UNORDERED). */
  static void expectOutputs(TypeInfo out, List<In> inputs, UnaryOperator<Object> f,
      List<FunctionRunner.Result> res) {
    check(res.size() == inputs.size(), "sent " + inputs.size() + " records, got " + res.size() + " back");
    List<String> want = new ArrayList<>();
    List<String> got = new ArrayList<>();
    for (int i = 0; i < inputs.size(); i++) {
      In x = inputs.get(i);
      want.add(Hex.of(RunnerRows.expectedOutput(out, x.ts, f.apply(x.value))));
      check(res.get(i).tag.equals("output"), "result " + i + " came back on '" + res.get(i).tag + "'");
      got.add(Hex.of(res.get(i).bytes));
    }
    Collections.sort(want);
    Collections.sort(got);
    check(want.equals(got), "the outputs should be the inputs' " + out + " values with their timestamps: got "
        + got + ", expected " + want);
  }
}
