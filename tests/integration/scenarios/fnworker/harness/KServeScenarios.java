// Integration scenarios for the built-in `kserve` operation (docs/operations.md, "kserve")
// against the Python KServe v2 test model server (tests/servers/kserve.sh):
// the linear model per element and in batches with checked results, the
// BYTES model, a metadata mismatch failing the bundle at open, injected
// UNAVAILABLE answers retried away, a fatal status failing with the server's
// message, and the document's batch-64 example as written. Without python3's
// grpcio / numpy every scenario passes with one "skipped:" note. Names start
// with "kserve_" (run them alone with the filter kserve_).
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.contains;
import static fnworker.harness.AsyncScenarios.expectMetric;
import static fnworker.harness.AsyncScenarios.opts;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.HttpScenarios.Server;
import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import fnworker.proto.v1.OperationProto.OperationSpec;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class KServeScenarios {
  private KServeScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("kserve_linear_per_element", KServeScenarios::linearPerElement));
    s.add(new Scenario("kserve_linear_batch", KServeScenarios::linearBatch));
    s.add(new Scenario("kserve_bytes_model", KServeScenarios::bytesModel));
    s.add(new Scenario("kserve_metadata_mismatch", KServeScenarios::metadataMismatch));
    s.add(new Scenario("kserve_unavailable_then_retry", KServeScenarios::unavailableRetry));
    s.add(new Scenario("kserve_fatal_status", KServeScenarios::fatalStatus));
    s.add(new Scenario("kserve_timeout_then_next_bundle", KServeScenarios::timeoutNextBundle));
    s.add(new Scenario("kserve_server_killed_mid_bundle", KServeScenarios::serverKilled));
    s.add(new Scenario("kserve_doc_batch_example", KServeScenarios::docExample));
    return s;
  }

  static final TypeInfo IN = TypeInfo.parse("ROW<id:LONG,features:PRIMITIVE_ARRAY<FLOAT>>");
  static final TypeInfo OUT = TypeInfo.parse("ROW<id:LONG,scores:PRIMITIVE_ARRAY<FLOAT>>");
  static final float[][] W = {{1, 2}, {0, -1}, {0.5f, 0}, {3, 1}};
  static final float[] B = {0.5f, -1};

  static Server start(Ctx c) throws Exception {
    Server s = Server.start(c, "kserve.sh");
    if (s == null) {
      c.note("skipped: python3-grpcio or python3-numpy not installed");
    }
    return s;
  }

  static String target(Server s) {
    return "127.0.0.1:" + s.ports[0];
  }

  static long ts(long i) {
    return 7_000_000L + 5 * i;
  }

  /** Row i's features: small halves, so every score is exact in FP32. */
  static List<Float> features(long i) {
    return List.of((float) (i % 7), (i % 3) * 0.5f, (float) -(i % 5), (i % 2) * 1.5f);
  }

  static List<Float> scores(List<Float> x) {
    List<Float> y = new ArrayList<>();
    for (int o = 0; o < 2; o++) {
      float v = B[o];
      for (int j = 0; j < 4; j++) {
        v += x.get(j) * W[j][o];
      }
      y.add(v);
    }
    return y;
  }

  static List<In> rows(int n) {
    List<In> in = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      in.add(new In(ts(i), Row.of(i, features(i))));
    }
    return in;
  }

  static Map<String, String> linear(Server s, String... more) {
    Map<String, String> o = opts("target", target(s), "model_name", "linear", "inputs", "x:FP32[4]=features",
        "outputs", "y:FP32[2]=scores");
    o.putAll(opts(more));
    return o;
  }

  static OperationSpec spec(Map<String, String> options, String json) {
    return RunnerRows.spec("kserve", options, json);
  }

  static FunctionRunner runner(Ctx c, Worker w, TypeInfo in, TypeInfo out, OperationSpec spec) {
    return HttpScenarios.runner(c, w, in, out, spec);
  }

  /** Output rows by id (field 0), each once with its input's timestamp. */
  static Map<Long, Row> byId(TypeInfo out, List<FunctionRunner.Result> results) {
    return HttpScenarios.byId(out, results, 0, KServeScenarios::ts);
  }

  static void expectScores(Map<Long, Row> got, int n) {
    check(got.size() == n, "expected " + n + " rows, got " + got.size());
    for (long i = 0; i < n; i++) {
      Row row = got.get(i);
      check(row != null, "row " + i + " is missing");
      List<Float> want = scores(features(i));
      check(want.equals(row.get(1)), "row " + i + ": scores " + row.get(1) + ", expected " + want);
    }
  }

  /** The server's counter for a model (stats.json, rewritten within 100 ms of a change), waiting for want. */
  static long stat(Server s, String model, String key, long want) throws Exception {
    File f = new File(s.dir, "stats.json");
    Pattern p = Pattern.compile("\"" + model + "\"\\s*:\\s*\\{[^}]*\"" + key + "\"\\s*:\\s*(\\d+)");
    long got = -1;
    for (int i = 0; i < 50; i++) {
      if (f.isFile()) {
        Matcher m = p.matcher(Files.readString(f.toPath()));
        if (m.find()) {
          got = Long.parseLong(m.group(1));
          if (got == want) {
            return got;
          }
        }
      }
      Thread.sleep(100);
    }
    return got;
  }

  // ------------------------------------------------------------ scenarios

  /** Per element: one request of one row each, every score exact, ids copied. */
  static void linearPerElement(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      FunctionRunner r = runner(c, c.worker(), IN, OUT, spec(linear(s), "{\"capacity\":8,\"timeoutMs\":10000}"));
      expectScores(byId(OUT, Ctx.bundle(r, IN, rows(40))), 40);
      long req = stat(s, "linear", "requests", 40);
      check(req == 40, "the server saw " + req + " requests for 40 rows per element");
      check(stat(s, "linear", "max_batch", 1) == 1, "per element, every request is one row");
    }
  }

  /** Batch mode: requests of up to 8 rows (two channels), every score exact. */
  static void linearBatch(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      FunctionRunner r = runner(c, c.worker(), IN, OUT, RunnerRows.batchMode(spec(linear(s, "channels", "2"),
          "{\"batchSize\":8,\"batchTimeoutMs\":20,\"capacity\":32,\"timeoutMs\":10000}")));
      expectScores(byId(OUT, Ctx.bundle(r, IN, rows(100))), 100);
      check(stat(s, "linear", "rows", 100) == 100, "the server should have scored 100 rows");
      long req = stat(s, "linear", "requests", 13);
      long maxBatch = stat(s, "linear", "max_batch", 8);
      check(maxBatch == 8, "the largest request should hold 8 rows, it held " + maxBatch);
      check(req >= 13 && req < 100, "100 rows in batches of 8 took " + req + " requests");
      c.note(req + " requests for 100 rows");
    }
  }

  /** The strlen model: a STRING field as a BYTES tensor, an INT64 answer into a LONG field. */
  static void bytesModel(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      TypeInfo in = TypeInfo.parse("ROW<id:LONG,text:STRING>");
      TypeInfo out = TypeInfo.parse("ROW<id:LONG,text:STRING,n:LONG>");
      FunctionRunner r = runner(c, c.worker(), in, out, RunnerRows.batchMode(spec(opts("target", target(s),
          "model_name", "strlen", "inputs", "text:BYTES=text", "outputs", "len:INT64=n"),
          "{\"batchSize\":4,\"timeoutMs\":10000}")));
      String[] texts = {"", "a", "héllo", "日本語", "with, comma", "x".repeat(1000)};
      List<In> rows = new ArrayList<>();
      for (int i = 0; i < texts.length; i++) {
        rows.add(new In(ts(i), Row.of((long) i, texts[i])));
      }
      Map<Long, Row> got = byId(out, Ctx.bundle(r, in, rows));
      check(got.size() == texts.length, "expected " + texts.length + " rows: " + got);
      for (int i = 0; i < texts.length; i++) {
        Row row = got.get((long) i);
        long want = texts[i].getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        check(texts[i].equals(row.get(1)) && Long.valueOf(want).equals(row.get(2)),
            "'" + texts[i] + "' should be " + want + " bytes: " + row);
      }
    }
  }

  /** A mapping the model's metadata contradicts fails the bundle at open, naming the tensor. */
  static void metadataMismatch(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      Worker w = c.worker();
      FunctionRunner r = runner(c, w, IN, OUT, RunnerRows.batchMode(spec(linear(s, "inputs", "x:FP32[2,2]=features"),
          "{\"batchSize\":4,\"timeoutMs\":10000}")));
      Ctx.send(r, IN, rows(1));
      contains(Ctx.expectBundleError(r), "operation 'kserve'", "model 'linear'", "input tensor 'x'", "[2,2]");
      FunctionRunner z = runner(c, w, IN, OUT, spec(linear(s, "outputs", "z:FP32[2]=scores"), "{\"timeoutMs\":10000}"));
      Ctx.send(z, IN, rows(1));
      contains(Ctx.expectBundleError(z), "output tensor 'z'");
      check(stat(s, "linear", "requests", 0) <= 0, "no ModelInfer should have been sent");
      FunctionRunner off = runner(c, w, IN, OUT, spec(opts("target", "127.0.0.1:9", "model_name", "linear", "inputs",
          "x:FP32[4]=features", "outputs", "y:FP32[2]=scores", "connect_timeout_ms", "300"), "{\"timeoutMs\":1000}"));
      Ctx.send(off, IN, rows(1));
      contains(Ctx.expectBundleError(off), "'127.0.0.1:9'");
      AsyncScenarios.stillServes(c, w);
    }
  }

  /** UNAVAILABLE three times: retried by the spec's strategy, every row comes out; without retries it fails. */
  static void unavailableRetry(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      Worker w = c.worker();
      Server.run(c, "kserve.sh", "inject", s.dir.getPath(), "{\"linear\": {\"unavailable\": 3}}");
      FunctionRunner r = runner(c, w, IN, OUT, RunnerRows.batchMode(spec(linear(s),
          "{\"batchSize\":4,\"capacity\":8,\"timeoutMs\":10000,\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":5,"
          + "\"delayMs\":20,\"retryOnError\":true}}")));
      expectScores(byId(OUT, Ctx.bundle(r, IN, rows(20))), 20);
      expectMetric(r, "retries", 3);
      Server.run(c, "kserve.sh", "inject", s.dir.getPath(), "{\"linear\": {\"unavailable\": 1}}");
      FunctionRunner f = runner(c, w, IN, OUT, spec(linear(s), "{\"timeoutMs\":10000}"));
      Ctx.send(f, IN, rows(1));
      contains(Ctx.expectBundleError(f), "UNAVAILABLE", "model 'linear'");
    }
  }

  /** INVALID_ARGUMENT (a shape the model refuses, the metadata check off) is not retried, whatever the retry
   * strategy says; the message is the server's. */
  static void fatalStatus(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      TypeInfo in = TypeInfo.parse("ROW<id:LONG,features:PRIMITIVE_ARRAY<FLOAT>>");
      FunctionRunner r = runner(c, c.worker(), in, OUT, spec(linear(s, "inputs", "x:FP32[2]=features",
          "check_metadata", "false"), "{\"timeoutMs\":3000,\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":5,"
          + "\"delayMs\":60000,\"retryOnError\":true}}"));
      Ctx.send(r, in, List.of(new In(ts(0), Row.of(0L, List.of(1.0f, 2.0f)))));
      // a retry would wait 60 s, past the 3 s timeout: the failure would then be the timeout's
      String err = Ctx.expectBundleError(r);
      contains(err, "INVALID_ARGUMENT", "input 'x'", "model expects [-1, 4]");
      check(!err.contains("timed out"), "the refused request was retried: " + err);
    }
  }

  /** A slow model and a short timeout: the bundle fails naming the timeout (TIMEOUT_EMPTY: no rows); the calls
   * still out are given up (their late answers dropped) and the next bundles on the same worker score every row. */
  static void timeoutNextBundle(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      Worker w = c.worker();
      Server.run(c, "kserve.sh", "inject", s.dir.getPath(), "{\"linear\": {\"delay_ms\": 1500}}");
      FunctionRunner f = runner(c, w, IN, OUT, spec(linear(s), "{\"capacity\":8,\"timeoutMs\":300}"));
      Ctx.send(f, IN, rows(8));
      contains(Ctx.expectBundleError(f), "timed out after 300 ms");
      // the spec's timeout action decides, not the gRPC deadline (which comes a grace later)
      FunctionRunner e = runner(c, w, IN, OUT, spec(linear(s), "{\"capacity\":8,\"timeoutMs\":300,"
          + "\"onTimeout\":\"TIMEOUT_EMPTY\"}"));
      check(Ctx.bundle(e, IN, rows(3)).isEmpty(), "TIMEOUT_EMPTY should give no rows");
      Server.run(c, "kserve.sh", "inject", s.dir.getPath(), "{}");
      FunctionRunner r = runner(c, w, IN, OUT, spec(linear(s), "{\"capacity\":8,\"timeoutMs\":10000}"));
      expectScores(byId(OUT, Ctx.bundle(r, IN, rows(30))), 30);
      Thread.sleep(1500);   // the slow answers arrive now, to calls given up
      FunctionRunner again = runner(c, w, IN, OUT, spec(linear(s), "{\"capacity\":8,\"timeoutMs\":10000}"));
      expectScores(byId(OUT, Ctx.bundle(again, IN, rows(10))), 10);
      AsyncScenarios.stillServes(c, w);
    }
  }

  /** The server is killed mid-bundle and restarted on its port: with retries every row comes out once, right. */
  static void serverKilled(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      Server.run(c, "kserve.sh", "inject", s.dir.getPath(), "{\"linear\": {\"delay_ms\": 20}}");
      FunctionRunner r = runner(c, c.worker(), IN, OUT, RunnerRows.batchMode(spec(linear(s, "channels", "2"),
          "{\"batchSize\":4,\"batchTimeoutMs\":5,\"capacity\":16,\"timeoutMs\":30000,\"retry\":{\"kind\":"
          + "\"FIXED_DELAY\",\"maxAttempts\":400,\"delayMs\":50,\"retryOnError\":true}}")));
      List<In> in = rows(300);
      Ctx.send(r, IN, in);
      r.sendBuffered();
      List<FunctionRunner.Result> got = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        FunctionRunner.Result x = r.takeResult(c.ms(10_000));
        check(x != null, "no result before the kill");
        got.add(x);
      }
      Server.run(c, "kserve.sh", "kill", s.dir.getPath());
      Thread.sleep(400);
      String port = Server.run(c, "kserve.sh", "start", s.dir.getPath(), "--port", s.ports[0]);
      check(s.ports[0].equals(port), "the server did not come back on port " + s.ports[0] + ": " + port);
      r.flush();
      got.addAll(Ctx.drain(r));
      expectScores(byId(OUT, got), 300);
      c.note(AsyncScenarios.value(r, "retries") + " retries");
    }
  }

  /** The document's example as written (batches of 64, 50 ms): its three rows and their scores. */
  static void docExample(Ctx c) throws Exception {
    try (Server s = start(c)) {
      if (s == null) {
        return;
      }
      String json = HttpScenarios.docJson(c, "kserve_doc_batch_example").replace("triton:8001", target(s));
      FunctionRunner r = runner(c, c.worker(), IN, OUT, RunnerRows.spec(null, null, json));
      List<In> in = List.of(new In(ts(1), Row.of(1L, List.of(1.0f, 2.0f, 3.0f, 4.0f))),
          new In(ts(2), Row.of(2L, List.of(-1.0f, 0.5f, 2.0f, 0.0f))),
          new In(ts(3), Row.of(3L, List.of(0.0f, 0.0f, 0.0f, 0.0f))));
      Map<Long, Row> got = byId(OUT, Ctx.bundle(r, IN, in));
      check(List.of(15.0f, 3.0f).equals(got.get(1L).get(1)), "row 1: " + got.get(1L));
      check(List.of(0.5f, -3.5f).equals(got.get(2L).get(1)), "row 2: " + got.get(2L));
      check(List.of(0.5f, -1.0f).equals(got.get(3L).get(1)), "row 3: " + got.get(3L));
      check(stat(s, "linear", "max_batch", 3) == 3, "the three rows should travel as one request");
    }
  }
}
