// Integration scenarios for the metrics a bundle reports, read the way
// Flink reads them: every bundle's MonitoringInfos go through
// Metrics.FlinkView (Beam's merging, then Flink's naming by NAMESPACE + NAME
// and its group registration), so a name collision between chained steps, a
// distribution that drags Flink's min to 0, or a gauge reset by an empty
// bundle fails the scenario. Names start with "metrics_".
package fnworker.harness;

import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import java.util.List;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

public final class MetricsScenarios {
  private MetricsScenarios() {}

  static final TypeInfo LONG = AsyncScenarios.LONG;

  static List<Scenario> scenarios() {
    return List.of(new Scenario("metrics_chain_as_flink_sees_it", MetricsScenarios::chainAsFlinkSeesIt));
  }

  /** The NAMESPACE label of a step's metrics: groups fnworker and step, both generic. */
  static String namespace(String step) {
    return "[\"fnworker\", \"" + step + "\", \"MetricGroupType.generic\", \"MetricGroupType.generic\"]";
  }

  /** Feeds the runner's last bundle to Flink's view; checks Flink would read it cleanly. */
  static void feed(Metrics.FlinkView view, FunctionRunner r, String when) {
    FunctionRunner.BundleRecord b = r.lastBundle();
    check(b != null && b.error == null, when + ": no successful bundle");
    view.update(b.monitoringInfos);
    check(view.collisions().isEmpty(), when + ": metrics that Flink names alike overwrite each other: "
        + view.collisions());
    check(view.problems().isEmpty(), when + ": Flink would not read the metrics as sent: " + view.problems());
  }

  static Metrics.FlinkView.Entry flink(Metrics.FlinkView view, String id) {
    Metrics.FlinkView.Entry e = view.get(id);
    check(e != null, "Flink has no metric " + id + "; it has " + view.entries().keySet());
    return e;
  }

  static void expectCounter(Metrics.FlinkView view, String id, long want) {
    Metrics.FlinkView.Entry e = flink(view, id);
    check(e.kind.equals("counter") && e.value == want, id + " should be a counter at " + want + ": " + e);
  }

  /**
   * echo (20 ms, repeat 2) -> identity, three bundles (10 inputs, 5 inputs, none): both steps count
   * recordsIn, each under its own group, with the totals Flink adds up; the empty bundle sends
   * counters only, so it neither resets the min of the echo step's distribution to 0 nor its gauge.
   */
  static void chainAsFlinkSeesIt(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = c.runner(w, LONG, LONG, FunctionType.PROCESS,
        AsyncScenarios.echo(AsyncScenarios.opts("delay_ms", "20", "repeat", "2"),
            "{\"outputMode\":\"ORDERED\",\"capacity\":10}").toByteArray(),
        cfg -> cfg.functions.add(new DescriptorBuilder.Fn(FunctionType.PROCESS, Ctx.spec("identity").toByteArray())));
    Metrics.FlinkView view = new Metrics.FlinkView();
    int total = 0;
    for (int n : new int[]{10, 5}) {
      List<In> in = AsyncScenarios.longs(n);
      List<Long> got = AsyncScenarios.longValues(Ctx.bundle(r, LONG, in));
      check(got.size() == 2 * n, "echo repeat=2 -> identity: " + n + " inputs gave " + got.size() + " outputs");
      total += n;
      feed(view, r, "bundle of " + n);
    }
    expectCounter(view, "fnworker.echo_0.recordsIn", total);
    expectCounter(view, "fnworker.echo_0.recordsOut", 2L * total);
    expectCounter(view, "fnworker.echo_0.asyncCalls", total);
    expectCounter(view, "fnworker.identity_1.recordsIn", 2L * total);
    expectCounter(view, "fnworker.identity_1.recordsOut", 2L * total);
    Metrics.FlinkView.Entry in0 = flink(view, "fnworker.echo_0.recordsIn");
    check(in0.groups.equals(List.of("fnworker", "echo_0")), "recordsIn of step 0 is registered under "
        + in0.groups + ", expected the groups fnworker > echo_0");
    check(flink(view, "fnworker.identity_1.batchSize").min == 1, "identity batchSize: "
        + flink(view, "fnworker.identity_1.batchSize"));
    Metrics.FlinkView.Entry dur = flink(view, "fnworker.echo_0.asyncCallDurationMs");
    check(dur.kind.equals("distribution") && dur.count == total && dur.min >= 18,
        "echo's calls take 20 ms: " + dur);
    long high = flink(view, "fnworker.echo_0.inflightHighWater").value;
    check(high >= 1 && high <= 10, "inflightHighWater " + high + " (capacity 10)");

    r.startBundle();
    r.flush();
    for (String tid : new String[]{"transform-0", "transform-1"}) {
      for (Map.Entry<String, Metrics.Metric> e : AsyncScenarios.metrics(r, tid).entrySet()) {
        Metrics.Metric m = e.getValue();
        if (e.getKey().equals("inflightCalls")) { // a fact of every bundle's end: no call is out
          check(m.type.equals("beam:metrics:latest_int64:v1") && Long.valueOf(0).equals(m.value), "inflightCalls after the empty "
              + "bundle: " + m);
          continue;
        }
        if (e.getKey().equals("concurrencyLimit")) { // the operation's state, kept across bundles
          check(m.type.equals("beam:metrics:latest_int64:v1") && Long.valueOf(10).equals(m.value),
              "concurrencyLimit after the empty bundle (no overload: capacity 10): " + m);
          continue;
        }
        check(m.type.equals("beam:metrics:sum_int64:v1"), "the empty bundle sent " + m
            + "; only counters (and inflightCalls, concurrencyLimit) have something to say");
      }
    }
    feed(view, r, "empty bundle");
    Metrics.FlinkView.Entry after = flink(view, "fnworker.echo_0.asyncCallDurationMs");
    check(after.count == total && after.min == dur.min, "the empty bundle changed Flink's distribution: " + dur
        + " became " + after);
    check(flink(view, "fnworker.echo_0.inflightHighWater").value == high, "the empty bundle changed Flink's "
        + "gauge: " + flink(view, "fnworker.echo_0.inflightHighWater"));
    expectCounter(view, "fnworker.echo_0.recordsIn", total);
  }
}
