// Integration scenarios that replay what a real Flink was seen to send
// (tests/e2e, tests/integration/fixtures/real-flink-descriptor.txt): the
// descriptor of test_chain.py's fused operator, echo -> project -> identity
// with the type change in the middle, whose functions' main outputs are keyed
// "" (flink-python's Constants.MAIN_OUTPUT_NAME in 1.20 and 2.x). The worker
// before plan.c's main_output() took only "output" for the main output, so it
// planned "" as a side output and this scenario fails there. Names start with
// "real_flink_".
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Hex;
import fnworker.harness.types.TypeInfo;
import fnworker.proto.v1.OperationProto;
import java.util.List;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

public final class RealFlinkScenarios {
  private RealFlinkScenarios() {}

  static List<Scenario> scenarios() {
    return List.of(new Scenario("real_flink_chain_main_output_keyed_empty", RealFlinkScenarios::chain));
  }

  static void chain(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo in = t("ROW<id:LONG,name:STRING,score:DOUBLE>");
    TypeInfo out = t("ROW<name:STRING,id:LONG>");
    OperationProto.OperationSpec echo = RunnerRows.spec("echo", Map.of("delay_ms", "1"),
        "{\"capacity\":10,\"outputMode\":\"UNORDERED\"}");
    OperationProto.OperationSpec project = RunnerRows.withOutputType(
        RunnerRows.spec("project", Map.of("fields", "name,id"), null), out);
    OperationProto.OperationSpec identity = RunnerRows.spec("identity", Map.of(), null);
    FunctionRunner r = c.runner(w, in, out, FunctionType.PROCESS, echo.toByteArray(), cfg -> {
      cfg.functions.add(RunnerRows.fn(project));
      cfg.functions.add(RunnerRows.fn(identity));
    });
    Map<String, String> outs = r.descriptor().getTransformsOrThrow("transform-1").getOutputsMap();
    check(outs.equals(Map.of("", "collection-1")), "the harness should key the main output \"\" as Flink does: "
        + outs);
    List<In> inputs = values(in, 50, 23);
    List<FunctionRunner.Result> res = Ctx.bundle(r, in, inputs);
    check(res.size() == inputs.size(), "sent " + inputs.size() + " records, got " + res.size() + " back");
    java.util.Set<String> want = new java.util.HashSet<>();
    java.util.Set<String> got = new java.util.HashSet<>();
    for (In x : inputs) {
      want.add(Hex.of(RunnerRows.expectedOutput(out, x.ts, RecordScenarios.projected(x.value, 1, 0))));
    }
    for (FunctionRunner.Result x : res) {
      check(x.tag.equals("output"), "a result came on '" + x.tag + "'");
      got.add(Hex.of(x.bytes));
    }
    check(got.equals(want), "the projected rows (unordered) should come back exactly: got " + got.size()
        + " distinct, " + (want.size() - intersection(want, got)) + " missing");
  }

  private static int intersection(java.util.Set<String> a, java.util.Set<String> b) {
    int n = 0;
    for (String x : a) {
      n += b.contains(x) ? 1 : 0;
    }
    return n;
  }
}
