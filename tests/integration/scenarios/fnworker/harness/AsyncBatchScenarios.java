// Async scenarios from PyFlink's test_async_batch_function.py: batches
// closed by size, by batch timeout and by bundle end, a failing batch, batch
// timeouts, ORDERED batches, a short result list, the negative batch size
// check, and function type ASYNC_BATCH (7) from an unreleased PyFlink,
// including its contradiction with an explicit PER_ELEMENT spec.
// Listed in AsyncScenarios, whose helpers they use.
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.*;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.proto.v1.OperationProto.OperationSpec;
import java.util.List;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class AsyncBatchScenarios {
  private AsyncBatchScenarios() {}

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
}
