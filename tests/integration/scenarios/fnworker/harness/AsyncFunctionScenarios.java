// Async scenarios from PyFlink's test_async_function.py, one call per
// element: UNORDERED and ORDERED output, watermarks holding back later
// results, an exception raised by the call, the three timeout outcomes
// (fail, the operation's timeout hook, empty) and retries (fixed delay,
// exhausted, exponential backoff), each translated to `echo` options.
// Listed in AsyncScenarios, whose helpers they use.
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.*;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

final class AsyncFunctionScenarios {
  private AsyncFunctionScenarios() {}

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
}
