// Integration scenarios for the built-in `http` operation (docs/operations.md)
// against real servers started by tests/servers/*.sh: nginx serving the JSON
// fixtures (GET per element, keep-alive, HTTP/2 over TLS) and the Python test
// server (POST bodies, /batch, delays, 5xx then success, 429 with
// Retry-After, headers, /v1/embeddings). A scenario whose server program is
// missing passes with one "skipped: X not installed" note. Names start with
// "http_" (run them alone with the filter http_).
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.contains;
import static fnworker.harness.AsyncScenarios.expectMetric;
import static fnworker.harness.AsyncScenarios.opts;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import fnworker.proto.v1.OperationProto.OperationSpec;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class HttpScenarios {
  private HttpScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("http_get_nginx_per_element", HttpScenarios::getNginx));
    s.add(new Scenario("http_keepalive_connections", HttpScenarios::keepAlive));
    s.add(new Scenario("http_url_escaping", HttpScenarios::urlEscaping));
    s.add(new Scenario("http_post_json_body", HttpScenarios::postBody));
    s.add(new Scenario("http_batch_body", HttpScenarios::batchBody));
    s.add(new Scenario("http_delay_timeout", HttpScenarios::delayTimeout));
    s.add(new Scenario("http_5xx_then_success", HttpScenarios::flakyRetries));
    s.add(new Scenario("http_429_retry_after", HttpScenarios::retryAfter));
    s.add(new Scenario("http_404_on_missing", HttpScenarios::onMissing));
    s.add(new Scenario("http_header_from_env", HttpScenarios::headerFromEnv));
    s.add(new Scenario("http_bad_options", HttpScenarios::badOptions));
    s.add(new Scenario("http_h2_tls_nginx", HttpScenarios::h2Tls));
    s.add(new Scenario("http_server_killed_mid_bundle", HttpScenarios::serverKilled));
    s.add(new Scenario("http_openai_embeddings_example", HttpScenarios::embeddingsExample));
    return s;
  }

  // ------------------------------------------------------------ servers

  /** A server started by tests/servers/NAME.sh in its own temp dir; null when not installed. */
  static final class Server implements AutoCloseable {
    final Ctx ctx;
    final String script;
    final File dir;
    final String[] ports;

    private Server(Ctx ctx, String script, File dir, String[] ports) {
      this.ctx = ctx;
      this.script = script;
      this.dir = dir;
      this.ports = ports;
    }

    static File serversDir(Ctx c) {
      File here = new File("tests/servers");
      if (new File(here, "common.sh").isFile()) {
        return here;
      }
      File runner = new File(c.settings.runnerScript == null ? "." : c.settings.runnerScript).getAbsoluteFile();
      return new File(runner.getParentFile().getParentFile(), "tests/servers");
    }

    static String run(Ctx c, String script, String... args) throws Exception {
      List<String> cmd = new ArrayList<>(List.of("sh", new File(serversDir(c), script).getPath()));
      cmd.addAll(List.of(args));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      int rc = p.waitFor();
      if (rc == 77) {
        return null;
      }
      check(rc == 0, script + " " + String.join(" ", args) + " exited " + rc + ": " + err);
      return out;
    }

    /** Starts it; null (and a note) when the program is not installed. */
    static Server start(Ctx c, String script, String... extra) throws Exception {
      File dir = Files.createTempDirectory("fnw-http-").toFile();
      List<String> args = new ArrayList<>(List.of("start", dir.getPath()));
      args.addAll(List.of(extra));
      args.addAll(List.of("--owner", String.valueOf(ProcessHandle.current().pid())));
      String out = run(c, script, args.toArray(new String[0]));
      if (out == null) {
        c.note("skipped: " + (script.startsWith("nginx") ? "nginx" : "python3") + " not installed");
        return null;
      }
      return new Server(c, script, dir, out.split("\\s+"));
    }

    String url(String path) {
      return "http://127.0.0.1:" + ports[0] + path;
    }

    void kill(Ctx c) throws Exception {
      run(c, script, "kill", dir.getPath());
    }

    void restart(Ctx c) throws Exception {
      String out = run(c, script, "start", dir.getPath(), "--port", ports[0]);
      check(out != null && out.equals(ports[0]), "the server did not come back on port " + ports[0] + ": " + out);
    }

    @Override
    public void close() throws Exception {
      run(ctx, script, "stop", dir.getPath());
    }
  }

  // ------------------------------------------------------------ helpers

  static final TypeInfo KEYS = TypeInfo.parse("ROW<k:STRING,id:LONG>");

  static long ts(long i) {
    return 5_000_000L + 3 * i;
  }

  /** n rows (keys[i % keys.length], i), timestamp ts(i). */
  static List<In> rows(int n, String... keys) {
    List<In> in = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      in.add(new In(ts(i), Row.of(keys[i % keys.length], (long) i)));
    }
    return in;
  }

  static OperationSpec spec(Map<String, String> options, String json) {
    return RunnerRows.spec("http", options, json);
  }

  static FunctionRunner runner(Ctx c, Worker w, TypeInfo in, TypeInfo out, OperationSpec spec) {
    return c.runner(w, in, out, FunctionType.PROCESS, spec.toByteArray(), cfg -> { });
  }

  /** The output rows by their id field (field 1), checking each came once with its input's timestamp. */
  static Map<Long, Row> byId(TypeInfo out, List<FunctionRunner.Result> results) {
    return byId(out, results, 1, HttpScenarios::ts);
  }

  /** The output rows by the LONG id in field idField, each once and with timestamp ts(id). */
  static Map<Long, Row> byId(TypeInfo out, List<FunctionRunner.Result> results, int idField,
                             java.util.function.LongUnaryOperator ts) {
    Map<Long, Row> m = new HashMap<>();
    for (FunctionRunner.Result r : results) {
      check(r.tag.equals("output"), "a result came on '" + r.tag + "'");
      RunnerRows.Output o = RunnerRows.output(out, r.bytes);
      Row row = (Row) o.value;
      long id = (Long) row.get(idField);
      long want = ts.applyAsLong(id);
      check(o.ts == want, "row " + id + " has timestamp " + o.ts + ", its input had " + want);
      check(m.put(id, row) == null, "row " + id + " came out twice");
    }
    return m;
  }

  static void expectIds(Map<Long, Row> got, int n) {
    check(got.size() == n, "expected " + n + " rows (each input once), got " + got.size());
    for (long i = 0; i < n; i++) {
      check(got.containsKey(i), "row " + i + " is missing");
    }
  }

  // ------------------------------------------------------------ scenarios

  /** GET per element against nginx: fixtures a and b, results by pointer, input fields copied. */
  static void getNginx(Ctx c) throws Exception {
    try (Server ng = Server.start(c, "nginx.sh")) {
      if (ng == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,n:LONG,list:LIST<INT>,ok:BOOLEAN>");
      FunctionRunner r = runner(c, c.worker(), KEYS, out, spec(opts("url", ng.url("/json/{k}"), "result.n", "/n",
          "result.list", "/list", "result.ok", "/nested/ok", "max_connections", "4"), "{\"capacity\":16,"
          + "\"timeoutMs\":10000}"));
      Map<Long, Row> got = byId(out, Ctx.bundle(r, KEYS, rows(300, "a", "b")));
      expectIds(got, 300);
      for (Map.Entry<Long, Row> e : got.entrySet()) {
        Row row = e.getValue();
        if (e.getKey() % 2 == 0) {
          check("a".equals(row.get(0)) && Long.valueOf(1).equals(row.get(2)) && row.get(3) == null
              && row.get(4) == null, "row " + e.getKey() + " should be (a, 1, null, null): " + row);
        } else {
          check("b".equals(row.get(0)) && row.get(2) == null && List.of(1, 2, 3).equals(row.get(3))
              && Boolean.TRUE.equals(row.get(4)), "row " + e.getKey() + " should be (b, null, [1,2,3], true): " + row);
        }
      }
    }
  }

  /** Keep-alive: 200 GETs over at most max_connections connections (the Python server counts them). */
  static void keepAlive(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,n:LONG>");
      FunctionRunner r = runner(c, c.worker(), KEYS, out, spec(opts("url", py.url("/json/{k}"), "result.n", "/n",
          "max_connections", "3"), "{\"capacity\":12,\"timeoutMs\":10000}"));
      expectIds(byId(out, Ctx.bundle(r, KEYS, rows(200, "a"))), 200);
      int conns = connections(py) - 1;    // the /count request has a connection of its own
      check(conns >= 1 && conns <= 3, "200 requests used " + conns + " connections; max_connections is 3 and "
          + "keep-alive should reuse them");
      c.note(conns + " connection(s) for 200 requests");
    }
  }

  /** The connections the Python server has accepted (GET /count, on a connection of its own). */
  static int connections(Server py) throws Exception {
    java.net.http.HttpClient hc = java.net.http.HttpClient.newBuilder()
        .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
    String body = hc.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(py.url("/count"))).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"connections\": (\\d+)").matcher(body);
    check(m.find(), "no connection count in " + body);
    return Integer.parseInt(m.group(1));
  }

  /** Field values are percent-encoded in the path and in the query. */
  static void urlEscaping(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,path:STRING>");
      FunctionRunner r = runner(c, c.worker(), KEYS, out, spec(opts("url", py.url("/headers/{k}?q={k}&id={id}"),
          "result.path", "/_path"), "{\"timeoutMs\":10000}"));
      List<In> in = List.of(new In(ts(0), Row.of("a b&c/d?é", 0L)));
      Row row = byId(out, Ctx.bundle(r, KEYS, in)).get(0L);
      String want = "/headers/a%20b%26c%2Fd%3F%C3%A9?q=a%20b%26c%2Fd%3F%C3%A9&id=0";
      check(want.equals(row.get(2)), "the server saw path " + row.get(2) + ", expected " + want);
    }
  }

  /** POST per element: the JSON body template with JSON escaping; results from the echoed body. */
  static void postBody(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,name:STRING,twice:LONG>");
      FunctionRunner r = runner(c, c.worker(), KEYS, out, spec(opts("url", py.url("/echo"), "body",
          "{{\"name\": {k}, \"n\": {id}, \"twice\": [{id}, {id}]}}", "result.name", "/name", "result.twice",
          "/twice/1"), "{\"capacity\":8,\"timeoutMs\":10000}"));
      List<In> in = rows(20, "plain", "quote\"back\\slash", "üñí\n");
      Map<Long, Row> got = byId(out, Ctx.bundle(r, KEYS, in));
      expectIds(got, 20);
      for (In x : in) {
        Row src = (Row) x.value;
        Row row = got.get((Long) src.get(1));
        check(src.get(0).equals(row.get(2)) && src.get(1).equals(row.get(3)), "row " + src + " came back as " + row);
      }
    }
  }

  /** Batch mode: one POST per batch, {"inputs": [...]} -> /outputs/{i}. */
  static void batchBody(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,up:STRING>");
      OperationSpec s = RunnerRows.batchMode(spec(opts("url", py.url("/batch"), "body", "{k}",
          "batch_body", "{\"inputs\": {items}}", "result.up", "/outputs/{i}"), "{\"batchSize\":8,\"timeoutMs\":10000}"));
      FunctionRunner r = runner(c, c.worker(), KEYS, out, s);
      Map<Long, Row> got = byId(out, Ctx.bundle(r, KEYS, rows(20, "ab", "cd")));
      expectIds(got, 20);
      for (Row row : got.values()) {
        check(((String) row.get(0)).toUpperCase().equals(row.get(2)), "expected the key upper-cased: " + row);
      }
      expectMetric(r, "batches", 3);
      // numbers: each element's body is {id}; the server doubles them
      TypeInfo nums = TypeInfo.parse("ROW<k:STRING,id:LONG,doubled:LONG>");
      FunctionRunner n = runner(c, c.worker(), KEYS, nums, RunnerRows.batchMode(spec(opts("url", py.url("/batch"),
          "body", "{id}", "batch_body", "{\"inputs\": {items}}", "result.doubled", "/outputs/{i}"),
          "{\"batchSize\":5,\"timeoutMs\":10000}")));
      for (Row row : byId(nums, Ctx.bundle(n, KEYS, rows(12, "x"))).values()) {
        check(Long.valueOf(2 * (Long) row.get(1)).equals(row.get(2)), "expected id doubled: " + row);
      }
    }
  }

  /** A slow server and a short call timeout: TIMEOUT_FAIL names the input, TIMEOUT_EMPTY drops it. */
  static void delayTimeout(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,ms:LONG>");
      Map<String, String> o = opts("url", py.url("/delay?ms=3000"), "result.ms", "/delayed_ms");
      Worker w = c.worker();
      FunctionRunner f = runner(c, w, KEYS, out, spec(o, "{\"timeoutMs\":300}"));
      Ctx.send(f, KEYS, rows(1, "a"));
      contains(Ctx.expectBundleError(f), "timed out after 300 ms", "input 0");
      FunctionRunner e = runner(c, w, KEYS, out, spec(o, "{\"timeoutMs\":300,\"onTimeout\":\"TIMEOUT_EMPTY\"}"));
      check(Ctx.bundle(e, KEYS, rows(3, "a")).isEmpty(), "TIMEOUT_EMPTY should give no rows");
      // a fast answer within the timeout
      FunctionRunner ok = runner(c, w, KEYS, out, spec(opts("url", py.url("/delay?ms=50"), "result.ms",
          "/delayed_ms"), "{\"timeoutMs\":5000}"));
      check(Long.valueOf(50).equals(byId(out, Ctx.bundle(ok, KEYS, rows(1, "a"))).get(0L).get(2)), "50 ms answer");
    }
  }

  /** 503 twice then 200. With adaptive concurrency off (503 an ordinary retryable failure): with
   * retries every row comes out; without, the failure names the status. With it on (the default,
   * docs/resilience.md) a 503 is an overload: the call is re-queued without using a retry, so every
   * row comes out with no retry strategy at all. */
  static void flakyRetries(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,calls:LONG>");
      Worker w = c.worker();
      String off = "\"concurrency\":{\"adaptiveOff\":true}";
      FunctionRunner r = runner(c, w, KEYS, out, spec(opts("url", py.url("/flaky?fails=2&key=r{id}"),
          "result.calls", "/calls"), "{\"timeoutMs\":10000," + off + ",\"retry\":{\"kind\":\"FIXED_DELAY\","
          + "\"maxAttempts\":5,\"delayMs\":20,\"retryOnError\":true}}"));
      Map<Long, Row> got = byId(out, Ctx.bundle(r, KEYS, rows(10, "a")));
      expectIds(got, 10);
      for (Row row : got.values()) {
        check(Long.valueOf(3).equals(row.get(2)), "each row should succeed on its third call: " + row);
      }
      expectMetric(r, "retries", 20);
      FunctionRunner f = runner(c, w, KEYS, out, spec(opts("url", py.url("/flaky?fails=2&key=f{id}"),
          "result.calls", "/calls"), "{\"timeoutMs\":10000," + off + "}"));
      Ctx.send(f, KEYS, rows(1, "a"));
      contains(Ctx.expectBundleError(f), "HTTP status 503", "/flaky", "input 0");
      FunctionRunner a = runner(c, w, KEYS, out, spec(opts("url", py.url("/flaky?fails=2&key=a{id}"),
          "result.calls", "/calls"), "{\"timeoutMs\":10000}"));
      Map<Long, Row> adaptive = byId(out, Ctx.bundle(a, KEYS, rows(10, "a")));
      expectIds(adaptive, 10);
      for (Row row : adaptive.values()) {
        check(Long.valueOf(3).equals(row.get(2)), "each row should come out on its third call: " + row);
      }
      expectMetric(a, "retries", 0);
    }
  }

  /** 429 with Retry-After: 1 -> the retry waits a second (the strategy's delay is 10 ms). */
  static void retryAfter(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,status:LONG>");
      String retry = "\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":3,\"delayMs\":10,"
          + "\"retryOnError\":true}";
      Worker w = c.worker();
      FunctionRunner r = runner(c, w, KEYS, out, spec(opts("url", py.url("/429?after=1&key=k{id}"),
          "result.status", "/status"), "{\"timeoutMs\":10000," + retry + "}"));
      long t0 = System.nanoTime();
      Map<Long, Row> got = byId(out, Ctx.bundle(r, KEYS, rows(3, "a")));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      expectIds(got, 3);
      check(ms >= 950, "the rows came after " + ms + " ms; Retry-After asked for 1 s");
      c.note("rows after " + ms + " ms");
      // a Retry-After past the call's timeout: the timeout ends the call
      FunctionRunner t = runner(c, w, KEYS, out, spec(opts("url", py.url("/429?after=30&key=t{id}"),
          "result.status", "/status"), "{\"timeoutMs\":400," + retry + "}"));
      Ctx.send(t, KEYS, rows(1, "a"));
      contains(Ctx.expectBundleError(t), "timed out after 400 ms");
    }
  }

  /** 404 under on_missing null, empty and fail. */
  static void onMissing(Ctx c) throws Exception {
    try (Server ng = Server.start(c, "nginx.sh")) {
      if (ng == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,n:LONG>");
      Worker w = c.worker();
      List<In> in = rows(6, "a", "nope");
      Map<Long, Row> nul = byId(out, Ctx.bundle(runner(c, w, KEYS, out, spec(opts("url", ng.url("/json/{k}"),
          "result.n", "/n", "on_missing", "null"), "{\"timeoutMs\":10000}")), KEYS, in));
      expectIds(nul, 6);
      for (Map.Entry<Long, Row> e : nul.entrySet()) {
        Object want = e.getKey() % 2 == 0 ? (Object) 1L : null;
        check(java.util.Objects.equals(want, e.getValue().get(2)), "on_missing null: " + e.getValue());
      }
      Map<Long, Row> empty = byId(out, Ctx.bundle(runner(c, w, KEYS, out, spec(opts("url", ng.url("/json/{k}"),
          "result.n", "/n", "on_missing", "empty"), "{\"timeoutMs\":10000}")), KEYS, in));
      check(empty.keySet().equals(java.util.Set.of(0L, 2L, 4L)), "on_missing empty keeps the found rows: " + empty);
      FunctionRunner f = runner(c, w, KEYS, out, spec(opts("url", ng.url("/json/{k}"), "result.n", "/n",
          "on_missing", "fail"), "{\"timeoutMs\":10000}"));
      Ctx.send(f, KEYS, rows(2, "nope"));
      contains(Ctx.expectBundleError(f), "HTTP status 404", "/json/nope");
      // a pointer that finds nothing in a 200 answer follows the same policy
      FunctionRunner p = runner(c, w, KEYS, out, spec(opts("url", ng.url("/json/{k}"), "result.n", "/n",
          "on_missing", "fail"), "{\"timeoutMs\":10000}"));
      Ctx.send(p, KEYS, rows(1, "b"));
      contains(Ctx.expectBundleError(p), "no value at '/n' (result.n)");
    }
  }

  /** header.X = env:VAR sends the variable's value, which never shows in errors or the worker's output. */
  static void headerFromEnv(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      String secret = "s3cr3t-token-4711";
      Worker w = c.worker(o -> o.env.put("FNW_SECRET_TEST_TOKEN", secret));
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,auth:STRING,tag:STRING>");
      FunctionRunner r = runner(c, w, KEYS, out, spec(opts("url", py.url("/headers"), "header.Authorization",
          "env:FNW_SECRET_TEST_TOKEN", "header.X-Tag", "t-{k}", "result.auth", "/authorization", "result.tag", "/x-tag"),
          "{\"timeoutMs\":10000}"));
      Row row = byId(out, Ctx.bundle(r, KEYS, rows(1, "z"))).get(0L);
      check(secret.equals(row.get(2)) && "t-z".equals(row.get(3)), "the server saw " + row);
      // an error whose body echoes the secret masks it
      FunctionRunner bad = runner(c, w, KEYS, KEYS, spec(opts("url", py.url("/status/400"),
          "header.Authorization", "env:FNW_SECRET_TEST_TOKEN"), "{\"timeoutMs\":10000}"));
      Ctx.send(bad, KEYS, rows(1, "z"));
      String err = Ctx.expectBundleError(bad);
      contains(err, "HTTP status 400");
      check(!err.contains(secret), "the error shows the secret: " + err);
      FunctionRunner unset = runner(c, w, KEYS, KEYS, spec(opts("url", py.url("/headers"),
          "header.Authorization", "env:FNW_SECRET_NOT_SET_ANYWHERE"), "{\"timeoutMs\":10000}"));
      Ctx.send(unset, KEYS, rows(1, "z"));
      contains(Ctx.expectBundleError(unset), "header.Authorization", "FNW_SECRET_NOT_SET_ANYWHERE", "is not set");
      check(!w.process().output().contains(secret), "the worker's output shows the secret");
    }
  }

  static void badOption(Ctx c, Worker w, TypeInfo out, Map<String, String> o, boolean batch, String... parts) {
    OperationSpec s = spec(o, batch ? "{\"batchSize\":4,\"timeoutMs\":1000}" : "{\"timeoutMs\":1000}");
    FunctionRunner r = runner(c, w, KEYS, out, batch ? RunnerRows.batchMode(s) : s);
    Ctx.send(r, KEYS, rows(1, "a"));
    String err = Ctx.expectBundleError(r);
    contains(err, "operation 'http'");
    contains(err, parts);
  }

  /** Every bad option fails the bundle before any request, naming the option and the field. */
  static void badOptions(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,n:LONG>");
    String u = "http://127.0.0.1:9/x";
    badOption(c, w, out, opts("url", u, "result.n", "/n", "colour", "red"), false, "unknown option 'colour'");
    badOption(c, w, out, opts("result.n", "/n"), false, "option 'url' is required");
    badOption(c, w, out, opts("url", "http://h/{nope}", "result.n", "/n"), false, "'url'", "nope");
    badOption(c, w, out, opts("url", u, "result.m", "/n"), false, "m");
    badOption(c, w, out, opts("url", u), false, "n");
    badOption(c, w, out, opts("url", u, "result.n", "n"), false, "result.n");
    badOption(c, w, out, opts("url", u, "result.n", "/n", "body", "{\"id\": {id}}"), false, "'body'");
    badOption(c, w, out, opts("url", u, "result.n", "/n", "method", "get"), false, "'method'");
    badOption(c, w, out, opts("url", u, "result.n", "/n", "on_missing", "skip"), false, "'on_missing'");
    badOption(c, w, out, opts("url", u, "result.n", "/n", "max_connections", "0"), false, "max_connections");
    badOption(c, w, out, opts("url", u, "result.n", "/n", "header.Bad Name", "x"), false, "header.Bad Name");
    badOption(c, w, out, opts("url", u, "result.n", "/n", "tls_ca_file", "/no/such.pem"), false, "tls_ca_file");
    badOption(c, w, out, opts("url", u, "result.n", "/x/{i}"), false, "result.n", "{i}", "batch mode");
    badOption(c, w, out, opts("url", u + "/{k}", "body", "{k}", "result.n", "/x/{i}"), true, "'url'", "batch mode");
    badOption(c, w, out, opts("url", u, "body", "{k}", "batch_body", "{\"a\": 1}", "result.n", "/x/{i}"), true,
        "batch_body", "{items}");
    badOption(c, w, out, opts("url", u, "result.n", "/x/{i}"), true, "'body' is required");
    badOption(c, w, TypeInfo.parse("ROW<k:STRING,id:LONG,n:LOCAL_DATE>"), opts("url", u, "result.n", "/n"), false, "n");
    AsyncScenarios.stillServes(c, w);
  }

  /** HTTP/2 over TLS against nginx's https port, trusting its test certificate. */
  static void h2Tls(Ctx c) throws Exception {
    try (Server ng = Server.start(c, "nginx.sh")) {
      if (ng == null) {
        return;
      }
      if (ng.ports.length < 2 || "0".equals(ng.ports[1])) {
        c.note("skipped: no openssl for the TLS certificate");
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,n:LONG>");
      FunctionRunner r = runner(c, c.worker(), KEYS, out, spec(opts("url", "https://127.0.0.1:" + ng.ports[1]
          + "/json/{k}", "result.n", "/n", "tls_ca_file", new File(ng.dir, "cert.pem").getPath()),
          "{\"capacity\":20,\"timeoutMs\":10000}"));
      Map<Long, Row> got = byId(out, Ctx.bundle(r, KEYS, rows(100, "a")));
      expectIds(got, 100);
      for (Row row : got.values()) {
        check(Long.valueOf(1).equals(row.get(2)), "row " + row);
      }
      // the protocol nginx saw: HTTP/2 over TLS (ALPN), HTTP/1.1 over plain http://
      TypeInfo proto = TypeInfo.parse("ROW<k:STRING,id:LONG,proto:STRING>");
      for (String[] want : new String[][] {{"https://127.0.0.1:" + ng.ports[1], "HTTP/2.0"},
          {"http://127.0.0.1:" + ng.ports[0], "HTTP/1.1"}}) {
        FunctionRunner p = runner(c, c.worker(), KEYS, proto, spec(opts("url", want[0] + "/proto", "result.proto",
            "/proto", "tls_ca_file", new File(ng.dir, "cert.pem").getPath()), "{\"capacity\":8,\"timeoutMs\":10000}"));
        for (Row row : byId(proto, Ctx.bundle(p, KEYS, rows(20, "a"))).values()) {
          check(want[1].equals(row.get(2)), want[0] + " was requested with " + row.get(2) + ", not " + want[1]);
        }
      }
    }
  }

  /** The server is killed mid-bundle and restarted: with retries every input comes out exactly once. */
  static void serverKilled(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,echo:LONG>");
      FunctionRunner r = runner(c, c.worker(), KEYS, out, spec(opts("url", py.url("/delay?ms=20"), "body",
          "{{\"id\": {id}}}", "result.echo", "/body/id", "connect_timeout_ms", "500", "request_timeout_ms", "3000"),
          "{\"capacity\":10,\"timeoutMs\":30000,\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":100,"
          + "\"delayMs\":50,\"retryOnError\":true}}"));
      List<In> in = rows(300, "a");
      Ctx.send(r, KEYS, in);
      r.sendBuffered();
      List<FunctionRunner.Result> got = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        FunctionRunner.Result x = r.takeResult(c.ms(10_000));
        check(x != null, "no result before the kill");
        got.add(x);
      }
      py.kill(c);
      Thread.sleep(400);
      py.restart(c);
      r.flush();
      got.addAll(Ctx.drain(r));
      Map<Long, Row> rows = byId(out, got);
      expectIds(rows, 300);
      for (Row row : rows.values()) {
        check(row.get(1).equals(row.get(2)), "row " + row + " got another row's answer");
      }
      c.note(value(r, "retries") + " retries");
    }
  }

  static long value(FunctionRunner r, String name) {
    return AsyncScenarios.value(r, name);
  }

  /** The JSON block after the "scenario: NAME" marker of docs/operations.md: an example the operation reference shows, as written. */
  static String docJson(Ctx c, String name) throws Exception {
    File doc = new File(new File(Server.serversDir(c).getParentFile().getParentFile(), "docs"), "operations.md");
    String text = Files.readString(doc.toPath());
    int at = text.indexOf("<!-- scenario: " + name);
    check(at >= 0, "no example marker for " + name + " in " + doc);
    int from = text.indexOf("```json\n", at);
    int to = text.indexOf("```", from + 8);
    check(from >= 0 && to > from, "no json block after the marker in " + doc);
    return text.substring(from + 8, to);
  }

  /** docs/operations.md's example, exactly: OpenAI-style /v1/embeddings in batch mode. */
  static void embeddingsExample(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      Worker w = c.worker(o -> o.env.put("FNW_SECRET_OPENAI_API_KEY", "sk-test"));
      TypeInfo in = TypeInfo.parse("ROW<id:LONG,text:STRING>");
      TypeInfo out = TypeInfo.parse("ROW<id:LONG,text:STRING,embedding:PRIMITIVE_ARRAY<FLOAT>>");
      String json = docJson(c, "http_openai_embeddings_example").replace("https://api.openai.com", py.url(""));
      OperationSpec s = RunnerRows.spec(null, null, json);
      FunctionRunner r = c.runner(w, in, out, FunctionType.PROCESS, s.toByteArray(), cfg -> { });
      List<In> rows = List.of(new In(ts(0), Row.of(0L, "hello")), new In(ts(1), Row.of(1L, "Flink")),
          new In(ts(2), Row.of(2L, "")));
      Map<Long, Row> got = new HashMap<>();
      for (FunctionRunner.Result x : Ctx.bundle(r, in, rows)) {
        Row row = (Row) RunnerRows.output(out, x.bytes).value;
        got.put((Long) row.get(0), row);
      }
      check(got.size() == 3, "expected 3 rows: " + got);
      check(List.of(5.0f, 104.0f, 0.5f).equals(got.get(0L).get(2)), "hello: " + got.get(0L));
      check(List.of(5.0f, 70.0f, 0.5f).equals(got.get(1L).get(2)), "Flink: " + got.get(1L));
      check(List.of(0.0f, 0.0f, 0.5f).equals(got.get(2L).get(2)), "empty text: " + got.get(2L));
      check("Flink".equals(got.get(1L).get(1)), "the text is copied: " + got.get(1L));
    }
  }
}
