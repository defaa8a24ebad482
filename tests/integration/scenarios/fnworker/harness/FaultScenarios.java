// Fault scenarios: the runner or a service misbehaves while a bundle is in
// flight, through the real binary. The Data stream is reset by the runner
// mid-bundle and between bundles (the bundle fails naming the stream; later
// bundles reconnect and are exact); the runner stops reading the worker's
// output mid-bundle (memory stays bounded, every output arrives once when it
// reads again); an operation that never answers, bundle after bundle, with
// TIMEOUT_EMPTY (counted empty results, no memory growth); a service killed
// mid-bundle and not restarted (every input accounted for, no hang, the next
// bundle after it is back is exact). Names start with fault_.
package fnworker.harness;

import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class FaultScenarios {
  private FaultScenarios() {}

  static final TypeInfo STR = TypeInfo.parse("STRING");
  static final TypeInfo LONG = AsyncScenarios.LONG;

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("fault_data_stream_reset_mid_input", FaultScenarios::dataResetMidInput));
    s.add(new Scenario("fault_data_stream_reset_mid_output", FaultScenarios::dataResetMidOutput));
    s.add(new Scenario("fault_data_stream_reset_between_bundles", FaultScenarios::dataResetBetween));
    s.add(new Scenario("fault_output_not_read_memory_bounded", FaultScenarios::outputNotRead));
    s.add(new Scenario("fault_hung_operation_timeout_empty_bounded", FaultScenarios::hungOperation));
    s.add(new Scenario("fault_http_server_killed_not_restarted", FaultScenarios::httpKilledNotRestarted));
    s.add(new Scenario("fault_redis_server_killed_not_restarted", FaultScenarios::redisKilledNotRestarted));
    s.add(new Scenario("fault_kserve_server_killed_not_restarted", FaultScenarios::kserveKilledNotRestarted));
    return s;
  }

  // ------------------------------------------------------------ helpers

  static final String RESET = "harness: Data stream reset";

  /** The worker's error names the Data stream, the endpoint and the status the runner gave. */
  static void namesDataStream(Worker w, String err) {
    String url = w.servers.dataEndpoint().getUrl();
    check(err.contains("data stream to " + url) && err.contains(RESET),
        "the bundle error should name the data stream to " + url + " and its status (" + RESET + "): " + err);
  }

  /** Waits up to ms for the worker's output to match re (after from characters). */
  static boolean awaitOutput(Worker w, int from, String re, long ms) throws InterruptedException {
    Pattern p = Pattern.compile(re);
    for (long end = System.currentTimeMillis() + ms; System.currentTimeMillis() < end; Thread.sleep(20)) {
      String out = w.process().output();
      if (out.length() > from && p.matcher(out.substring(from)).find()) {
        return true;
      }
    }
    return false;
  }

  /** One bundle of n LONGs on r (an echo), every output right, each once (order free). */
  static void exactBundle(Ctx c, FunctionRunner r, int n, String when) throws Exception {
    List<In> in = AsyncScenarios.longs(n);
    List<FunctionRunner.Result> got = DataPlaneScenarios.within(c, 60_000, "a bundle " + when,
        () -> Ctx.bundle(r, LONG, in));
    AsyncScenarios.expectAllOnce(n, AsyncScenarios.longValues(got));
  }

  // ------------------------------------------------------------ Data stream reset

  /**
   * The runner resets the Data stream while the worker still reads a bundle's input
   * (no is_last yet): the bundle fails naming the data stream and its status; the next
   * bundle on the same worker opens a fresh Data stream and every output is right.
   */
  static void dataResetMidInput(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = AsyncScenarios.proc(c, w, LONG, AsyncScenarios.echo(AsyncScenarios.opts("delay_ms", "5"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":20}"));
    exactBundle(c, r, 200, "before the reset");
    Ctx.send(r, LONG, AsyncScenarios.longs(100));
    r.sendBuffered();
    check(r.takeResult(c.ms(10_000)) != null, "no output within 10 s of the input");
    w.servers.data.resetStreams(RESET);
    String err = DataPlaneScenarios.within(c, 30_000, "the failure of the bundle whose Data stream was reset",
        r::awaitBundleFailure);
    namesDataStream(w, err);
    Ctx.drain(r);
    exactBundle(c, r, 200, "after the reset");
    check(w.servers.data.clientCount() == 2, "expected a second Data stream after the reset, saw "
        + w.servers.data.clientCount() + " in all");
    exactBundle(c, r, 200, "on the reopened stream");
    check(w.servers.data.clientCount() == 2, "a healthy reopened stream should be kept, saw "
        + w.servers.data.clientCount() + " streams in all");
    c.note("bundle error: " + err);
  }

  /**
   * All input and is_last are in; the worker waits for slow calls and sends their
   * outputs when the runner resets the Data stream: the bundle fails naming it; the
   * next bundle reconnects and is exact.
   */
  static void dataResetMidOutput(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = AsyncScenarios.proc(c, w, LONG, AsyncScenarios.echo(AsyncScenarios.opts("delay_ms", "100"),
        "{\"outputMode\":\"ORDERED\",\"capacity\":10}"));
    exactBundle(c, r, 50, "before the reset");
    List<In> in = AsyncScenarios.longs(500);
    Thread flusher = new Thread(() -> {
      try {
        Ctx.bundle(r, LONG, in);
      } catch (RuntimeException e) {
        // expected: the bundle fails
      }
    }, "flush");
    flusher.setDaemon(true);
    flusher.start();
    check(r.takeResult(c.ms(10_000)) != null, "no output within 10 s of the input");
    w.servers.data.resetStreams(RESET);
    flusher.join(c.ms(30_000));
    check(!flusher.isAlive(), "the bundle whose Data stream was reset did not end within 30 s");
    FunctionRunner.BundleRecord b = r.lastBundle();
    check(b != null && b.elements == 500 && b.error != null, "the bundle should have failed: " + b);
    namesDataStream(w, b.error);
    Ctx.drain(r);
    exactBundle(c, r, 50, "after the reset");
    check(w.servers.data.clientCount() == 2, "expected a second Data stream after the reset, saw "
        + w.servers.data.clientCount() + " in all");
    c.note("bundle error: " + b.error);
  }

  /**
   * The runner resets the Data stream between bundles: the worker notices (a log line
   * naming the stream), and the next bundle reopens it and is exact. Twice.
   */
  static void dataResetBetween(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = AsyncScenarios.proc(c, w, LONG, AsyncScenarios.echo(AsyncScenarios.opts(),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":50}"));
    exactBundle(c, r, 500, "before the reset");
    String url = Pattern.quote(w.servers.dataEndpoint().getUrl());
    for (int k = 1; k <= 2; k++) {
      int from = w.process().output().length();
      w.servers.data.resetStreams(RESET);
      check(awaitOutput(w, from, "data stream to " + url + " closed \\(status 14: " + RESET, c.ms(10_000)),
          "the worker did not log the end of its Data stream within 10 s (reset " + k + ")");
      exactBundle(c, r, 500, "after reset " + k);
      check(w.servers.data.clientCount() == k + 1, "expected " + (k + 1) + " Data streams after reset " + k
          + ", saw " + w.servers.data.clientCount());
      check(awaitOutput(w, from, "reopening the data stream to " + url, 1000),
          "the worker did not log that it reopened its Data stream (reset " + k + ")");
    }
  }

  // ------------------------------------------------------------ output not read

  static final int BIG_N = 60_000;
  static final int BIG_LEN = 1000;
  static final long BIG_LIMIT_MB = 32;

  static String bigValue(int i) {
    StringBuilder sb = new StringBuilder(BIG_LEN);
    sb.append(String.format("%08d:", i));
    while (sb.length() < BIG_LEN) {
      sb.append((char) ('a' + (i + sb.length()) % 26));
    }
    return sb.toString();
  }

  /**
   * The runner stops reading the worker's output mid-bundle while 60 MB of input
   * (60,000 x 1 KB, identity) waits to go in: the worker stops taking input instead
   * of buffering output, so its RSS stays within base + 32 MB (buffering it all would
   * take over 60 MB); when the runner reads again, every output arrives exactly
   * once, byte-identical, and the bundle completes.
   */
  static void outputNotRead(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = c.runner(w, STR, STR, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.flushTimeoutMs = c.ms(120_000));
    List<In> warm = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      warm.add(new In(i, bigValue(i)));
    }
    Ctx.expectSame(STR, warm, Ctx.bundle(r, STR, warm));
    long base = w.rssKb();
    AtomicLong sent = new AtomicLong();
    long t0 = System.nanoTime();
    w.servers.data.pauseReading();
    Thread sender = new Thread(() -> {
      try {
        for (int i = 0; i < BIG_N; i++) {
          r.process(RunnerRows.input(STR, i, Long.MIN_VALUE, bigValue(i)));
          sent.incrementAndGet();
        }
        r.flush();
      } catch (RuntimeException e) {
        Log.warn("sender: " + e);
      }
    }, "big-sender");
    sender.setDaemon(true);
    sender.start();
    long peak = base;
    long last = -1;
    long stillSince = System.currentTimeMillis();
    for (long end = System.currentTimeMillis() + c.ms(60_000); System.currentTimeMillis() < end; ) {
      Thread.sleep(50);
      peak = Math.max(peak, w.rssKb());
      long now = sent.get();
      if (now != last) {
        last = now;
        stillSince = System.currentTimeMillis();
      } else if (System.currentTimeMillis() - stillSince > 2000) {
        break;
      }
      check(now < BIG_N, "the worker took all " + BIG_N + " inputs while its output was not read: it buffers "
          + "output (VmRSS " + base / 1024 + " -> " + peak / 1024 + " MB)");
    }
    check(sent.get() < BIG_N / 2, "the runner sent " + sent.get() + " of " + BIG_N + " inputs while the "
        + "worker's output was not read (still sending after 60 s)");
    long stalledAt = sent.get();
    DataPlaneScenarios.checkRss(c, w, "output not read for " + stalledAt + " inputs sent", base, peak,
        BIG_LIMIT_MB);
    long t1 = System.nanoTime();
    w.servers.data.resumeReading();
    BitSet seen = new BitSet(BIG_N);
    long got = 0;
    long deadline = System.currentTimeMillis() + c.ms(120_000);
    while (got < BIG_N && System.currentTimeMillis() < deadline) {
      FunctionRunner.Result x = r.takeResult(500);
      if (x == null) {
        check(sender.isAlive() || r.pendingResults() > 0, "the bundle ended with " + got + " of " + BIG_N
            + " outputs: " + r.lastBundle().error);
        continue;
      }
      RunnerRows.Output o = RunnerRows.output(STR, x.bytes);
      int i = Integer.parseInt(((String) o.value).substring(0, 8));
      check(!seen.get(i), "output " + i + " arrived twice");
      check(o.ts == i && o.value.equals(bigValue(i)), "output " + i + " differs from its input");
      seen.set(i);
      got++;
    }
    sender.join(c.ms(30_000));
    check(!sender.isAlive(), "the bundle did not complete after the runner read again");
    FunctionRunner.BundleRecord b = r.lastBundle();
    check(b.error == null && b.elements == BIG_N, "the bundle failed: " + b.error);
    check(got == BIG_N && seen.cardinality() == BIG_N && r.pendingResults() == 0, "expected each of " + BIG_N
        + " outputs once, got " + got + " (" + seen.cardinality() + " distinct, " + r.pendingResults() + " more)");
    c.note("stalled after " + stalledAt + " inputs; paused " + (t1 - t0) / 1_000_000 + " ms, then "
        + (System.nanoTime() - t1) / 1_000_000 + " ms to the end");
  }

  // ------------------------------------------------------------ hung operation

  /**
   * echo with hang=true never completes a call; TIMEOUT_EMPTY after 10 ms. 30 bundles
   * of 1,000 x 1 KB: each completes with 1,000 counted timeouts and empty results,
   * and the worker's RSS after bundle 30 is within 8 MB of that after bundle 5 (the
   * timed-out calls are given up, not kept with their inputs: 25,000 of those would
   * hold over 25 MB).
   */
  static void hungOperation(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = AsyncScenarios.proc(c, w, STR, AsyncScenarios.echo(AsyncScenarios.opts("hang", "true"),
        "{\"outputMode\":\"UNORDERED\",\"capacity\":200,\"timeoutMs\":10,\"onTimeout\":\"TIMEOUT_EMPTY\"}"));
    List<In> in = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      in.add(new In(i, bigValue(i)));
    }
    long after5 = -1;
    for (int b = 1; b <= 30; b++) {
      List<FunctionRunner.Result> got = Ctx.bundle(r, STR, in);
      check(got.isEmpty(), "bundle " + b + ": " + got.size() + " outputs from an operation that never answers");
      AsyncScenarios.expectMetric(r, "timeouts", 1000);
      AsyncScenarios.expectMetric(r, "emptyResults", 1000);
      if (b == 5) {
        after5 = w.rssKb();
      }
    }
    DataPlaneScenarios.checkRss(c, w, "bundles 5 -> 30 of hung calls", after5, w.rssKb(), 8);
  }

  // ------------------------------------------------------------ services killed, not restarted

  /** Outputs (each checked once by the caller) + counted empty results == n, and some timed out. */
  static void accounted(FunctionRunner r, int n, int outputs, String what) {
    long empty = AsyncScenarios.value(r, "emptyResults");
    check(outputs + empty == n, what + ": " + outputs + " outputs + " + empty + " counted empty results != " + n
        + " inputs");
    check(AsyncScenarios.value(r, "timeouts") > 0, what + ": no call timed out although the server was gone");
  }

  /**
   * After the server is back: probe bundles of the first 20 inputs on the same runner
   * until one has no timeout (the client's reconnect backoff may cost the first ones),
   * at most 20 s; then full bundles of in until one has no timeout (at most 3: a
   * loaded machine may still delay an answer past the timeout). Every bundle is fully
   * accounted; outputsOnce checks results (each once, right) and counts them. Returns
   * the clean full bundle's results.
   */
  static List<FunctionRunner.Result> afterRestart(Ctx c, FunctionRunner r, TypeInfo t, List<In> in,
      java.util.function.ToIntFunction<List<FunctionRunner.Result>> outputsOnce) throws Exception {
    int probes = 0;
    for (long end = System.currentTimeMillis() + c.ms(20_000); !cleanBundle(c, r, t, in.subList(0, 20),
        outputsOnce, "probe " + (probes + 1)); probes++) {
      check(System.currentTimeMillis() < end, "20 s after the server came back, bundles still time out");
    }
    for (int k = 1; k <= 3; k++) {
      List<FunctionRunner.Result> got = new ArrayList<>();
      if (cleanBundle(c, r, t, in, x -> {
        got.addAll(x);
        return outputsOnce.applyAsInt(x);
      }, "full bundle " + k)) {
        c.note(probes + " probe bundle(s) and " + (k - 1) + " full bundle(s) with timeouts after the restart");
        return got;
      }
    }
    throw new Scenario.Failure("3 full bundles after the restart all had timeouts");
  }

  /** One bundle: true when nothing timed out (then every input is an output), else accounted. */
  static boolean cleanBundle(Ctx c, FunctionRunner r, TypeInfo t, List<In> in,
      java.util.function.ToIntFunction<List<FunctionRunner.Result>> outputsOnce, String what) throws Exception {
    int got = outputsOnce.applyAsInt(DataPlaneScenarios.within(c, 60_000, what + " after the restart",
        () -> Ctx.bundle(r, t, in)));
    if (AsyncScenarios.value(r, "timeouts") == 0) {
      check(got == in.size(), what + ": no timeouts but " + got + " outputs of " + in.size());
      return true;
    }
    accounted(r, in.size(), got, what + " after the restart");
    return false;
  }

  static final String GIVE_UP = "\"timeoutMs\":1500,\"onTimeout\":\"TIMEOUT_EMPTY\",\"retry\":{\"kind\":"
      + "\"FIXED_DELAY\",\"maxAttempts\":1000,\"delayMs\":50,\"retryOnError\":true}";

  /** Sends the first half of in, waits for one output, runs kill, sends the second half. */
  static List<FunctionRunner.Result> killMidBundle(Ctx c, FunctionRunner r, TypeInfo t, List<In> in,
      Callable<Void> kill) throws Exception {
    Ctx.send(r, t, in.subList(0, in.size() / 2));
    r.sendBuffered();
    List<FunctionRunner.Result> got = new ArrayList<>();
    FunctionRunner.Result first = r.takeResult(c.ms(10_000));
    check(first != null, "no result before the kill");
    got.add(first);
    kill.call();
    Ctx.send(r, t, in.subList(in.size() / 2, in.size()));
    DataPlaneScenarios.within(c, 30_000, "the bundle whose server died (and stayed down)", () -> {
      r.flush();
      return null;
    });
    got.addAll(Ctx.drain(r));
    return got;
  }

  /**
   * The HTTP server is killed mid-bundle and stays down; retries until a 1.5 s timeout,
   * TIMEOUT_EMPTY: the bundle completes within 30 s, every input is an output (once,
   * right) or a counted empty result; once the server is back the next bundle is exact.
   */
  static void httpKilledNotRestarted(Ctx c) throws Exception {
    try (HttpScenarios.Server py = HttpScenarios.Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,echo:LONG>");
      FunctionRunner r = HttpScenarios.runner(c, c.worker(), HttpScenarios.KEYS, out, HttpScenarios.spec(
          AsyncScenarios.opts("url", py.url("/delay?ms=20"), "body", "{{\"id\": {id}}}", "result.echo", "/body/id",
              "connect_timeout_ms", "500", "request_timeout_ms", "3000"),
          "{\"outputMode\":\"UNORDERED\",\"capacity\":40," + GIVE_UP + "}"));
      int n = 200;
      List<In> in = HttpScenarios.rows(n, "a");
      Map<Long, Row> rows = HttpScenarios.byId(out, killMidBundle(c, r, HttpScenarios.KEYS, in, () -> {
        py.kill(c);
        return null;
      }));
      for (Row row : rows.values()) {
        check(row.get(1).equals(row.get(2)), "row " + row + " got another row's answer");
      }
      accounted(r, n, rows.size(), "server gone");
      c.note(rows.size() + " outputs, " + (n - rows.size()) + " counted empty");
      py.restart(c);
      HttpScenarios.expectIds(HttpScenarios.byId(out, afterRestart(c, r, HttpScenarios.KEYS, in,
          got -> HttpScenarios.byId(out, got).size())), n);
    }
  }

  /** The same with redis-server (GET per row; a missing key counts as an error and is retried). */
  static void redisKilledNotRestarted(Ctx c) throws Exception {
    RedisScenarios.Server s = RedisScenarios.start(c, null);
    if (s == null) {
      return;
    }
    try (s) {
      int n = 200;
      List<String> mset = new ArrayList<>(List.of("MSET"));
      for (int i = 0; i < n; i++) {
        mset.add("city:" + i);
        mset.add("c" + i);
      }
      s.cli(mset.toArray(new String[0]));
      TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      FunctionRunner r = RedisScenarios.runner(c, c.worker(), out, RedisScenarios.redis(s, AsyncScenarios.opts(
          "command", "GET city:{id}", "result_field", "city", "on_missing", "fail"),
          "{\"outputMode\":\"UNORDERED\",\"capacity\":20," + GIVE_UP + "}"));
      List<In> in = RedisScenarios.users(RedisScenarios.range(n));
      Map<Integer, Row> m = RedisScenarios.byId(RedisScenarios.rows(out, killMidBundle(c, r, RedisScenarios.USER,
          in, () -> {
            s.kill();
            return null;
          })));
      for (Row row : m.values()) {
        int id = (Integer) row.get(0);
        RedisScenarios.expectRow(m, id, id, "u" + id, "c" + id);
      }
      accounted(r, n, m.size(), "server gone");
      c.note(m.size() + " outputs, " + (n - m.size()) + " counted empty");
      s.restart();
      s.cli(mset.toArray(new String[0]));
      Map<Integer, Row> again = RedisScenarios.byId(RedisScenarios.rows(out, afterRestart(c, r,
          RedisScenarios.USER, in, got -> RedisScenarios.byId(RedisScenarios.rows(out, got)).size())));
      check(again.size() == n, "after the restart: sent " + n + ", got " + again.size() + " back");
      for (int i = 0; i < n; i++) {
        RedisScenarios.expectRow(again, i, i, "u" + i, "c" + i);
      }
    }
  }

  /** The same with the KServe v2 gRPC test server (batches of 4, a 20 ms model). */
  static void kserveKilledNotRestarted(Ctx c) throws Exception {
    try (HttpScenarios.Server s = KServeScenarios.start(c)) {
      if (s == null) {
        return;
      }
      HttpScenarios.Server.run(c, "kserve.sh", "inject", s.dir.getPath(), "{\"linear\": {\"delay_ms\": 20}}");
      FunctionRunner r = KServeScenarios.runner(c, c.worker(), KServeScenarios.IN, KServeScenarios.OUT,
          RunnerRows.batchMode(KServeScenarios.spec(KServeScenarios.linear(s),
              "{\"batchSize\":4,\"batchTimeoutMs\":5,\"capacity\":40," + GIVE_UP + "}")));
      int n = 200;
      List<In> in = KServeScenarios.rows(n);
      Map<Long, Row> rows = KServeScenarios.byId(KServeScenarios.OUT, killMidBundle(c, r, KServeScenarios.IN, in,
          () -> {
            HttpScenarios.Server.run(c, "kserve.sh", "kill", s.dir.getPath());
            return null;
          }));
      for (Map.Entry<Long, Row> e : rows.entrySet()) {
        List<Float> want = KServeScenarios.scores(KServeScenarios.features(e.getKey()));
        check(want.equals(e.getValue().get(1)), "row " + e.getKey() + ": scores " + e.getValue().get(1));
      }
      accounted(r, n, rows.size(), "server gone");
      c.note(rows.size() + " outputs, " + (n - rows.size()) + " counted empty");
      String port = HttpScenarios.Server.run(c, "kserve.sh", "start", s.dir.getPath(), "--port", s.ports[0]);
      check(s.ports[0].equals(port), "the server did not come back on port " + s.ports[0] + ": " + port);
      KServeScenarios.expectScores(KServeScenarios.byId(KServeScenarios.OUT, afterRestart(c, r,
          KServeScenarios.IN, in, got -> KServeScenarios.byId(KServeScenarios.OUT, got).size())), n);
    }
  }
}
