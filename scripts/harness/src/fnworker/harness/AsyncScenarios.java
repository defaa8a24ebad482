// Integration scenarios for the async engine (README "Async semantics"),
// driven through the real worker with the built-in `echo` operation: PyFlink's
// own async and async-batch test lists (test_async_function.py,
// test_async_batch_function.py) translated to echo knobs, plus ordering,
// watermark segments, capacity, batch timers, timeouts, retries, late
// completions, validation messages and metrics. Batch mode is selected the
// way a released Flink can: function type PROCESS with OperationSpec mode
// BATCH; two scenarios cover function type ASYNC_BATCH (7).
// Names start with "async_" (run them alone with the filter async_). Timing
// lower bounds are never scaled (a slow run only makes things later); upper
// bounds and waits go through Ctx.ms() so valgrind runs pass.
package fnworker.harness;

import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import fnworker.proto.v1.OperationProto.OperationSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

public final class AsyncScenarios {
  private AsyncScenarios() {}

  static final TypeInfo LONG = TypeInfo.parse("LONG");
  static final TypeInfo PAIR = TypeInfo.parse("ROW<v1:INT,v2:INT>");
  static final String T0 = "transform-0";

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    // PyFlink test_async_function.py
    s.add(new Scenario("async_unordered_mode", AsyncScenarios::unorderedMode));
    s.add(new Scenario("async_unordered_really_reorders", AsyncScenarios::unorderedReorders));
    s.add(new Scenario("async_ordered_mode", AsyncScenarios::orderedMode));
    s.add(new Scenario("async_watermark", AsyncScenarios::watermark));
    s.add(new Scenario("async_raise_exception_in_async_invoke", AsyncScenarios::raiseInInvoke));
    s.add(new Scenario("async_timeout_fail", AsyncScenarios::timeoutFail));
    s.add(new Scenario("async_processing_timeout", AsyncScenarios::processingTimeout));
    s.add(new Scenario("async_timeout_empty", AsyncScenarios::timeoutEmpty));
    s.add(new Scenario("async_with_retry", AsyncScenarios::withRetry));
    s.add(new Scenario("async_retry_exhausted", AsyncScenarios::retryExhausted));
    s.add(new Scenario("async_retry_exponential_backoff", AsyncScenarios::retryExponential));
    // PyFlink test_async_batch_function.py
    s.add(new Scenario("async_batch_basic_execution", AsyncScenarios::batchBasic));
    s.add(new Scenario("async_batch_size_triggering", AsyncScenarios::batchSizeTriggering));
    s.add(new Scenario("async_batch_timeout_triggering", AsyncScenarios::batchTimeoutTriggering));
    s.add(new Scenario("async_batch_exception_propagation", AsyncScenarios::batchException));
    s.add(new Scenario("async_batch_timeout_handling", AsyncScenarios::batchTimeoutHandling));
    s.add(new Scenario("async_batch_ordered_wait", AsyncScenarios::batchOrdered));
    s.add(new Scenario("async_batch_validation_negative_batch_size", AsyncScenarios::batchNegativeSize));
    s.add(new Scenario("async_batch_end_of_input_flush", AsyncScenarios::batchEndOfInput));
    s.add(new Scenario("async_batch_large_batch", AsyncScenarios::batchLarge));
    s.add(new Scenario("async_batch_short_result", AsyncScenarios::batchShortResult));
    // function type ASYNC_BATCH (7), from an unreleased PyFlink
    s.add(new Scenario("async_batch_function_type_7", AsyncScenarios::batchFunctionType7));
    s.add(new Scenario("async_batch_function_type_7_per_element_contradiction",
        AsyncScenarios::batchFunctionType7Contradiction));
    // fnworker's own
    s.add(new Scenario("async_stale_batch_timer", AsyncScenarios::staleBatchTimer));
    s.add(new Scenario("async_watermark_segments_unordered_jitter", AsyncScenarios::watermarkSegments));
    s.add(new Scenario("async_capacity_respected", AsyncScenarios::capacityRespected));
    s.add(new Scenario("async_batch_capacity_respected", AsyncScenarios::batchCapacityRespected));
    s.add(new Scenario("async_late_completion_ignored", AsyncScenarios::lateCompletionIgnored));
    s.add(new Scenario("async_drain_time", AsyncScenarios::drainTime));
    s.add(new Scenario("async_unordered_100k_exactly_once", AsyncScenarios::unordered100k));
    s.add(new Scenario("async_validation_messages", AsyncScenarios::validationMessages));
    s.add(new Scenario("async_concurrency_is_real", AsyncScenarios::concurrencyIsReal));
    s.add(new Scenario("async_repeat", AsyncScenarios::repeat));
    s.add(new Scenario("async_chain", AsyncScenarios::chain));
    s.add(new Scenario("async_metrics_reported", AsyncScenarios::metricsReported));
    return s;
  }

  // ------------------------------------------------------------ helpers

  /** The timestamp input i carries (distinct per input, so outputs can be matched to inputs). */
  static long tsOf(long i) {
    return 1_000_000L + 7 * i;
  }

  /** n LONG inputs: value i, timestamp tsOf(i), no watermark. */
  static List<In> longs(int n) {
    List<In> in = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      in.add(new In(tsOf(i), (long) i));
    }
    return in;
  }

  /** PyFlink's test data (1,1)..(n,n) as ROW<v1:INT,v2:INT>. */
  static List<In> pairs(int n) {
    List<In> in = new ArrayList<>(n);
    for (int i = 1; i <= n; i++) {
      in.add(new In(tsOf(i - 1), fnworker.harness.types.Row.of(i, i)));
    }
    return in;
  }

  static Map<String, String> opts(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  static OperationSpec echo(Map<String, String> options, String json) {
    return RunnerRows.spec("echo", options, json);
  }

  /** An opened runner on w for one function of the given type. */
  static FunctionRunner runner(Ctx c, Worker w, TypeInfo t, FunctionType type, OperationSpec spec) {
    return c.runner(w, t, t, type, spec.toByteArray(), cfg -> { });
  }

  static FunctionRunner proc(Ctx c, Worker w, TypeInfo t, OperationSpec spec) {
    return runner(c, w, t, FunctionType.PROCESS, spec);
  }

  /** Batch mode as stock Flink can send it: function type PROCESS, OperationSpec mode BATCH. */
  static FunctionRunner batch(Ctx c, Worker w, TypeInfo t, OperationSpec spec) {
    return runner(c, w, t, FunctionType.PROCESS, RunnerRows.batchMode(spec));
  }

  /**
   * The LONG values of the results, in arrival order; checks each came on "output"
   * with the timestamp of the input it echoes (tsOf(value)).
   */
  static List<Long> longValues(List<FunctionRunner.Result> results) {
    List<Long> out = new ArrayList<>(results.size());
    for (int i = 0; i < results.size(); i++) {
      FunctionRunner.Result r = results.get(i);
      check(r.tag.equals("output"), "result " + i + " came on '" + r.tag + "', not 'output'");
      RunnerRows.Output o = RunnerRows.output(LONG, r.bytes);
      check(o.value instanceof Long, "result " + i + " has value " + o.value + ", expected a LONG");
      long v = (Long) o.value;
      check(o.ts == tsOf(v), "result " + i + " (value " + v + ") has timestamp " + o.ts + ", its input had "
          + tsOf(v));
      out.add(v);
    }
    return out;
  }

  static List<Long> range(int n) {
    List<Long> l = new ArrayList<>(n);
    for (long i = 0; i < n; i++) {
      l.add(i);
    }
    return l;
  }

  static List<Long> sorted(List<Long> l) {
    List<Long> s = new ArrayList<>(l);
    s.sort(null);
    return s;
  }

  static String head(List<?> l) {
    return l.size() <= 30 ? l.toString() : l.subList(0, 30) + "... (" + l.size() + ")";
  }

  /** Every input exactly once, in any order. */
  static void expectAllOnce(int n, List<Long> got) {
    check(got.size() == n, "sent " + n + " records, got " + got.size() + " back: " + head(sorted(got)));
    check(sorted(got).equals(range(n)), "expected each of 0.." + (n - 1) + " exactly once, got (sorted) "
        + head(sorted(got)));
  }

  /** The decoded metrics of the runner's last (successful) bundle for transform tid. */
  static Map<String, Metrics.Metric> metrics(FunctionRunner r, String tid) {
    FunctionRunner.BundleRecord b = r.lastBundle();
    check(b != null && b.error == null, "no successful bundle to read metrics from");
    Map<String, Metrics.Metric> m = new HashMap<>();
    for (Metrics.Metric x : Metrics.decode(b.monitoringInfos)) {
      if (tid.equals(x.labels.get("PTRANSFORM"))) {
        check(x.decodeError == null, "metric " + x + " is undecodable");
        m.put(x.name(), x);
      }
    }
    return m;
  }

  static Metrics.Metric metric(FunctionRunner r, String tid, String name) {
    Map<String, Metrics.Metric> m = metrics(r, tid);
    Metrics.Metric x = m.get(name);
    check(x != null, "no metric " + name + " for " + tid + " in the bundle response; have " + m.keySet());
    return x;
  }

  /** A counter or gauge value of transform-0. */
  static long value(FunctionRunner r, String name) {
    Metrics.Metric x = metric(r, T0, name);
    check(x.value != null, "metric " + name + " has no value: " + x);
    return x.value;
  }

  static void expectMetric(FunctionRunner r, String name, long want) {
    long got = value(r, name);
    check(got == want, "metric " + name + " of " + T0 + " is " + got + ", expected " + want + "; all: "
        + metrics(r, T0).values());
  }

  /** A good bundle on w still works: an echo runner returns its inputs. */
  static void stillServes(Ctx c, Worker w) {
    FunctionRunner ok = proc(c, w, LONG, echo(opts("delay_ms", "5"), "{\"capacity\":10}"));
    List<In> in = longs(20);
    Ctx.expectSame(LONG, in, Ctx.bundle(ok, LONG, in));
  }

  /** The index n and timestamp ts in "input n (timestamp ts)" of an error, checked against tsOf(n). */
  static int namedInput(String err) {
    Matcher m = Pattern.compile("\\binput (\\d+) \\(timestamp (-?\\d+)\\)").matcher(err);
    check(m.find(), "the error should name the input as 'input N (timestamp T)': " + err);
    int idx = Integer.parseInt(m.group(1));
    long ts = Long.parseLong(m.group(2));
    check(ts == tsOf(idx), "the error names input " + idx + " with timestamp " + ts + ", but that input's "
        + "timestamp is " + tsOf(idx) + ": " + err);
    return idx;
  }

  static void contains(String err, String... parts) {
    for (String p : parts) {
      check(err.contains(p), "the error should contain \"" + p + "\": " + err);
    }
  }

  static long now() {
    return System.nanoTime() / 1_000_000;
  }

  // ------------------------------------------------------------ PyFlink test_async_function.py

  /** test_unordered_mode: 200 ms per call, capacity 2, 5 rows -> all 5, never more than 2 in flight. */
  static void unorderedMode(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, PAIR, echo(opts("delay_ms", "200"),
        "{\"outputMode\":\"UNORDERED\",\"timeoutMs\":5000,\"capacity\":2}"));
    List<In> in = pairs(5);
    long t0 = now();
    List<FunctionRunner.Result> res = Ctx.bundle(r, PAIR, in);
    long took = now() - t0;
    List<String> got = new ArrayList<>();
    for (FunctionRunner.Result x : res) {
      RunnerRows.Output o = RunnerRows.output(PAIR, x.bytes);
      fnworker.harness.types.Row row = (fnworker.harness.types.Row) o.value;
      int v1 = (Integer) row.get(0);
      check(o.ts == tsOf(v1 - 1), "row " + row + " has timestamp " + o.ts + ", its input had " + tsOf(v1 - 1));
      got.add(v1 + "," + row.get(1));
    }
    got.sort(null);
    check(got.equals(List.of("1,1", "2,2", "3,3", "4,4", "5,5")), "expected (1,1)..(5,5) in any order, got " + got);
    expectMetric(r, "inflightHighWater", 2);
    expectMetric(r, "asyncCalls", 5);
    // 5 calls of 200 ms, 2 at a time: three rounds.
    check(took >= 3 * 200 - 30, "5 calls of 200 ms with capacity 2 took " + took + " ms; at least 3 rounds (600 ms)"
        + " were expected, so more than 2 ran at once");
    c.note(took + " ms");
  }

  /** UNORDERED emits as calls complete: 100 calls with 0..60 ms jitter do not come back in input order. */
  static void unorderedReorders(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("jitter_ms", "60", "seed", "7"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":100}"));
    List<Long> got = longValues(Ctx.bundle(r, LONG, longs(100)));
    expectAllOnce(100, got);
    check(!got.equals(range(100)), "UNORDERED with 0..60 ms jitter returned all 100 results in input order: "
        + "results should leave as their calls complete");
  }

  /** test_ordered_mode: random per-call delay, ORDERED -> exactly input order. */
  static void orderedMode(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("delay_ms", "10", "jitter_ms", "80", "seed", "3"),
        "{\"outputMode\":\"ORDERED\",\"timeoutMs\":5000,\"capacity\":50}"));
    for (int round = 0; round < 2; round++) {
      List<In> in = longs(60);
      Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    }
    expectMetric(r, "asyncCalls", 60);
  }

  /** test_watermark: every element carries a higher watermark, UNORDERED with jitter -> input order. */
  static void watermark(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("jitter_ms", "60", "seed", "11"),
        "{\"outputMode\":\"UNORDERED\",\"timeoutMs\":5000,\"capacity\":100}"));
    List<In> in = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      in.add(new In(tsOf(i), 100L * i, (long) i));
    }
    List<Long> got = longValues(Ctx.bundle(r, LONG, in));
    check(got.equals(range(40)), "each element arrived with a higher watermark, so UNORDERED must keep input "
        + "order; got " + head(got));
  }

  /** test_raise_exception_in_async_invoke: the bundle fails naming operation, transform, input and message. */
  static void raiseInInvoke(Ctx c) throws Exception {
    Worker w = c.worker();
    // Every call fails, at once.
    FunctionRunner r = proc(c, w, LONG, echo(opts("fail_every", "1", "fail_message", "failed the first time xyz"),
        "{\"timeoutMs\":5000}"));
    Ctx.send(r, LONG, longs(5));
    String err = Ctx.expectBundleError(r);
    contains(err, "failed the first time xyz", "echo", T0);
    check(namedInput(err) == 0, "the first input's call failed first, the error names another: " + err);
    // The third invocation fails, after 20 ms; inputs 0 and 1 succeed.
    FunctionRunner r2 = proc(c, w, LONG, echo(opts("fail_every", "3", "delay_ms", "20", "fail_message", "boom 3"),
        "{\"outputMode\":\"UNORDERED\",\"timeoutMs\":5000}"));
    Ctx.send(r2, LONG, longs(5));
    String err2 = Ctx.expectBundleError(r2);
    contains(err2, "boom 3", "'echo'", "'" + T0 + "'");
    check(namedInput(err2) == 2, "the third invocation (input 2) failed, the error names another: " + err2);
    stillServes(c, w);
  }

  /** hang + TIMEOUT_FAIL: the bundle fails saying the call timed out, naming the input. */
  static void timeoutFail(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("hang", "true"),
        "{\"timeoutMs\":150,\"onTimeout\":\"TIMEOUT_FAIL\"}"));
    Ctx.send(r, LONG, longs(3));
    long t0 = now();
    String err = Ctx.expectBundleError(r);
    long took = now() - t0;
    String low = err.toLowerCase(Locale.ROOT);
    check(low.contains("timed out") || low.contains("timeout"), "the error should say the call timed out: " + err);
    contains(err, "150 ms", "echo", T0);
    namedInput(err);
    check(took >= 140, "the bundle failed after " + took + " ms, before the 150 ms timeout");
    stillServes(c, w);
  }

  /** test_processing_timeout: hang + TIMEOUT_OPERATION (echo's hook returns the input) -> outputs == inputs. */
  static void processingTimeout(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("hang", "true", "timeout_result", "input"),
        "{\"timeoutMs\":150,\"onTimeout\":\"TIMEOUT_OPERATION\"}"));
    List<In> in = longs(5);
    Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    expectMetric(r, "timeouts", 5);
    expectMetric(r, "emptyResults", 0);
    expectMetric(r, "recordsOut", 5);
    // timeout_result=empty: the hook returns nothing.
    FunctionRunner e = proc(c, w, LONG, echo(opts("hang", "true", "timeout_result", "empty"),
        "{\"timeoutMs\":150,\"onTimeout\":\"TIMEOUT_OPERATION\"}"));
    List<FunctionRunner.Result> res = Ctx.bundle(e, LONG, longs(4));
    check(res.isEmpty(), "timeout_result=empty returned " + res.size() + " outputs");
    expectMetric(e, "timeouts", 4);
    expectMetric(e, "emptyResults", 4);
  }

  /** hang + TIMEOUT_EMPTY: no outputs, every input counted as timed out and empty. */
  static void timeoutEmpty(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("hang", "true"),
        "{\"timeoutMs\":120,\"onTimeout\":\"TIMEOUT_EMPTY\",\"outputMode\":\"UNORDERED\"}"));
    List<FunctionRunner.Result> res = Ctx.bundle(r, LONG, longs(6));
    check(res.isEmpty(), "TIMEOUT_EMPTY returned " + res.size() + " outputs");
    expectMetric(r, "timeouts", 6);
    expectMetric(r, "emptyResults", 6);
    expectMetric(r, "recordsIn", 6);
    expectMetric(r, "recordsOut", 0);
    expectMetric(r, "failures", 0);
  }

  static String fixedRetry(int maxAttempts, int timeoutMs) {
    return "{\"outputMode\":\"UNORDERED\",\"timeoutMs\":" + timeoutMs + ",\"retry\":{\"kind\":\"FIXED_DELAY\","
        + "\"maxAttempts\":" + maxAttempts + ",\"delayMs\":20,\"retryOnError\":true,\"retryOnEmptyResult\":true}}";
  }

  /**
   * test_async_with_retry: attempt 1 errors, attempt 2 is empty, attempt 3 succeeds;
   * FIXED_DELAY(5, 20 ms) on error and empty -> every result, exactly 2 retries each.
   */
  static void withRetry(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = proc(c, w, LONG, echo(opts("fail_attempts", "1", "empty_attempts", "2"), fixedRetry(5, 10_000)));
    int n = 8;
    expectAllOnce(n, longValues(Ctx.bundle(r, LONG, longs(n))));
    expectMetric(r, "retries", 2L * n);
    expectMetric(r, "asyncCalls", n);
    expectMetric(r, "failures", 0);
    expectMetric(r, "emptyResults", 0);
    // Two backoffs of 20 ms are inside every call's duration.
    Metrics.Metric d = metric(r, T0, "asyncCallDurationMs");
    check(d.count != null && d.count == n && d.min != null && d.min >= 38, "asyncCallDurationMs should count " + n
        + " calls of at least 40 ms (two 20 ms backoffs): " + d);
    // max_attempts 2 is the boundary: attempts 1 and 2 may be retried, so attempt 3 happens.
    FunctionRunner r2 = proc(c, w, LONG,
        echo(opts("fail_attempts", "1", "empty_attempts", "2"), fixedRetry(2, 10_000)));
    expectAllOnce(n, longValues(Ctx.bundle(r2, LONG, longs(n))));
    expectMetric(r2, "retries", 2L * n);
  }

  /**
   * Attempts exhausted. PyFlink's can_retry(n) = n <= max_attempts: with max_attempts 1
   * attempt 1 (error) is retried, attempt 2 (empty) is final -> an empty result per input,
   * no failure. When attempt 2 errors too (fail_attempts 2), the bundle fails with the
   * operation's message.
   */
  static void retryExhausted(Ctx c) throws Exception {
    Worker w = c.worker();
    int n = 5;
    FunctionRunner r = proc(c, w, LONG, echo(opts("fail_attempts", "1", "empty_attempts", "2"), fixedRetry(1, 10_000)));
    List<FunctionRunner.Result> res = Ctx.bundle(r, LONG, longs(n));
    check(res.isEmpty(), "max_attempts 1: attempt 2 (empty) is the last, yet " + res.size() + " results came back");
    expectMetric(r, "retries", n);
    expectMetric(r, "emptyResults", n);
    expectMetric(r, "failures", 0);
    FunctionRunner f = proc(c, w, LONG, echo(opts("fail_attempts", "2", "fail_message", "still failing"),
        fixedRetry(1, 10_000)));
    Ctx.send(f, LONG, longs(n));
    String err = Ctx.expectBundleError(f);
    contains(err, "still failing", "echo", T0);
    namedInput(err);
    // The timeout bounds the retries: attempts never succeed, 150 ms timeout, TIMEOUT_EMPTY.
    FunctionRunner t = proc(c, w, LONG, echo(opts("empty_attempts", "1000000"),
        "{\"timeoutMs\":150,\"onTimeout\":\"TIMEOUT_EMPTY\",\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":1000,"
            + "\"delayMs\":20,\"retryOnEmptyResult\":true}}"));
    List<FunctionRunner.Result> tr = Ctx.bundle(t, LONG, longs(3));
    check(tr.isEmpty(), "always-empty calls returned " + tr.size() + " results");
    expectMetric(t, "timeouts", 3);
    long retries = value(t, "retries");
    check(retries >= 3 && retries <= 3L * 9, "150 ms of 20 ms backoffs allow at most ~7 retries per call, saw "
        + retries + " for 3 calls");
    stillServes(c, w);
  }

  /** EXPONENTIAL_BACKOFF 20 ms x2: the same flaky calls succeed, and the backoffs 20 + 40 ms are inside each call. */
  static void retryExponential(Ctx c) throws Exception {
    Worker w = c.worker();
    int n = 6;
    FunctionRunner r = proc(c, w, LONG, echo(opts("fail_attempts", "1", "empty_attempts", "2"),
        "{\"outputMode\":\"ORDERED\",\"timeoutMs\":10000,\"retry\":{\"kind\":\"EXPONENTIAL_BACKOFF\",\"maxAttempts\":5,"
            + "\"delayMs\":20,\"maxDelayMs\":1000,\"multiplier\":2.0,\"retryOnError\":true,"
            + "\"retryOnEmptyResult\":true}}"));
    List<In> in = longs(n);
    Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    expectMetric(r, "retries", 2L * n);
    Metrics.Metric d = metric(r, T0, "asyncCallDurationMs");
    check(d.min != null && d.min >= 58, "asyncCallDurationMs should be at least 60 ms (20 ms then 40 ms of backoff): "
        + d);
  }

  // ------------------------------------------------------------ PyFlink test_async_batch_function.py

  static String batchJson(int size, String extra) {
    return "{\"batchSize\":" + size + ",\"timeoutMs\":5000" + (extra.isEmpty() ? "" : "," + extra) + "}";
  }

  /** test_basic_batch_execution: 4 rows, batch 2 -> all 4, in two batches. */
  static void batchBasic(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("delay_ms", "20"), batchJson(2, "\"outputMode\":\"UNORDERED\"")));
    expectAllOnce(4, longValues(Ctx.bundle(r, LONG, longs(4))));
    expectMetric(r, "batches", 2);
  }

  /** test_batch_size_triggering: 5 rows, batch 2 -> 5 results; batches 2 + 2 + 1. */
  static void batchSizeTriggering(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("delay_ms", "10"), batchJson(2, "\"outputMode\":\"UNORDERED\"")));
    expectAllOnce(5, longValues(Ctx.bundle(r, LONG, longs(5))));
    expectMetric(r, "batches", 3);
    Metrics.Metric d = metric(r, T0, "batchSize");
    check(d.count == 3 && d.sum == 5 && d.min == 1 && d.max == 2, "batchSize should be 2, 2, 1: " + d);
  }

  /** test_batch_timeout_triggering: 1 row, batch 10, batch_timeout 100 ms -> the result while the bundle is open. */
  static void batchTimeoutTriggering(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts(), batchJson(10, "\"batchTimeoutMs\":100")));
    Ctx.send(r, LONG, longs(1));
    r.sendBuffered();
    long t0 = now();
    FunctionRunner.Result x = r.takeResult(c.ms(2000));
    long took = now() - t0;
    check(x != null, "no result within 2 s of sending the only element: the 100 ms batch timeout should have "
        + "flushed the partial batch while the bundle is open");
    check(took >= 80, "the result came " + took + " ms after the element, before the 100 ms batch timeout");
    check(took <= 100 + c.ms(400), "the result came " + took + " ms after the element; the batch timeout was 100 ms");
    check(longValues(List.of(x)).equals(List.of(0L)), "wrong result");
    r.flush();
    check(Ctx.drain(r).isEmpty(), "more results after the bundle end");
    expectMetric(r, "batches", 1);
    c.note("result after " + took + " ms");
  }

  /** test_exception_propagation: the batch's failure names its inputs and carries the message. */
  static void batchException(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("fail_every", "1", "fail_message", "Test batch failure"),
        batchJson(2, "")));
    Ctx.send(r, LONG, longs(4));
    String err = Ctx.expectBundleError(r);
    contains(err, "Test batch failure", "echo", T0, "inputs 0..1", "timestamps " + tsOf(0) + ", " + tsOf(1));
    stillServes(c, w);
  }

  /** test_timeout_handling: hanging batches, TIMEOUT_OPERATION -> the hook's results (the inputs). */
  static void batchTimeoutHandling(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("hang", "true"),
        "{\"batchSize\":2,\"timeoutMs\":150,\"onTimeout\":\"TIMEOUT_OPERATION\"}"));
    List<In> in = longs(2);
    Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    expectMetric(r, "timeouts", 1);
    expectMetric(r, "batches", 1);
    // TIMEOUT_FAIL names every input of the batch.
    FunctionRunner f = batch(c, w, LONG, echo(opts("hang", "true"), "{\"batchSize\":3,\"timeoutMs\":150}"));
    Ctx.send(f, LONG, longs(3));
    String err = Ctx.expectBundleError(f);
    contains(err, "150 ms", "inputs 0..2", T0);
  }

  /** test_ordered_wait_batch: ORDERED batches with jitter -> exactly input order. */
  static void batchOrdered(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("jitter_ms", "60", "seed", "5"),
        batchJson(3, "\"outputMode\":\"ORDERED\",\"capacity\":100")));
    List<In> in = longs(40);
    Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    expectMetric(r, "batches", 14);
  }

  /** test_validation_negative_batch_size. */
  static void batchNegativeSize(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts(), batchJson(-1, "")));
    Ctx.send(r, LONG, longs(2));
    contains(Ctx.expectBundleError(r), "Batch size must be positive, got: -1");
    stillServes(c, w);
  }

  /** test_end_of_input_flush: 5 rows, batch 3 -> the partial batch goes at bundle end. */
  static void batchEndOfInput(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("delay_ms", "10"), batchJson(3, "")));
    List<In> in = longs(5);
    Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    Metrics.Metric d = metric(r, T0, "batchSize");
    check(d.count == 2 && d.sum == 5 && d.max == 3 && d.min == 2, "batchSize should be 3, 2: " + d);
  }

  /** test_large_batch_with_multiple_outputs: 2 rows, batch 2. */
  static void batchLarge(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, PAIR, echo(opts("delay_ms", "10"), batchJson(2, "")));
    List<In> in = pairs(2);
    Ctx.expectSame(PAIR, in, Ctx.bundle(r, PAIR, in));
    expectMetric(r, "batches", 1);
  }

  /** short_result 2 of batch 4: inputs 0, 1 of each batch get results, the rest are counted empty. */
  static void batchShortResult(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = batch(c, w, LONG, echo(opts("short_result", "2"), batchJson(4, "\"outputMode\":\"ORDERED\"")));
    List<Long> got = longValues(Ctx.bundle(r, LONG, longs(8)));
    check(got.equals(List.of(0L, 1L, 4L, 5L)), "with short_result 2 of batches 0..3 and 4..7, expected [0, 1, 4, 5],"
        + " got " + got);
    expectMetric(r, "emptyResults", 4);
    expectMetric(r, "recordsOut", 4);
    expectMetric(r, "batches", 2);
  }
  /**
   * Function type ASYNC_BATCH (7) still batches: with mode unset and with mode BATCH, 10 inputs in
   * batches of 4 -> 3 batches, every input once. The same spec under PROCESS without a mode is
   * per element and rejects batch_size.
   */
  static void batchFunctionType7(Ctx c) throws Exception {
    Worker w = c.worker();
    OperationSpec spec = echo(opts("delay_ms", "10"), batchJson(4, "\"outputMode\":\"UNORDERED\""));
    for (OperationSpec s : List.of(spec, RunnerRows.batchMode(spec))) {
      FunctionRunner r = runner(c, w, LONG, FunctionType.ASYNC_BATCH, s);
      expectAllOnce(10, longValues(Ctx.bundle(r, LONG, longs(10))));
      expectMetric(r, "batches", 3);
      expectMetric(r, "asyncCalls", 3);
    }
    FunctionRunner p = proc(c, w, LONG, spec);
    Ctx.send(p, LONG, longs(2));
    contains(Ctx.expectBundleError(p), "batch_size (4) is a batch-mode setting", T0);
    stillServes(c, w);
  }

  /** ASYNC_BATCH with an explicit PER_ELEMENT spec is a contradiction, reported naming both. */
  static void batchFunctionType7Contradiction(Ctx c) throws Exception {
    Worker w = c.worker();
    OperationSpec spec = echo(opts(), "{\"mode\":\"PER_ELEMENT\",\"timeoutMs\":1000}");
    FunctionRunner r = runner(c, w, LONG, FunctionType.ASYNC_BATCH, spec);
    Ctx.send(r, LONG, longs(2));
    contains(Ctx.expectBundleError(r), "'" + T0 + "'", "function type ASYNC_BATCH (7)", "mode PER_ELEMENT",
        "set mode BATCH");
    stillServes(c, w);
  }


  // ------------------------------------------------------------ fnworker's own

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
