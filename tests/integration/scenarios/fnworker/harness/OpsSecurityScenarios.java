// Integration scenarios for the operation-level protections of issue 19
// (docs/security.md): a row cannot choose the host or walk up the URL path,
// header values refuse control characters, replies from services are
// bounded, and text quoted from a service is masked in its escaped forms too.
// Each runs the real worker against a real server (the Python test HTTP
// server, redis-server, the KServe test server); a server that is not
// installed skips its part.
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.contains;
import static fnworker.harness.AsyncScenarios.opts;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.HttpScenarios.Server;
import fnworker.harness.Scenario.Ctx;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

final class OpsSecurityScenarios {
  private OpsSecurityScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("http_row_cannot_change_url_or_headers", OpsSecurityScenarios::urlAndHeaders));
    s.add(new Scenario("secrets_masked_when_quoted_escaped", OpsSecurityScenarios::maskedEscaped));
    s.add(new Scenario("redis_reply_size_bounded", OpsSecurityScenarios::redisBounded));
    s.add(new Scenario("http_batch_short_answer_fails", OpsSecurityScenarios::shortBatch));
    s.add(new Scenario("kserve_open_checks_do_not_block_the_worker", OpsSecurityScenarios::kserveOpenOffLoop));
    return s;
  }

  static final TypeInfo KEYS = HttpScenarios.KEYS;

  static String get(Server py, String path) throws Exception {
    java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    return client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(py.url(path))).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
  }

  /**
   * Findings 6, 11, 12: a value ".." in a path placeholder would make libcurl (and nginx, which decodes
   * %2E%2E first) resolve the path upward; it fails the call and no request is sent. A placeholder in the
   * authority is refused at open. A header value with a control character other than TAB fails the call.
   */
  static void urlAndHeaders(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      Worker w = c.worker(o -> { });
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,p:STRING>");
      String tmpl = py.url("/headers/users/{k}/profile");
      // values with dots that are not a dot segment go as they are
      Map<Long, Row> ok = HttpScenarios.byId(out, Ctx.bundle(HttpScenarios.runner(c, w, KEYS, out,
          HttpScenarios.spec(opts("url", tmpl, "result.p", "/_path"), "{\"timeoutMs\":10000}")), KEYS,
          HttpScenarios.rows(3, "a.b", "...", ".x")));
      check("/headers/users/a.b/profile".equals(ok.get(0L).get(2)), "a.b: " + ok);
      check("/headers/users/.../profile".equals(ok.get(1L).get(2)), "...: " + ok);
      check("/headers/users/.x/profile".equals(ok.get(2L).get(2)), ".x: " + ok);
      for (String dots : new String[] {"..", "."}) {
        String before = get(py, "/count");
        FunctionRunner r = HttpScenarios.runner(c, w, KEYS, out, HttpScenarios.spec(opts("url", tmpl,
            "result.p", "/_path"), "{\"timeoutMs\":10000}"));
        Ctx.send(r, KEYS, HttpScenarios.rows(1, dots));
        contains(Ctx.expectBundleError(r), "path segment '" + dots + "'", "/headers/users/" + dots + "/profile",
            "may not be '.' or '..'");
        String after = get(py, "/count");
        check(before.replaceAll(",.*", "").equals(after.replaceAll(",.*", "")),
            "a request reached the server for '" + dots + "': " + before + " -> " + after);
      }
      // the host, port or scheme cannot come from a row
      for (String u : new String[] {"http://{k}:" + py.ports[0] + "/headers", "http://127.0.0.1:{id}/headers"}) {
        FunctionRunner r = HttpScenarios.runner(c, w, KEYS, out, HttpScenarios.spec(opts("url", u,
            "result.p", "/_path"), "{\"timeoutMs\":10000}"));
        Ctx.send(r, KEYS, HttpScenarios.rows(1, "127.0.0.1"));
        contains(Ctx.expectBundleError(r), "option 'url'", "placeholder before the path");
      }
      // header values: TAB goes, every other control character (and DEL) fails the call
      TypeInfo tag = TypeInfo.parse("ROW<k:STRING,id:LONG,t:STRING>");
      Map<Long, Row> tab = HttpScenarios.byId(tag, Ctx.bundle(HttpScenarios.runner(c, w, KEYS, tag,
          HttpScenarios.spec(opts("url", py.url("/headers"), "header.X-Tag", "v {k}", "result.t", "/x-tag"),
              "{\"timeoutMs\":10000}")), KEYS, HttpScenarios.rows(1, "a\tb")));
      check("v a\tb".equals(tab.get(0L).get(2)), "TAB in a header: " + tab);
      for (String bad : new String[] {"a\u0001b", "a\u007fb", "a\u001b[2J"}) {
        FunctionRunner r = HttpScenarios.runner(c, w, KEYS, tag, HttpScenarios.spec(opts("url", py.url("/headers"),
            "header.X-Tag", "v {k}", "result.t", "/x-tag"), "{\"timeoutMs\":10000}"));
        Ctx.send(r, KEYS, HttpScenarios.rows(1, bad));
        contains(Ctx.expectBundleError(r), "header.X-Tag", "control character");
      }
    }
  }

  static final String TOKEN = "tok/AbC+9xyz-5521";

  /** What a server shows of the credential in form f (as tests/servers/http_server.py /reject does). */
  static String shown(String f, String cred) {
    switch (f) {
      case "u": {
        StringBuilder b = new StringBuilder();
        for (char ch : cred.toCharArray()) {
          b.append(String.format("\\u%04x", (int) ch));
        }
        return b.toString();
      }
      case "pct":
        return java.net.URLEncoder.encode(cred, java.nio.charset.StandardCharsets.UTF_8);
      case "b64":
        return java.util.Base64.getEncoder().encodeToString(("user:" + cred)
            .getBytes(java.nio.charset.StandardCharsets.UTF_8));
      default:
        return cred.replace("/", "\\/");
    }
  }

  static void noneShown(String where, String text, String f) {
    String s = shown(f, TOKEN);
    String middle = f.equals("b64") ? s.substring(8, s.length() - 4) : s.substring(3, s.length() - 3);
    check(!text.contains(middle) && !text.contains("AbC+9xyz"), where + " (" + f + ") shows the token: " + text);
  }

  /**
   * Findings 4 and 5: text quoted from a service is masked in every spelling of the secret: http 401
   * bodies echoing the token JSON-escaped (\/, \\uXXXX), percent-encoded or inside base64 of user:token;
   * kserve status details the same; Redis error replies (a server answering AUTH with WRONGPASS and the
   * password) and Redis values quoted in conversion errors.
   */
  static void maskedEscaped(Ctx c) throws Exception {
    String pw = "rEdIs/pw+4411x";
    Worker w = c.worker(o -> {
      o.env.put("FNW_SECRET_T_TOKEN", TOKEN);
      o.env.put("FNW_SECRET_T_BEARER", "Bearer " + TOKEN);
      o.env.put("FNW_SECRET_T_REDIS_PW", pw);
    });
    List<String> errors = new ArrayList<>();
    String[] forms = {"json", "u", "pct", "b64"};
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py != null) {
        for (String f : forms) {
          FunctionRunner r = HttpScenarios.runner(c, w, KEYS, KEYS, HttpScenarios.spec(opts("url",
              py.url("/reject?as=" + f), "header.Authorization", "Bearer {env:FNW_SECRET_T_TOKEN}"),
              "{\"timeoutMs\":10000}"));
          Ctx.send(r, KEYS, HttpScenarios.rows(1, "a"));
          String e = Ctx.expectBundleError(r);
          contains(e, "HTTP status 401", "invalid token");
          noneShown("an http 401 error", e, f);
          errors.add(e);
        }
      }
    }
    try (Server ks = KServeScenarios.start(c)) {
      if (ks != null) {
        for (String f : new String[] {"json", "u", "b64"}) {
          Server.run(c, "kserve.sh", "inject", ks.dir.getPath(), "{\"linear\": {\"echo_auth\": \"" + f + "\"}}");
          FunctionRunner r = KServeScenarios.runner(c, w, KServeScenarios.IN, KServeScenarios.OUT,
              KServeScenarios.spec(KServeScenarios.linear(ks, "auth_header_env", "FNW_SECRET_T_BEARER"),
                  "{\"timeoutMs\":30000}"));
          Ctx.send(r, KServeScenarios.IN, KServeScenarios.rows(1));
          String e = Ctx.expectBundleError(r);
          contains(e, "UNAUTHENTICATED", "token rejected");
          noneShown("a kserve status", e, f);
          errors.add(e);
        }
      }
    }
    // a hostile Redis answering AUTH with the password it was sent, raw and JSON-escaped
    try (java.net.ServerSocket fake = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Thread t = new Thread(() -> {
        try {
          while (true) {
            java.net.Socket s = fake.accept();
            s.getInputStream().read(new byte[4096]);
            s.getOutputStream().write(("-WRONGPASS invalid password " + pw + " (" + pw.replace("/", "\\/")
                + ")\r\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            s.getOutputStream().flush();
          }
        } catch (java.io.IOException e) {
          // closed
        }
      });
      t.setDaemon(true);
      t.start();
      TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      FunctionRunner r = RedisScenarios.runner(c, w, out, RedisScenarios.redis(null, opts("address",
          "127.0.0.1:" + fake.getLocalPort(), "command", "GET city:{id}", "result_field", "city",
          "password_env", "FNW_SECRET_T_REDIS_PW"), "{\"timeoutMs\":2000}"));
      Ctx.send(r, RedisScenarios.USER, RedisScenarios.users(1));
      String e = Ctx.expectBundleError(r);
      contains(e, "AUTH failed: WRONGPASS invalid password");
      check(!e.contains("pw+4411"), "a Redis error shows the password: " + e);
      errors.add(e);
    }
    // a real redis-server: a value quoted in a conversion error is masked too
    RedisScenarios.Server rs = RedisScenarios.start(c, pw);
    if (rs != null) {
      try (rs) {
        rs.cli("SET", "n:1", pw);
        TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,n:INT>");
        FunctionRunner r = RedisScenarios.runner(c, w, out, RedisScenarios.redis(rs, opts("command", "GET n:{id}",
            "result_field", "n", "password_env", "FNW_SECRET_T_REDIS_PW"), "{\"timeoutMs\":5000}"));
        Ctx.send(r, RedisScenarios.USER, RedisScenarios.users(1));
        String e = Ctx.expectBundleError(r);
        contains(e, "cannot convert", "INT");
        check(!e.contains("pw+4411"), "a Redis value quoted in an error shows the password: " + e);
        errors.add(e);
      }
    }
    String all = w.process().output();
    check(!all.contains("AbC+9xyz") && !all.contains("pw+4411"), "the worker's output shows a secret");
    c.note(errors.size() + " errors searched");
  }

  /** VmHWM (the peak resident set, KiB) of the worker, or -1. */
  static long hwmKb(Worker w) {
    try {
      for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/" + w.process().pid()
          + "/status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      // gone
    }
    return -1;
  }

  /** A hostile "Redis" that answers every read with `answer` (after AUTH-less connects). */
  static java.net.ServerSocket fakeRedis(String answer) throws Exception {
    java.net.ServerSocket fake = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    Thread t = new Thread(() -> {
      try {
        while (true) {
          java.net.Socket s = fake.accept();
          Thread h = new Thread(() -> {
            try (s) {
              byte[] buf = new byte[65536];
              while (s.getInputStream().read(buf) > 0) {
                s.getOutputStream().write(answer.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                s.getOutputStream().flush();
              }
            } catch (java.io.IOException e) {
              // the worker hung up
            }
          });
          h.setDaemon(true);
          h.start();
        }
      } catch (java.io.IOException e) {
        // closed
      }
    });
    t.setDaemon(true);
    t.start();
    return fake;
  }

  /**
   * Finding 3: a Redis reply larger than max_reply_bytes (default 4 MiB) fails the call, checked on the
   * bulk/array header before the value is buffered: a 64 MB value leaves the worker's peak RSS near its
   * level (it was +378 MB), an LRANGE of 200000 elements and a hostile `*2147483647` header fail the same
   * way, and the connection then serves the next bundle.
   */
  static void redisBounded(Ctx c) throws Exception {
    Worker w = c.worker(o -> { });
    TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
    RedisScenarios.Server rs = RedisScenarios.start(c, null);
    if (rs != null) {
      try (rs) {
        rs.cli("SET", "city:1", "Oslo");
        rs.cli("SETRANGE", "city:2", String.valueOf(64 * 1024 * 1024 - 1), "x");
        rs.cli("EVAL", "for i=1,200000 do redis.call('RPUSH', KEYS[1], i) end", "1", "many");
        // warm up: the operation, its connection and the allocator's arenas
        List<FunctionRunner.Result> warm = Ctx.bundle(RedisScenarios.runner(c, w, out, RedisScenarios.redis(rs,
            opts("command", "GET city:{id}", "result_field", "city"), "{\"timeoutMs\":10000}")),
            RedisScenarios.USER, RedisScenarios.users(1));
        check(warm.size() == 1, "the small value: " + warm.size() + " rows");
        long before = w.rssKb(), hwm0 = hwmKb(w);
        FunctionRunner big = RedisScenarios.runner(c, w, out, RedisScenarios.redis(rs, opts("command",
            "GET city:{id}", "result_field", "city"), "{\"timeoutMs\":20000}"));
        Ctx.send(big, RedisScenarios.USER, RedisScenarios.users(2));
        contains(Ctx.expectBundleError(big), "max_reply_bytes (4194304 bytes)", "a bulk string announcing 67108864");
        long hwm = hwmKb(w), after = w.rssKb();
        c.note("64 MB value: VmRSS " + before / 1024 + " -> " + after / 1024 + " MB, VmHWM " + hwm0 / 1024 + " -> "
            + hwm / 1024 + " MB");
        String why = w.rssUnreliable();
        if (why == null && before > 0 && hwm > 0) {
          check(hwm - Math.max(before, 0) < 24 * 1024, "the worker's peak RSS rose to " + hwm / 1024
              + " MB (from " + before / 1024 + " MB) for a reply over the limit");
          check(after - before < 12 * 1024, "the worker kept " + (after - before) / 1024 + " MB after the bundle");
        }
        // many small values add up
        TypeInfo list = TypeInfo.parse("ROW<id:INT,name:STRING,l:LIST<STRING>>");
        FunctionRunner many = RedisScenarios.runner(c, w, list, RedisScenarios.redis(rs, opts("command",
            "LRANGE many 0 -1", "result_field", "l"), "{\"timeoutMs\":20000}"));
        Ctx.send(many, RedisScenarios.USER, RedisScenarios.users(1));
        contains(Ctx.expectBundleError(many), "max_reply_bytes", "its values reach");
        // a higher limit lets it through; the connection serves again after the failures
        List<FunctionRunner.Result> ok = Ctx.bundle(RedisScenarios.runner(c, w, list, RedisScenarios.redis(rs,
            opts("command", "LRANGE many 0 -1", "result_field", "l", "max_reply_bytes", "67108864"),
            "{\"timeoutMs\":20000}")), RedisScenarios.USER, RedisScenarios.users(1));
        check(ok.size() == 1, "LRANGE with max_reply_bytes 64 MiB: " + ok.size() + " rows");
      }
    }
    // a hostile server announcing 2^31-1 elements: refused at the header
    try (java.net.ServerSocket fake = fakeRedis("*2147483647\r\n")) {
      FunctionRunner r = RedisScenarios.runner(c, w, out, RedisScenarios.redis(null, opts("address",
          "127.0.0.1:" + fake.getLocalPort(), "command", "GET city:{id}", "result_field", "city"),
          "{\"timeoutMs\":5000}"));
      Ctx.send(r, RedisScenarios.USER, RedisScenarios.users(1));
      contains(Ctx.expectBundleError(r), "max_reply_bytes", "an array announcing 2147483647 elements");
    }
    AsyncScenarios.stillServes(c, w);
  }

  /**
   * A batch answered with fewer items than rows fails the call (retryable), naming the counts; it used to
   * give the last rows null results silently. on_short_batch=missing keeps the old behaviour.
   */
  static void shortBatch(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      Worker w = c.worker(o -> { });
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,up:STRING>");
      String before = get(py, "/count");
      FunctionRunner r = HttpScenarios.runner(c, w, KEYS, out, RunnerRows.batchMode(HttpScenarios.spec(opts("url",
          py.url("/batch?drop=1"), "body", "{k}", "batch_body", "{\"inputs\": {items}}", "result.up",
          "/outputs/{i}"), "{\"batchSize\":4,\"timeoutMs\":10000,\"retry\":{\"kind\":\"FIXED_DELAY\","
          + "\"maxAttempts\":3,\"delayMs\":10,\"retryOnError\":true}}")));
      Ctx.send(r, KEYS, HttpScenarios.rows(4, "ab"));
      contains(Ctx.expectBundleError(r), "3 items at '/outputs/{i}' (result.up) for a batch of 4 rows",
          "on_short_batch");
      int sent = Integer.parseInt(get(py, "/count").replaceAll(".*\"requests\": *([0-9]+).*", "$1"))
          - Integer.parseInt(before.replaceAll(".*\"requests\": *([0-9]+).*", "$1"));
      check(sent >= 3, "the short answer was not retried: " + sent + " requests");
      Map<Long, Row> got = HttpScenarios.byId(out, Ctx.bundle(HttpScenarios.runner(c, w, KEYS, out,
          RunnerRows.batchMode(HttpScenarios.spec(opts("url", py.url("/batch?drop=1"), "body", "{k}", "batch_body",
              "{\"inputs\": {items}}", "result.up", "/outputs/{i}", "on_short_batch", "missing"),
              "{\"batchSize\":4,\"timeoutMs\":10000}"))), KEYS, HttpScenarios.rows(4, "ab")));
      check(got.size() == 4 && "AB".equals(got.get(0L).get(2)) && got.get(3L).get(2) == null,
          "on_short_batch missing: " + got);
    }
  }

  /**
   * Finding 9: a model server that hangs at ServerReady (3 s here) while another bundle runs on the same
   * worker: the other bundle finishes at its own pace (it waited for the whole hang before), and the kserve
   * bundle's rows come out once the server answers.
   */
  static void kserveOpenOffLoop(Ctx c) throws Exception {
    try (Server ks = KServeScenarios.start(c)) {
      if (ks == null) {
        return;
      }
      long hang = c.ms(3000);   // scaled like every wait of the scenario (slower under valgrind)
      Server.run(c, "kserve.sh", "inject", ks.dir.getPath(), "{\"*\": {\"ready_delay_ms\": " + hang + "}}");
      Worker w = c.worker(o -> { });
      FunctionRunner k = KServeScenarios.runner(c, w, KServeScenarios.IN, KServeScenarios.OUT,
          KServeScenarios.spec(KServeScenarios.linear(ks, "connect_timeout_ms", String.valueOf(hang + 5000)),
              "{\"timeoutMs\":" + (hang + 20000) + "}"));
      java.util.concurrent.CompletableFuture<List<FunctionRunner.Result>> scored =
          java.util.concurrent.CompletableFuture.supplyAsync(() -> Ctx.bundle(k, KServeScenarios.IN,
              KServeScenarios.rows(3)));
      Thread.sleep(c.ms(500));   // the kserve bundle is opening: ServerReady hangs
      if (scored.isDone()) {
        String how;
        try {
          how = scored.get().size() + " rows";
        } catch (java.util.concurrent.ExecutionException e) {
          how = String.valueOf(e.getCause());
        }
        check(false, "the kserve bundle finished before ServerReady answered: " + how);
      }
      long t0 = System.nanoTime();
      AsyncScenarios.stillServes(c, w);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      c.note("another bundle took " + ms + " ms while ServerReady hung");
      check(ms < c.ms(1500), "another bundle on the worker took " + ms + " ms while a kserve open waited for "
          + "ServerReady");
      List<FunctionRunner.Result> rows = scored.get(hang + c.ms(15000), java.util.concurrent.TimeUnit.MILLISECONDS);
      check(rows.size() == 3, "the kserve bundle gave " + rows.size() + " rows");
      // a bundle that gives up while ServerReady still hangs: close cancels the check at once
      FunctionRunner quick = KServeScenarios.runner(c, w, KServeScenarios.IN, KServeScenarios.OUT,
          KServeScenarios.spec(KServeScenarios.linear(ks, "connect_timeout_ms", String.valueOf(hang + 5000)),
              "{\"timeoutMs\":300}"));
      long t1 = System.nanoTime();
      Ctx.send(quick, KServeScenarios.IN, KServeScenarios.rows(2));
      String e = Ctx.expectBundleError(quick);
      long closeMs = (System.nanoTime() - t1) / 1_000_000;
      c.note("a bundle timing out during the checks failed after " + closeMs + " ms");
      check(closeMs < c.ms(2500), "a bundle timing out during the open checks took " + closeMs + " ms: " + e);
      AsyncScenarios.stillServes(c, w);
    }
  }
}
