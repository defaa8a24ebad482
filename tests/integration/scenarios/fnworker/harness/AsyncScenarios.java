// Integration scenarios for the async engine (docs/operations.md, "Async semantics"),
// driven through the real worker with the built-in `echo` operation. This
// file lists them (in run order) and holds the helpers they share: inputs
// whose timestamps identify them, echo specs, runners in per-element and
// batch mode, and metric readers. The scenarios themselves live by theme:
//   AsyncFunctionScenarios  PyFlink's test_async_function.py, per element
//   AsyncBatchScenarios     PyFlink's test_async_batch_function.py, batches
//   AsyncEngineScenarios    fnworker's own: timers, watermark segments,
//                           capacity, late completions, validation, chains
// Batch mode is selected the way a released Flink can: function type PROCESS
// with OperationSpec mode BATCH; two scenarios cover function type
// ASYNC_BATCH (7). Names start with "async_" (run them alone with the filter
// async_). Timing lower bounds are never scaled (a slow run only makes things
// later); upper bounds and waits go through Ctx.ms() so valgrind runs pass.
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
    s.add(new Scenario("async_unordered_mode", AsyncFunctionScenarios::unorderedMode));
    s.add(new Scenario("async_unordered_really_reorders", AsyncFunctionScenarios::unorderedReorders));
    s.add(new Scenario("async_ordered_mode", AsyncFunctionScenarios::orderedMode));
    s.add(new Scenario("async_watermark", AsyncFunctionScenarios::watermark));
    s.add(new Scenario("async_raise_exception_in_async_invoke", AsyncFunctionScenarios::raiseInInvoke));
    s.add(new Scenario("async_timeout_fail", AsyncFunctionScenarios::timeoutFail));
    s.add(new Scenario("async_processing_timeout", AsyncFunctionScenarios::processingTimeout));
    s.add(new Scenario("async_timeout_empty", AsyncFunctionScenarios::timeoutEmpty));
    s.add(new Scenario("async_with_retry", AsyncFunctionScenarios::withRetry));
    s.add(new Scenario("async_retry_exhausted", AsyncFunctionScenarios::retryExhausted));
    s.add(new Scenario("async_retry_exponential_backoff", AsyncFunctionScenarios::retryExponential));
    // PyFlink test_async_batch_function.py
    s.add(new Scenario("async_batch_basic_execution", AsyncBatchScenarios::batchBasic));
    s.add(new Scenario("async_batch_size_triggering", AsyncBatchScenarios::batchSizeTriggering));
    s.add(new Scenario("async_batch_timeout_triggering", AsyncBatchScenarios::batchTimeoutTriggering));
    s.add(new Scenario("async_batch_exception_propagation", AsyncBatchScenarios::batchException));
    s.add(new Scenario("async_batch_timeout_handling", AsyncBatchScenarios::batchTimeoutHandling));
    s.add(new Scenario("async_batch_ordered_wait", AsyncBatchScenarios::batchOrdered));
    s.add(new Scenario("async_batch_validation_negative_batch_size", AsyncBatchScenarios::batchNegativeSize));
    s.add(new Scenario("async_batch_end_of_input_flush", AsyncBatchScenarios::batchEndOfInput));
    s.add(new Scenario("async_batch_large_batch", AsyncBatchScenarios::batchLarge));
    s.add(new Scenario("async_batch_short_result", AsyncBatchScenarios::batchShortResult));
    // function type ASYNC_BATCH (7), from an unreleased PyFlink
    s.add(new Scenario("async_batch_function_type_7", AsyncBatchScenarios::batchFunctionType7));
    s.add(new Scenario("async_batch_function_type_7_per_element_contradiction",
        AsyncBatchScenarios::batchFunctionType7Contradiction));
    // fnworker's own
    s.add(new Scenario("async_stale_batch_timer", AsyncEngineScenarios::staleBatchTimer));
    s.add(new Scenario("async_watermark_segments_unordered_jitter", AsyncEngineScenarios::watermarkSegments));
    s.add(new Scenario("async_capacity_respected", AsyncEngineScenarios::capacityRespected));
    s.add(new Scenario("async_batch_capacity_respected", AsyncEngineScenarios::batchCapacityRespected));
    s.add(new Scenario("async_late_completion_ignored", AsyncEngineScenarios::lateCompletionIgnored));
    s.add(new Scenario("async_drain_time", AsyncEngineScenarios::drainTime));
    s.add(new Scenario("async_unordered_100k_exactly_once", AsyncEngineScenarios::unordered100k));
    s.add(new Scenario("async_validation_messages", AsyncEngineScenarios::validationMessages));
    s.add(new Scenario("async_concurrency_is_real", AsyncEngineScenarios::concurrencyIsReal));
    s.add(new Scenario("async_repeat", AsyncEngineScenarios::repeat));
    s.add(new Scenario("async_chain", AsyncEngineScenarios::chain));
    s.add(new Scenario("async_chain_failing_middle_step", AsyncEngineScenarios::chainFailingMiddle));
    s.add(new Scenario("async_metrics_reported", AsyncEngineScenarios::metricsReported));
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

  /** An OperationSpec JSON for batches of size, with a 5 s call timeout and any extra fields. */
  static String batchJson(int size, String extra) {
    return "{\"batchSize\":" + size + ",\"timeoutMs\":5000" + (extra.isEmpty() ? "" : "," + extra) + "}";
  }
}
