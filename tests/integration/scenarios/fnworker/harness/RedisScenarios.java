// Integration scenarios for the built-in `redis` operation against a real
// redis-server (tests/servers/redis.sh, data loaded with redis-cli): per
// element GET / HGET / HGETALL / HMGET enrichment, batch mode (one MGET per
// batch, pipelined HGETALL), on_missing null / empty / fail, AUTH through
// password_env and SELECT, bad options failing the bundle, and the server
// killed mid-bundle with and without retries. Each scenario starts its own
// server and stops it in a finally block; without redis-server installed it
// passes with one "skipped: redis-server not installed" note. Names start
// with "redis_".
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.contains;
import static fnworker.harness.AsyncScenarios.expectMetric;
import static fnworker.harness.AsyncScenarios.metric;
import static fnworker.harness.AsyncScenarios.opts;
import static fnworker.harness.AsyncScenarios.T0;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import fnworker.proto.v1.OperationProto.OperationSpec;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class RedisScenarios {
  private RedisScenarios() {}

  static final TypeInfo USER = TypeInfo.parse("ROW<id:INT,name:STRING>");

  static List<Scenario> scenarios() {
    return List.of(
        new Scenario("redis_per_element_enrichment", RedisScenarios::perElement),
        new Scenario("redis_batch_mget_and_pipeline", RedisScenarios::batch),
        new Scenario("redis_on_missing", RedisScenarios::onMissing),
        new Scenario("redis_auth_and_select", RedisScenarios::authAndSelect),
        new Scenario("redis_bad_options", RedisScenarios::badOptions),
        new Scenario("redis_server_killed_mid_bundle", RedisScenarios::serverKilled),
        new Scenario("redis_lookup_cache", RedisScenarios::lookupCache));
  }

  // ------------------------------------------------------------ the server

  /** A redis-server of one scenario: its directory, port and password. */
  static final class Server implements AutoCloseable {
    final Path dir;
    final int port;
    final String password;

    Server(Path dir, int port, String password) {
      this.dir = dir;
      this.port = port;
      this.password = password;
    }

    /** redis-cli against this server; returns its output, fails the scenario on an error exit. */
    String cli(int db, String... args) throws Exception {
      List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", String.valueOf(port),
          "-n", String.valueOf(db)));
      if (password != null) {
        cmd.add("--no-auth-warning");
        cmd.add("-a");
        cmd.add(password);
      }
      cmd.addAll(List.of(args));
      Run r = run(cmd);
      check(r.code == 0 && !r.out.startsWith("(error)") && !r.out.startsWith("ERR"), "redis-cli "
          + String.join(" ", args).substring(0, Math.min(80, String.join(" ", args).length())) + ": " + r.out);
      return r.out;
    }

    String cli(String... args) throws Exception {
      return cli(0, args);
    }

    void kill() throws Exception {
      run(List.of("sh", script(), "kill", dir.toString()));
    }

    /** Starts it again on the same port (its data is gone: the test server keeps nothing on disk). */
    void restart() throws Exception {
      List<String> cmd = new ArrayList<>(List.of("sh", script(), "start", dir.toString(), "--port",
          String.valueOf(port), "--owner", String.valueOf(ProcessHandle.current().pid())));
      Run r = run(cmd);
      check(r.code == 0, "restarting redis-server on port " + port + " failed: " + r.out);
    }

    @Override
    public void close() throws Exception {
      run(List.of("sh", script(), "stop", dir.toString()));
    }
  }

  static final class Run {
    int code;
    String out;
  }

  static Run run(List<String> cmd) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    Process p = pb.start();
    Run r = new Run();
    r.out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    r.code = p.waitFor();
    return r;
  }

  static String root;

  /** tests/servers/redis.sh, found from the working directory or the worker binary upwards. */
  static String script() {
    if (root == null) {
      for (File d : new File[] {new File(System.getProperty("user.dir")), new File(workerPath).getAbsoluteFile()}) {
        for (File x = d; x != null; x = x.getParentFile()) {
          if (new File(x, "tests/servers/redis.sh").isFile()) {
            root = x.getPath();
            break;
          }
        }
        if (root != null) {
          break;
        }
      }
      check(root != null, "cannot find tests/servers/redis.sh");
    }
    return root + "/tests/servers/redis.sh";
  }

  static String workerPath = ".";

  /** A running server, or null (with the skip note) when redis-server is not installed. */
  static Server start(Ctx c, String password) throws Exception {
    workerPath = c.settings.worker;
    Path dir = Files.createTempDirectory("fnw-redis-");
    List<String> cmd = new ArrayList<>(List.of("sh", script(), "start", dir.toString(), "--owner",
        String.valueOf(ProcessHandle.current().pid())));
    if (password != null) {
      cmd.add("--requirepass");
      cmd.add(password);
    }
    Run r = run(cmd);
    if (r.code == 77) {
      c.note("skipped: redis-server not installed");
      return null;
    }
    check(r.code == 0, "redis.sh start failed: " + r.out);
    String[] lines = r.out.split("\n");
    return new Server(dir, Integer.parseInt(lines[lines.length - 1].trim()), password);
  }

  // ------------------------------------------------------------ helpers

  static OperationSpec redis(Server s, Map<String, String> options, String json) {
    Map<String, String> o = new java.util.LinkedHashMap<>(options);
    o.putIfAbsent("address", "127.0.0.1:" + (s == null ? 6379 : s.port));
    return RunnerRows.spec("redis", o, json);
  }

  /** users 0..n-1: ROW(id, "u<id>"), timestamp 1000 + id. */
  static List<In> users(int... ids) {
    List<In> in = new ArrayList<>();
    for (int id : ids) {
      in.add(new In(1000L + id, Row.of(id, "u" + id)));
    }
    return in;
  }

  static int[] range(int n) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    return a;
  }

  /** The output rows in arrival order, each checked to carry its input's timestamp (1000 + id). */
  static List<Row> rows(TypeInfo out, List<FunctionRunner.Result> results) {
    List<Row> l = new ArrayList<>();
    for (FunctionRunner.Result r : results) {
      check(r.tag.equals("output"), "a result came on '" + r.tag + "'");
      RunnerRows.Output o = RunnerRows.output(out, r.bytes);
      Row row = (Row) o.value;
      check(row != null, "a null output row");
      check(o.ts == 1000L + ((Number) row.get(0)).longValue(), "output " + row + " has timestamp " + o.ts);
      l.add(row);
    }
    return l;
  }

  /** Rows keyed by id (field 0), each id once. */
  static Map<Integer, Row> byId(List<Row> rows) {
    Map<Integer, Row> m = new HashMap<>();
    for (Row r : rows) {
      check(m.put((Integer) r.get(0), r) == null, "id " + r.get(0) + " came out twice");
    }
    return m;
  }

  static void expectRow(Map<Integer, Row> m, int id, Object... fields) {
    Row r = m.get(id);
    check(r != null, "no output for id " + id + "; got " + m.values());
    check(java.util.Arrays.equals(r.fields, fields), "id " + id + ": expected "
        + java.util.Arrays.toString(fields) + ", got " + r);
  }

  static FunctionRunner runner(Ctx c, Worker w, TypeInfo out, OperationSpec spec) {
    return c.runner(w, USER, out, spec);
  }

  /** Users 1..3 as strings, hashes and a counter. */
  static void load(Server s) throws Exception {
    s.cli("MSET", "city:1", "Oslo", "city:2", "Rome", "city:3", "Lima");
    s.cli("HSET", "user:1", "city", "Oslo", "age", "37", "zip", "0150");
    s.cli("HSET", "user:2", "city", "Rome", "age", "41");
    s.cli("HSET", "user:3", "age", "29");
  }

  // ------------------------------------------------------------ scenarios

  /** GET calls Redis has answered since it started. */
  static long getCalls(Server s) throws Exception {
    for (String line : s.cli("INFO", "commandstats").split("\n")) {
      if (line.startsWith("cmdstat_get:calls=")) {
        return Long.parseLong(line.substring("cmdstat_get:calls=".length()).split(",")[0].trim());
      }
    }
    return 0;
  }

  /**
   * cache_max_rows per element: 120 rows of ids 1..4 (4 has no key; cache_missing true) each get
   * their own id's city, in order, from 4 GETs; the next bundle on the same instance sends none.
   */
  static void lookupCache(Ctx c) throws Exception {
    Server s = start(c, null);
    if (s == null) {
      return;
    }
    try (s) {
      load(s);
      Worker w = c.worker();
      TypeInfo cityOut = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      FunctionRunner get = runner(c, w, cityOut, redis(s, opts("command", "GET city:{id}", "result_field", "city",
          "cache_max_rows", "100", "cache_missing", "true"), "{\"capacity\":50,\"timeoutMs\":5000}"));
      int[] ids = new int[120];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = i * 7 % 4 + 1;
      }
      String[] city = {null, "Oslo", "Rome", "Lima", null};
      long before = getCalls(s);
      for (int b = 0; b < 2; b++) {
        List<Row> out = rows(cityOut, Ctx.bundle(get, USER, users(ids)));
        check(out.size() == ids.length, "bundle " + b + ": " + out.size() + " outputs for " + ids.length + " rows");
        for (int i = 0; i < ids.length; i++) {
          Row r = out.get(i);
          check(java.util.Arrays.equals(r.fields, new Object[] {ids[i], "u" + ids[i], city[ids[i]]}),
              "row " + i + " (id " + ids[i] + "): got " + r);
        }
        long calls = getCalls(s) - before;
        check(calls == 4, "bundle " + b + ": Redis answered " + calls + " GETs for 4 distinct keys");
      }
    }
  }

  /** GET, HGET, HGETALL and HMGET per element; id 4 has no data (on_missing null: null fields). */
  static void perElement(Ctx c) throws Exception {
    Server s = start(c, null);
    if (s == null) {
      return;
    }
    try (s) {
      load(s);
      Worker w = c.worker();
      TypeInfo cityOut = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      FunctionRunner get = runner(c, w, cityOut, redis(s, opts("command", "GET city:{id}", "result_field", "city"),
          "{\"capacity\":10,\"timeoutMs\":5000}"));
      Map<Integer, Row> m = byId(rows(cityOut, Ctx.bundle(get, USER, users(1, 2, 3, 4))));
      expectRow(m, 1, 1, "u1", "Oslo");
      expectRow(m, 3, 3, "u3", "Lima");
      expectRow(m, 4, 4, "u4", null);

      TypeInfo ageOut = TypeInfo.parse("ROW<id:INT,age:LONG>");   // name is dropped
      FunctionRunner hget = runner(c, w, ageOut, redis(s, opts("command", "HGET user:{id} age", "result_field", "age"),
          "{\"timeoutMs\":5000}"));
      m = byId(rows(ageOut, Ctx.bundle(hget, USER, users(1, 2, 4))));
      expectRow(m, 1, 1, 37L);
      expectRow(m, 2, 2, 41L);
      expectRow(m, 4, 4, null);

      TypeInfo hashOut = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING,age:INT,zip:STRING>");
      FunctionRunner all = runner(c, w, hashOut, redis(s, opts("command", "HGETALL user:{id}"), "{\"timeoutMs\":5000}"));
      m = byId(rows(hashOut, Ctx.bundle(all, USER, users(1, 2, 3, 4))));
      expectRow(m, 1, 1, "u1", "Oslo", 37, "0150");
      expectRow(m, 2, 2, "u2", "Rome", 41, null);
      expectRow(m, 3, 3, "u3", null, 29, null);
      expectRow(m, 4, 4, "u4", null, null, null);

      TypeInfo hmOut = TypeInfo.parse("ROW<age:INT,id:INT,city:STRING>");
      FunctionRunner hm = runner(c, w, hmOut, redis(s, opts("command", "HMGET user:{id} city age"),
          "{\"timeoutMs\":5000}"));
      List<Row> got = new ArrayList<>();
      for (FunctionRunner.Result r : Ctx.bundle(hm, USER, users(2, 3))) {
        got.add((Row) RunnerRows.output(hmOut, r.bytes).value);
      }
      check(got.size() == 2, "HMGET: 2 inputs gave " + got);
      Row r2 = got.get(0).get(1).equals(2) ? got.get(0) : got.get(1);
      Row r3 = got.get(0).get(1).equals(3) ? got.get(0) : got.get(1);
      check(java.util.Arrays.equals(r2.fields, new Object[] {41, 2, "Rome"}), "HMGET user:2: " + r2);
      check(java.util.Arrays.equals(r3.fields, new Object[] {29, 3, null}), "HMGET user:3: " + r3);
    }
  }

  /** Batches of 4: GET becomes one MGET per batch (no GET reaches the server); HGETALL is pipelined. */
  static void batch(Ctx c) throws Exception {
    Server s = start(c, null);
    if (s == null) {
      return;
    }
    try (s) {
      List<String> mset = new ArrayList<>(List.of("MSET"));
      for (int i = 0; i < 10; i++) {
        mset.add("city:" + i);
        mset.add("c" + i);
        s.cli("HSET", "user:" + i, "city", "c" + i, "age", String.valueOf(20 + i));
      }
      s.cli(mset.toArray(new String[0]));
      s.cli("CONFIG", "RESETSTAT");
      Worker w = c.worker();
      TypeInfo cityOut = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      String json = "{\"mode\":\"BATCH\",\"batchSize\":4,\"timeoutMs\":5000,\"capacity\":100}";
      FunctionRunner get = runner(c, w, cityOut, redis(s, opts("command", "GET city:{id}", "result_field", "city"),
          json));
      Map<Integer, Row> m = byId(rows(cityOut, Ctx.bundle(get, USER, users(range(10)))));
      for (int i = 0; i < 10; i++) {
        expectRow(m, i, i, "u" + i, "c" + i);
      }
      expectMetric(get, "batches", 3);
      String stats = s.cli("INFO", "commandstats");
      check(stats.contains("cmdstat_mget:calls=3,"), "3 batches should be 3 MGETs: " + stats);
      check(!stats.contains("cmdstat_get:"), "no single GET should reach the server in batch mode: " + stats);

      TypeInfo hashOut = TypeInfo.parse("ROW<id:INT,city:STRING,age:INT>");
      FunctionRunner all = runner(c, w, hashOut, redis(s, opts("command", "HGETALL user:{id}"), json));
      m = byId(rows(hashOut, Ctx.bundle(all, USER, users(range(10)))));
      for (int i = 0; i < 10; i++) {
        expectRow(m, i, i, "c" + i, 20 + i);
      }
      check(s.cli("INFO", "commandstats").contains("cmdstat_hgetall:calls=10,"), "10 HGETALLs expected");
    }
  }

  /** on_missing: null keeps the row, empty drops it (counted), fail fails the bundle naming the command. */
  static void onMissing(Ctx c) throws Exception {
    Server s = start(c, null);
    if (s == null) {
      return;
    }
    try (s) {
      load(s);
      s.cli("HSET", "empty:1", "x", "1");
      s.cli("HDEL", "empty:1", "x");
      Worker w = c.worker();
      TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      for (String mode : new String[] {"PER_ELEMENT", "BATCH"}) {
        String json = mode.equals("BATCH") ? "{\"mode\":\"BATCH\",\"batchSize\":3,\"timeoutMs\":5000}"
            : "{\"timeoutMs\":5000}";
        FunctionRunner empty = runner(c, w, out, redis(s, opts("command", "GET city:{id}", "result_field", "city",
            "on_missing", "empty"), json));
        Map<Integer, Row> m = byId(rows(out, Ctx.bundle(empty, USER, users(1, 5, 2, 6, 7))));
        check(m.keySet().equals(java.util.Set.of(1, 2)), mode + ": on_missing empty should keep ids 1, 2: " + m);
        expectMetric(empty, "emptyResults", 3);
      }
      // HGETALL of a hash that does not exist is missing too
      TypeInfo hashOut = TypeInfo.parse("ROW<id:INT,city:STRING,age:INT>");
      FunctionRunner hall = runner(c, w, hashOut, redis(s, opts("command", "HGETALL user:{id}", "on_missing", "empty"),
          "{\"timeoutMs\":5000}"));
      check(byId(rows(hashOut, Ctx.bundle(hall, USER, users(1, 9)))).keySet().equals(java.util.Set.of(1)),
          "HGETALL of a missing hash should count as missing");
      expectMetric(hall, "emptyResults", 1);

      FunctionRunner fail = runner(c, w, out, redis(s, opts("command", "GET city:{id}", "result_field", "city",
          "on_missing", "fail"), "{\"timeoutMs\":5000}"));
      Ctx.send(fail, USER, users(1, 99));
      contains(Ctx.expectBundleError(fail), "GET city:99", "no value", "on_missing is fail", "input 1");
    }
  }

  /** requirepass + password_env, and db: the key lives in database 3 only. */
  static void authAndSelect(Ctx c) throws Exception {
    Server s = start(c, "s3cret-pw");
    if (s == null) {
      return;
    }
    try (s) {
      s.cli(3, "SET", "city:1", "Oslo-db3");
      s.cli(0, "SET", "city:1", "Oslo-db0");
      Worker w = c.worker(o -> o.env.put("FNW_SECRET_TEST_REDIS_PW", "s3cret-pw"));
      TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      FunctionRunner r = runner(c, w, out, redis(s, opts("command", "GET city:{id}", "result_field", "city",
          "password_env", "FNW_SECRET_TEST_REDIS_PW", "db", "3"), "{\"timeoutMs\":5000}"));
      expectRow(byId(rows(out, Ctx.bundle(r, USER, users(1)))), 1, 1, "u1", "Oslo-db3");
      // without the password: the server refuses every command, the bundle fails saying so
      FunctionRunner noauth = runner(c, w, out, redis(s, opts("command", "GET city:{id}", "result_field", "city"),
          "{\"timeoutMs\":5000}"));
      Ctx.send(noauth, USER, users(1));
      contains(Ctx.expectBundleError(noauth), "NOAUTH");
      // a variable that is not set fails at open, naming option and variable
      FunctionRunner unset = runner(c, w, out, redis(s, opts("command", "GET city:{id}", "result_field", "city",
          "password_env", "FNW_SECRET_NO_SUCH_VAR"), "{\"timeoutMs\":5000}"));
      Ctx.send(unset, USER, users(1));
      String err = Ctx.expectBundleError(unset);
      contains(err, "'password_env'", "FNW_SECRET_NO_SUCH_VAR");
      check(!err.contains("s3cret"), "the password leaked into a message: " + err);
    }
  }

  /** Options are checked when the bundle starts, naming the option and the field; no server needed. */
  static void badOptions(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
    String[][] cases = {
        {"command", "GET city:{nope}", "result_field", "city", "'command'", "nope"},
        {"command", "GET city:{id}", "result_field", "name", "output field 'city'", "'result_field'"},
        {"command", "GET city:{id}", "result_field", "town", "'town'", "'result_field'"},
        {"command", "GET city:{id}", "result_field", "city", "address", "localhost:6379", "'address'", "IPv4"},
        {"command", "GET city:{id}", "result_field", "city", "pool_size", "0", "'pool_size'", ""},
        {"command", "GET city:{id}", "result_field", "city", "on_missing", "drop", "'on_missing'", "drop"},
        {"command", "GET city:{id}", "result_field", "city", "ttl", "3", "unknown option 'ttl'", ""},
    };
    for (String[] k : cases) {
      Map<String, String> o = new java.util.LinkedHashMap<>();
      for (int i = 0; i + 3 < k.length; i += 2) {
        o.put(k[i], k[i + 1]);
      }
      FunctionRunner r = runner(c, w, out, redis(null, o, "{\"timeoutMs\":5000}"));
      Ctx.send(r, USER, users(1));
      String err = Ctx.expectBundleError(r);
      contains(err, "redis", k[k.length - 2], k[k.length - 1], T0);
    }
    AsyncScenarios.stillServes(c, w);
  }

  /**
   * 600 GETs per element, the server killed after the first results and the second half sent while it is
   * down. With retries (on error, 50 ms apart) and the server restarted: every input exactly once with its
   * value. Without retries: the bundle fails naming the server.
   */
  static void serverKilled(Ctx c) throws Exception {
    Server s = start(c, null);
    if (s == null) {
      return;
    }
    try (s) {
      int n = 600;
      List<String> mset = new ArrayList<>(List.of("MSET"));
      for (int i = 0; i < n; i++) {
        mset.add("city:" + i);
        mset.add("c" + i);
      }
      s.cli(mset.toArray(new String[0]));
      Worker w = c.worker();
      TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
      // missing counts as an error, so a row that reaches the restarted server before its data is retried too
      FunctionRunner r = runner(c, w, out, redis(s, opts("command", "GET city:{id}", "result_field", "city",
          "on_missing", "fail"), "{\"outputMode\":\"UNORDERED\",\"capacity\":20,\"timeoutMs\":60000,"
          + "\"retry\":{\"kind\":\"FIXED_DELAY\",\"maxAttempts\":1000,\"delayMs\":50,\"retryOnError\":true}}"));
      List<In> in = users(range(n));
      Ctx.send(r, USER, in.subList(0, n / 2));
      r.sendBuffered();
      List<FunctionRunner.Result> results = new ArrayList<>();
      FunctionRunner.Result first = r.takeResult(c.ms(10_000));
      check(first != null, "no result within 10 s");
      results.add(first);
      s.kill();
      Ctx.send(r, USER, in.subList(n / 2, n));
      r.sendBuffered();
      Thread.sleep(300);
      s.restart();
      s.cli(mset.toArray(new String[0]));
      r.flush();
      results.addAll(Ctx.drain(r));
      Map<Integer, Row> m = byId(rows(out, results));
      check(m.size() == n, "sent " + n + ", got " + m.size() + " back");
      for (int i = 0; i < n; i++) {
        expectRow(m, i, i, "u" + i, "c" + i);
      }
      long retries = metric(r, T0, "retries").value;
      check(retries > 0, "the kill should have caused retries");
      c.note(retries + " retries");

      // without retries: the bundle fails with the server's address and what went wrong
      FunctionRunner once = runner(c, w, out, redis(s, opts("command", "GET city:{id}", "result_field", "city"),
          "{\"capacity\":20,\"timeoutMs\":10000}"));
      Ctx.send(once, USER, in.subList(0, 10));
      once.sendBuffered();
      check(once.takeResult(c.ms(10_000)) != null, "no result within 10 s");
      s.kill();
      Ctx.send(once, USER, in.subList(10, 50));
      String err = Ctx.expectBundleError(once);
      contains(err, "redis 127.0.0.1:" + s.port, T0);
      check(err.contains("no connection is up") || err.contains("connection lost") || err.contains("cannot connect"),
          "the error should say the connection is gone: " + err);
    }
  }
}
