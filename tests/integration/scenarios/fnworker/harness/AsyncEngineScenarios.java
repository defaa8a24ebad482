// fnworker's own async scenarios, beyond PyFlink's lists: stale batch timers,
// watermark segments under jitter, capacity as a hard in-flight limit (per
// element and per batch), completions arriving after their bundle failed,
// bundle-end drain time, 100,000 elements exactly once, the validation
// messages for bad specs, real concurrency, repeat, chained functions and
// the metrics a batch bundle reports. Listed in AsyncScenarios, whose
// helpers they use.
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.*;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class AsyncEngineScenarios {
  private AsyncEngineScenarios() {}

  /**
   * Batch timers are generation-tagged: A starts batch 1 (timer due A+300), B and C fill it
   * (sent at once); D starts batch 2 at t0+150. The stale timer at t0+300 must not flush
   * batch 2: D's result comes about 300 ms after D, not 150.
   */
  static void staleBatchTimer(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts(), batchJson(3, "\"batchTimeoutMs\":300")));
    List<In> in = longs(4);
    Map<Long, Long> arrived = new LinkedHashMap<>();
    r.startBundle();
    long t0 = now();
    Ctx.send(r, LONG, in.subList(0, 1));
    r.sendBuffered();
    Thread.sleep(50);
    Ctx.send(r, LONG, in.subList(1, 3));
    r.sendBuffered();
    long tc = now();
    collect(r, arrived, t0 + 150);
    Thread.sleep(Math.max(0, t0 + 150 - now()));
    Ctx.send(r, LONG, in.subList(3, 4));
    r.sendBuffered();
    long td = now();
    collect(r, arrived, td + 300 + c.ms(700));
    r.flush();
    for (FunctionRunner.Result x : Ctx.drain(r)) {
      long v = longValues(List.of(x)).get(0);
      check(!arrived.containsKey(v), "result " + v + " came twice");
      arrived.put(v, -1L);
    }
    check(sorted(new ArrayList<>(arrived.keySet())).equals(range(4)), "expected results for 0..3, got "
        + arrived.keySet());
    for (long v = 0; v < 3; v++) {
      Long at = arrived.get(v);
      check(at != -1 && at - tc <= c.ms(200), "batch 1 was full when C arrived, yet result " + v + " came "
          + (at == -1 ? "only at bundle end" : (at - tc) + " ms after C"));
    }
    long d = arrived.get(3L);
    check(d != -1, "D's result came only at bundle end: its batch timeout (300 ms) never flushed batch 2");
    check(d - td >= 240, "D's result came " + (d - td) + " ms after D, before its 300 ms batch timeout: the stale "
        + "timer of batch 1 (due 150 ms after D) flushed batch 2");
    check(d - td <= 300 + c.ms(500), "D's result came " + (d - td) + " ms after D; its batch timeout was 300 ms");
    expectMetric(r, "batches", 2);
    c.note("D after " + (d - td) + " ms");
  }

  /** Takes results until the deadline, recording when each value arrived. */
  static void collect(FunctionRunner r, Map<Long, Long> arrived, long deadline) throws InterruptedException {
    for (long left = deadline - now(); left > 0; left = deadline - now()) {
      FunctionRunner.Result x = r.takeResult(left);
      if (x == null) {
        return;
      }
      long v = longValues(List.of(x)).get(0);
      check(!arrived.containsKey(v), "result " + v + " came twice");
      arrived.put(v, now());
      if (arrived.size() == 4) {
        return;
      }
    }
  }

  /** 100 elements, the watermark advancing every 10, jitter, UNORDERED: any order within a group, groups in order. */
  static void watermarkSegments(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("jitter_ms", "40", "seed", "21"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":100,\"timeoutMs\":5000}"));
    List<In> in = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      in.add(new In(tsOf(i), 1000L * (i / 10), (long) i));
    }
    List<Long> got = longValues(Ctx.bundle(r, LONG, in));
    expectAllOnce(100, got);
    int reordered = 0;
    for (int i = 0; i < got.size(); i++) {
      long group = got.get(i) / 10;
      check(group == i / 10, "output " + i + " is element " + got.get(i) + " (watermark group " + group + "), but "
          + "group " + (i / 10) + " must be complete before group " + (i / 10 + 1) + " starts; got " + got);
      if (got.get(i) != i) {
        reordered++;
      }
    }
    c.note(reordered + " of 100 out of input position");
  }

  /** capacity 7, 20 ms calls, 200 elements: never more than 7 in flight, exactly 7 at the peak, all arrive. */
  static void capacityRespected(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("delay_ms", "20"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":7,\"timeoutMs\":5000}"));
    long t0 = now();
    List<Long> got = longValues(Ctx.bundle(r, LONG, longs(200)));
    long took = now() - t0;
    expectAllOnce(200, got);
    expectMetric(r, "inflightHighWater", 7);
    expectMetric(r, "asyncCalls", 200);
    // ceil(200 / 7) = 29 rounds of 20 ms.
    check(took >= 29 * 20 - 40, "200 calls of 20 ms with capacity 7 took " + took + " ms, less than 29 rounds");
    c.note(took + " ms");
  }

  /** Batch mode: capacity 7 below batch_size 10 -> batches of at most 7, never more than 7 in flight. */
  static void batchCapacityRespected(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("delay_ms", "20"),
        batchJson(10, "\"outputMode\":\"UNORDERED\",\"capacity\":7")));
    expectAllOnce(50, longValues(Ctx.bundle(r, LONG, longs(50))));
    expectMetric(r, "inflightHighWater", 7);
    Metrics.Metric d = metric(r, T0, "batchSize");
    check(d.max != null && d.max == 7 && d.sum == 50, "batches should hold min(batch_size 10, capacity 7) = 7 inputs"
        + " at most (and 7 when full), 50 in all: " + d);
    expectMetric(r, "batches", 8);
  }

  /**
   * Calls of 300 ms with a 100 ms timeout: the timeouts win, and the late completions (firing
   * inside the worker later, some while the next bundle of the same operator is open) are
   * ignored: no outputs, no duplicates, no failures, and the worker keeps serving.
   */
  static void lateCompletionIgnored(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("delay_ms", "300"),
        "{\"outputMode\":\"UNORDERED\",\"timeoutMs\":100,\"onTimeout\":\"TIMEOUT_EMPTY\"}"));
    List<FunctionRunner.Result> res = Ctx.bundle(r, LONG, longs(5));
    check(res.isEmpty(), "TIMEOUT_EMPTY: " + res.size() + " outputs");
    expectMetric(r, "timeouts", 5);
    // Next bundle open while bundle 1's calls complete (~200 ms from now).
    r.startBundle();
    Thread.sleep(300 + c.ms(50));
    res = Ctx.bundle(r, LONG, longs(5));
    check(res.isEmpty(), "the bundle after the late completions returned " + res.size() + " outputs");
    expectMetric(r, "timeouts", 5);
    expectMetric(r, "recordsOut", 0);
    expectMetric(r, "emptyResults", 5);
    // TIMEOUT_OPERATION: exactly one output per input, none leaking into the next bundle.
    FunctionRunner op = proc(c, w, LONG, echo(opts("delay_ms", "300", "timeout_result", "input"),
        "{\"outputMode\":\"ORDERED\",\"timeoutMs\":100,\"onTimeout\":\"TIMEOUT_OPERATION\"}"));
    List<In> a = longs(5);
    Ctx.expectSame(LONG, a, Ctx.bundle(op, LONG, a));
    op.startBundle();
    Thread.sleep(300 + c.ms(50));
    List<In> b = new ArrayList<>();
    for (int i = 10; i < 15; i++) {
      b.add(new In(tsOf(i), (long) i));
    }
    Ctx.expectSame(LONG, b, Ctx.bundle(op, LONG, b));
    // A late failure after the timeout is ignored too.
    FunctionRunner f = proc(c, w, LONG, echo(opts("delay_ms", "300", "fail_every", "1"),
        "{\"timeoutMs\":100,\"onTimeout\":\"TIMEOUT_EMPTY\"}"));
    check(Ctx.bundle(f, LONG, longs(3)).isEmpty(), "outputs from always-late calls");
    f.startBundle();
    Thread.sleep(300 + c.ms(50));
    check(Ctx.bundle(f, LONG, longs(3)).isEmpty(), "outputs from always-late calls");
    expectMetric(f, "failures", 0);
    Thread.sleep(200 + c.ms(50));
    stillServes(c, w);
  }

  /** Bundle end waits for in-flight calls, and no longer than it must: 100 calls of 200 ms at once. */
  static void drainTime(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("delay_ms", "200"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":100,\"timeoutMs\":5000}"));
    stillServes(c, w);  // the Data stream is up and the code warm
    Ctx.send(r, LONG, longs(100));
    long t0 = now();
    r.flush();
    long took = now() - t0;
    expectAllOnce(100, longValues(Ctx.drain(r)));
    check(took >= 180, "flush() returned after " + took + " ms, before the 200 ms calls could have completed");
    check(took <= 200 + c.ms(250), "flush() took " + took + " ms for 100 concurrent calls of 200 ms");
    c.note(took + " ms");
  }

  /** 100,000 elements, UNORDERED with 0..3 ms jitter, capacity 1000: each exactly once with its timestamp. */
  static void unordered100k(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("jitter_ms", "3", "seed", "99"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":1000,\"timeoutMs\":10000}"));
    int n = 100_000;
    long t0 = now();
    List<Long> got = longValues(Ctx.bundle(r, LONG, longs(n)));
    long took = now() - t0;
    check(got.size() == n, "sent " + n + ", got " + got.size());
    boolean[] seen = new boolean[n];
    for (long v : got) {
      check(v >= 0 && v < n, "unexpected value " + v);
      check(!seen[(int) v], "element " + v + " came back twice");
      seen[(int) v] = true;
    }
    expectMetric(r, "asyncCalls", n);
    expectMetric(r, "recordsOut", n);
    long hw = value(r, "inflightHighWater");
    check(hw <= 1000, "inflightHighWater " + hw + " exceeds the capacity 1000");
    c.note(took + " ms, high water " + hw);
  }

  /** One bundle per invalid spec, each failing with the exact message; the worker serves a good bundle after each. */
  static void validationMessages(Ctx c) throws Exception {
    Worker w = c.worker();
    String fixed = "\"kind\":\"FIXED_DELAY\",\"maxAttempts\":3,\"delayMs\":10";
    Object[][] cases = {
        {FunctionType.PROCESS, opts(), "{\"mode\":\"BATCH\",\"batchSize\":0,\"timeoutMs\":1000}",
            new String[]{"Batch size must be positive, got: 0"}},
        {FunctionType.PROCESS, opts(), "{\"mode\":\"BATCH\",\"batchSize\":2}",
            new String[]{"Timeout must be positive for async batch operations."}},
        {FunctionType.ASYNC_BATCH, opts(), "{\"batchSize\":2}",
            new String[]{"Timeout must be positive for async batch operations."}},
        {FunctionType.PROCESS, opts(), "{\"mode\":\"BATCH\",\"batchSize\":2,\"timeoutMs\":1000,"
            + "\"batchTimeoutMs\":-5}", new String[]{"Batch timeout cannot be negative, got: -5 ms"}},
        {FunctionType.PROCESS, opts(), "{\"batchSize\":8,\"timeoutMs\":1000}",
            new String[]{"batch_size (8) is a batch-mode setting", "set mode BATCH"}},
        {FunctionType.PROCESS, opts(), "{\"mode\":\"PER_ELEMENT\",\"batchTimeoutMs\":20}",
            new String[]{"batch_timeout_ms (20) is a batch-mode setting", "set mode BATCH"}},
        {FunctionType.PROCESS, opts(), "{\"retry\":{" + fixed + ",\"retryOnError\":true}}",
            new String[]{"Timeout should be configured when do async with retry."}},
        {FunctionType.PROCESS, opts(), "{\"timeoutMs\":1000,\"retry\":{" + fixed + "}}",
            new String[]{"Retry predicate", "FIXED_DELAY", "retry_on_error"}},
        {FunctionType.PROCESS, opts(), "{\"timeoutMs\":1000,\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":0,"
            + "\"delayMs\":10,\"retryOnError\":true}}", new String[]{"max_attempts", "got: 0"}},
        {FunctionType.PROCESS, opts(), "{\"timeoutMs\":1000,\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":2,"
            + "\"retryOnError\":true}}", new String[]{"delay_ms", "got: 0"}},
        {FunctionType.PROCESS, opts(), "{\"timeoutMs\":1000,\"retry\":{\"kind\":\"EXPONENTIAL_BACKOFF\","
            + "\"maxAttempts\":2,\"delayMs\":10,\"maxDelayMs\":100,\"retryOnError\":true}}",
            new String[]{"multiplier", "EXPONENTIAL_BACKOFF"}},
        {FunctionType.PROCESS, opts("bogus_knob", "1"), "", new String[]{"bogus_knob", "echo"}},
        {FunctionType.PROCESS, opts("delay_ms", "fast"), "", new String[]{"delay_ms", "fast"}},
        {FunctionType.PROCESS, opts("hang", "maybe"), "", new String[]{"hang", "maybe"}},
    };
    List<String> bad = new ArrayList<>();
    for (Object[] k : cases) {
      @SuppressWarnings("unchecked")
      Map<String, String> o = (Map<String, String>) k[1];
      FunctionRunner r = runner(c, w, LONG, (FunctionType) k[0], echo(o, (String) k[2]));
      Ctx.send(r, LONG, longs(2));
      String err;
      try {
        err = Ctx.expectBundleError(r);
      } catch (Scenario.Failure e) {
        bad.add(k[2] + " " + o + ": " + e.getMessage());
        continue;
      }
      for (String want : (String[]) k[3]) {
        if (!err.contains(want)) {
          bad.add(k[2] + " " + o + ": the error should contain \"" + want + "\": " + err);
        }
      }
      stillServes(c, w);
    }
    // An unknown operation names itself and the registered ones.
    FunctionRunner u = proc(c, w, LONG, RunnerRows.spec("no_such_op", Map.of(), null));
    Ctx.send(u, LONG, longs(2));
    String err = Ctx.expectBundleError(u);
    for (String want : new String[]{"no_such_op", "identity", "echo"}) {
      if (!err.contains(want)) {
        bad.add("unknown operation: the error should contain \"" + want + "\": " + err);
      }
    }
    stillServes(c, w);
    check(bad.isEmpty(), bad.size() + " of " + (cases.length + 1) + " invalid specs were not reported as expected: "
        + String.join(" || ", bad));
  }

  /** capacity 50, 100 ms calls, 500 elements: 10 rounds (~1 s), not 50 s; exactly 500 calls. */
  static void concurrencyIsReal(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("delay_ms", "100"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":50,\"timeoutMs\":5000}"));
    long t0 = now();
    List<Long> got = longValues(Ctx.bundle(r, LONG, longs(500)));
    long took = now() - t0;
    expectAllOnce(500, got);
    expectMetric(r, "asyncCalls", 500);
    expectMetric(r, "inflightHighWater", 50);
    check(took < c.ms(3000), "500 calls of 100 ms, 50 at a time, took " + took + " ms (ideal 1000 ms)");
    check(took >= 10 * 100 - 50, "500 calls of 100 ms, 50 at a time, took only " + took + " ms: more than 50 ran "
        + "at once");
    c.note(took + " ms");
  }

  /** repeat=3: three outputs per input, in order; repeat=0: none, each counted empty. */
  static void repeat(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("repeat", "3", "jitter_ms", "20"), "{\"outputMode\":\"ORDERED\"}"));
    int n = 10;
    List<Long> got = longValues(Ctx.bundle(r, LONG, longs(n)));
    List<Long> want = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      want.addAll(List.of(i, i, i));
    }
    check(got.equals(want), "repeat=3 ORDERED: expected " + want + ", got " + got);
    expectMetric(r, "recordsOut", 3L * n);
    expectMetric(r, "emptyResults", 0);
    FunctionRunner z = proc(c, w, LONG, echo(opts("repeat", "0", "delay_ms", "5"), ""));
    List<FunctionRunner.Result> none = Ctx.bundle(z, LONG, longs(n));
    check(none.isEmpty(), "repeat=0 returned " + none.size() + " outputs");
    expectMetric(z, "emptyResults", n);
    expectMetric(z, "recordsOut", 0);
    expectMetric(z, "asyncCalls", n);
  }

  /** Several functions in one operator: async echo -> identity, and batch echo -> async echo -> identity. */
  static void chain(Ctx c) throws Exception {
    Worker w = c.worker();
    byte[] identity = Ctx.spec("identity").toByteArray();
    FunctionRunner r = c.runner(w, LONG, LONG, FunctionType.PROCESS,
        echo(opts("delay_ms", "20", "jitter_ms", "20"), "{\"outputMode\":\"ORDERED\",\"capacity\":10}").toByteArray(),
        cfg -> cfg.functions.add(new DescriptorBuilder.Fn(FunctionType.PROCESS, identity)));
    List<In> in = longs(30);
    Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    check(value(r, "asyncCalls") == 30, "transform-0 asyncCalls " + value(r, "asyncCalls"));
    Metrics.Metric in1 = metric(r, "transform-1", "recordsIn");
    Metrics.Metric out1 = metric(r, "transform-1", "recordsOut");
    check(in1.value == 30 && out1.value == 30, "transform-1 (identity) should see 30 in and 30 out: " + in1 + ", "
        + out1);
    FunctionRunner r3 = c.runner(w, LONG, LONG, FunctionType.PROCESS,
        RunnerRows.batchMode(echo(opts("delay_ms", "15"), batchJson(4, "\"outputMode\":\"UNORDERED\"")))
            .toByteArray(),
        cfg -> {
          cfg.functions.add(RunnerRows.fn(FunctionType.PROCESS, echo(opts("jitter_ms", "30", "repeat", "2"),
              "{\"outputMode\":\"UNORDERED\",\"capacity\":5}")));
          cfg.functions.add(new DescriptorBuilder.Fn(FunctionType.PROCESS, identity));
        });
    List<Long> got = longValues(Ctx.bundle(r3, LONG, longs(21)));
    List<Long> want = new ArrayList<>();
    for (long i = 0; i < 21; i++) {
      want.addAll(List.of(i, i));
    }
    check(sorted(got).equals(want), "batch echo -> echo repeat=2 -> identity: expected each of 0..20 twice, got "
        + head(sorted(got)));
    check(value(r3, "batches") == 6, "transform-0 batches " + value(r3, "batches") + ", expected 6");
    check(metric(r3, "transform-1", "inflightHighWater").value <= 5, "transform-1 exceeded its capacity 5: "
        + metric(r3, "transform-1", "inflightHighWater"));
    check(metric(r3, "transform-2", "recordsIn").value == 42, "transform-2 recordsIn: "
        + metric(r3, "transform-2", "recordsIn"));
  }

  /**
   * A fused chain whose middle step fails (its 7th call) while the steps around it hold calls (the last
   * one's take 300 ms): the bundle fails once, naming the middle step's transform and input and the
   * operation's message, and the worker serves the next bundle.
   */
  static void chainFailingMiddle(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = c.runner(w, LONG, LONG, FunctionType.PROCESS,
        echo(opts("delay_ms", "5"), "{\"outputMode\":\"ORDERED\",\"capacity\":20}").toByteArray(),
        cfg -> {
          cfg.functions.add(RunnerRows.fn(FunctionType.PROCESS, echo(opts("fail_every", "7", "fail_message",
              "boom in the middle"), "{\"capacity\":20}")));
          cfg.functions.add(RunnerRows.fn(FunctionType.PROCESS, echo(opts("delay_ms", "300"),
              "{\"capacity\":20}")));
        });
    Ctx.send(r, LONG, longs(50));
    String err = Ctx.expectBundleError(r);
    contains(err, "boom in the middle", "'echo'", "'transform-1'");
    check(namedInput(err) == 6, "the middle step's 7th call (input 6) failed, the error names another: " + err);
    stillServes(c, w);
  }

  /** After a batch bundle every metric is there, user-typed, namespaced, and consistent. */
  static void metricsReported(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("delay_ms", "30"), batchJson(4, "\"capacity\":100")));
    int n = 10;
    List<In> in = longs(n);
    Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    Map<String, Metrics.Metric> m = metrics(r, T0);
    for (String name : List.of("recordsIn", "recordsOut", "asyncCalls", "batches", "retries", "timeouts", "failures",
        "emptyResults", "batchSize", "asyncCallDurationMs", "inflightHighWater")) {
      Metrics.Metric x = m.get(name);
      check(x != null, "metric " + name + " missing; have " + m.keySet());
      check(x.urn.startsWith("beam:metric:user:"), name + " has URN " + x.urn + " (Flink reads beam:metric:user:*)");
      check(x.namespace().equals(MetricsScenarios.namespace("echo_0")), name + " has namespace " + x.namespace()
          + ", expected " + MetricsScenarios.namespace("echo_0"));
    }
    check(m.get("batchSize").type.equals("beam:metrics:distribution_int64:v1"), "batchSize type " + m.get("batchSize"));
    check(m.get("inflightHighWater").type.equals("beam:metrics:latest_int64:v1"), "gauge type "
        + m.get("inflightHighWater"));
    expectMetric(r, "recordsIn", n);
    expectMetric(r, "recordsOut", n);
    expectMetric(r, "batches", 3);
    expectMetric(r, "asyncCalls", 3);
    expectMetric(r, "retries", 0);
    expectMetric(r, "timeouts", 0);
    expectMetric(r, "failures", 0);
    expectMetric(r, "emptyResults", 0);
    Metrics.Metric bs = m.get("batchSize");
    check(bs.count == 3 && bs.sum == n && bs.min == 2 && bs.max == 4, "batchSize should be 4, 4, 2: " + bs);
    Metrics.Metric d = m.get("asyncCallDurationMs");
    check(d.count == 3 && d.min >= 28 && d.max <= 30 + c.ms(1000), "asyncCallDurationMs should hold 3 calls of about"
        + " 30 ms: " + d);
    long hw = value(r, "inflightHighWater");
    check(hw >= 4 && hw <= n, "inflightHighWater " + hw + " (a full batch of 4 was in flight)");
    // The next bundle reports its own figures, not a running total.
    List<In> in2 = longs(3);
    Ctx.expectSame(LONG, in2, Ctx.bundle(r, LONG, in2));
    expectMetric(r, "recordsIn", 3);
    expectMetric(r, "batches", 1);
    Metrics.Metric bs2 = metric(r, T0, "batchSize");
    check(bs2.count == 1 && bs2.sum == 3, "batchSize of bundle 2 should be one batch of 3: " + bs2);
  }
}
