// Integration scenario: the secrets operations read from the environment
// (redis password_env, http header.X=env:VAR or {env:VAR}, kserve
// auth_header_env) never show in what leaves the worker: the bundle errors,
// its log entries (at DEBUG) and its stdout/stderr, and the metrics of its
// bundles; not when the secret is wrong, the URL is bad, the server is down,
// nor when the server quotes the secret back (a header echoed into a field
// that cannot take it, a gRPC status naming the rejected token). A server
// that is not installed (redis-server, python3 with grpcio) skips its part.
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.contains;
import static fnworker.harness.AsyncScenarios.opts;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.HttpScenarios.Server;
import fnworker.harness.Scenario.Ctx;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.pipeline.v1.MetricsApi;

final class SecretScenarios {
  private SecretScenarios() {}

  static List<Scenario> scenarios() {
    return List.of(new Scenario("secrets_never_shown", SecretScenarios::neverShown),
        new Scenario("secrets_only_operator_allowed_env", SecretScenarios::onlyAllowedEnv));
  }

  static final String REDIS_PW = "rEdIs-pw-5521";
  static final String TOKEN = "hTtP-token-9034";
  static final String KSERVE_KEY = "kSeRvE-key-7781";
  static final List<String> SECRETS = List.of(REDIS_PW, TOKEN, KSERVE_KEY);

  /** What the scenario collects from the worker to search for the secrets. */
  static final class Seen {
    final List<String> errors = new ArrayList<>();
    final List<FunctionRunner> runners = new ArrayList<>();

    String fail(FunctionRunner r, String what) {
      runners.add(r);
      String e = Ctx.expectBundleError(r);
      errors.add(what + ": " + e);
      return e;
    }
  }

  static void noSecret(String where, String text) {
    for (String s : SECRETS) {
      check(!text.contains(s), where + " shows the secret " + s + ": " + text);
    }
  }

  static void neverShown(Ctx c) throws Exception {
    Worker w = c.worker(o -> {
      o.env.put("FNW_SECRET_T_REDIS_PW", REDIS_PW);
      o.env.put("FNW_SECRET_T_TOKEN", TOKEN);
      o.env.put("FNW_SECRET_T_KSERVE", "Bearer " + KSERVE_KEY);
      o.pipelineOptions.put(LifecycleScenarios.LOG_LEVEL_OPTION, "DEBUG");
    });
    Seen seen = new Seen();
    redis(c, w, seen);
    http(c, w, seen);
    kserve(c, w, seen);
    for (String e : seen.errors) {
      noSecret("a bundle error", e);
    }
    int infos = 0;
    for (FunctionRunner r : seen.runners) {
      for (FunctionRunner.BundleRecord b : r.bundles()) {
        for (MetricsApi.MonitoringInfo m : b.monitoringInfos == null ? List.<MetricsApi.MonitoringInfo>of()
            : b.monitoringInfos) {
          infos++;
          noSecret("a metric", new String(m.toByteArray(), StandardCharsets.ISO_8859_1));
        }
      }
    }
    AsyncScenarios.stillServes(c, w);
    Thread.sleep(c.ms(300));   // log entries are sent within a few ms
    int entries = 0;
    for (BeamFnApi.LogEntry e : w.servers.logging.entries()) {
      entries++;
      noSecret("a log entry", new String(e.toByteArray(), StandardCharsets.ISO_8859_1));
    }
    noSecret("the worker's output", w.process().output());
    check(entries > 0, "no log entry reached the Logging service");
    c.note(seen.errors.size() + " bundle errors, " + infos + " metrics, " + entries + " log entries searched");
  }

  static void redis(Ctx c, Worker w, Seen seen) throws Exception {
    TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
    RedisScenarios.Server s = RedisScenarios.start(c, "the-right-pw");
    if (s != null) {
      try (s) {
        s.cli("SET", "city:1", "Oslo");
        FunctionRunner r = RedisScenarios.runner(c, w, out, RedisScenarios.redis(s, opts("command", "GET city:{id}",
            "result_field", "city", "password_env", "FNW_SECRET_T_REDIS_PW"), "{\"timeoutMs\":10000}"));
        Ctx.send(r, RedisScenarios.USER, RedisScenarios.users(1));
        contains(seen.fail(r, "redis, wrong password"), "FNW_SECRET_T_REDIS_PW");
      }
    }
    FunctionRunner down = RedisScenarios.runner(c, w, out, RedisScenarios.redis(null, opts("address", "127.0.0.1:9",
        "command", "GET city:{id}", "result_field", "city", "password_env", "FNW_SECRET_T_REDIS_PW"),
        "{\"timeoutMs\":2000}"));
    Ctx.send(down, RedisScenarios.USER, RedisScenarios.users(1));
    contains(seen.fail(down, "redis, no server"), "127.0.0.1:9");
  }

  static void http(Ctx c, Worker w, Seen seen) throws Exception {
    TypeInfo keys = HttpScenarios.KEYS;
    TypeInfo tagged = TypeInfo.parse("ROW<k:STRING,id:LONG,tag:STRING>");
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py != null) {
        // a successful bundle, for its metrics
        FunctionRunner ok = HttpScenarios.runner(c, w, keys, tagged, HttpScenarios.spec(opts("url",
            py.url("/headers"), "header.Authorization", "Bearer {env:FNW_SECRET_T_TOKEN}", "header.X-Tag", "t-{k}",
            "result.tag", "/x-tag"), "{\"timeoutMs\":10000}"));
        seen.runners.add(ok);
        Ctx.bundle(ok, keys, HttpScenarios.rows(3, "a"));
        // the server echoes the token into a field that cannot take it: the message quotes the value
        TypeInfo num = TypeInfo.parse("ROW<k:STRING,id:LONG,n:LONG>");
        FunctionRunner echo = HttpScenarios.runner(c, w, keys, num, HttpScenarios.spec(opts("url",
            py.url("/headers"), "header.Authorization", "Bearer {env:FNW_SECRET_T_TOKEN}", "result.n", "/authorization"),
            "{\"timeoutMs\":10000}"));
        Ctx.send(echo, keys, HttpScenarios.rows(1, "a"));
        contains(seen.fail(echo, "http, echoed token"), "LONG", "****");
      }
    }
    FunctionRunner down = HttpScenarios.runner(c, w, keys, keys, HttpScenarios.spec(opts("url",
        "http://127.0.0.1:9/x", "header.Authorization", "env:FNW_SECRET_T_TOKEN"), "{\"timeoutMs\":10000}"));
    Ctx.send(down, keys, HttpScenarios.rows(1, "a"));
    seen.fail(down, "http, no server");
    FunctionRunner bad = HttpScenarios.runner(c, w, keys, keys, HttpScenarios.spec(opts("url",
        "http://127.0.0.1:99999/x", "header.Authorization", "env:FNW_SECRET_T_TOKEN"), "{\"timeoutMs\":10000}"));
    Ctx.send(bad, keys, HttpScenarios.rows(1, "a"));
    seen.fail(bad, "http, bad URL");
  }

  static void kserve(Ctx c, Worker w, Seen seen) throws Exception {
    TypeInfo in = KServeScenarios.IN;
    TypeInfo out = KServeScenarios.OUT;
    try (Server s = KServeScenarios.start(c)) {
      if (s != null) {
        Server.run(c, "kserve.sh", "inject", s.dir.getPath(), "{\"linear\": {\"echo_auth\": true}}");
        FunctionRunner r = KServeScenarios.runner(c, w, in, out, KServeScenarios.spec(KServeScenarios.linear(s,
            "auth_header_env", "FNW_SECRET_T_KSERVE"), "{\"timeoutMs\":30000}"));
        Ctx.send(r, in, KServeScenarios.rows(1));
        contains(seen.fail(r, "kserve, token rejected"), "UNAUTHENTICATED", "token rejected");
      }
    }
    FunctionRunner down = KServeScenarios.runner(c, w, in, out, KServeScenarios.spec(opts("target", "127.0.0.1:9",
        "model_name", "linear", "inputs", "x:FP32[4]=features", "outputs", "y:FP32[2]=scores",
        "auth_header_env", "FNW_SECRET_T_KSERVE", "connect_timeout_ms", "300"), "{\"timeoutMs\":1000}"));
    Ctx.send(down, in, KServeScenarios.rows(1));
    contains(seen.fail(down, "kserve, no server"), "'127.0.0.1:9'");
  }

  /**
   * A job may name only the environment variables the operator allowed (names starting with
   * FNW_SECRETS_PREFIX, default FNW_SECRET_, and the names in FNW_SECRETS_ALLOW): any other fails the
   * bundle at open, in every operation, naming the variable and the rule, and its value goes nowhere.
   */
  static void onlyAllowedEnv(Ctx c) throws Exception {
    String dbPw = "sIdEcAr-db-pw-3311";
    String tok = "aLlOwEd-tok-6402";
    Worker w = c.worker(o -> {
      o.env.put("SIDECAR_DB_PASSWORD", dbPw);
      o.env.put("FNW_SECRET_T_TOKEN", tok);
    });
    TypeInfo keys = HttpScenarios.KEYS;
    TypeInfo echoed = TypeInfo.parse("ROW<k:STRING,id:LONG,x:STRING>");
    String rule = "starting with 'FNW_SECRET_'";
    try (Server py = Server.start(c, "pyhttp.sh")) {
      String url = py == null ? "http://127.0.0.1:9/headers" : py.url("/headers");
      FunctionRunner h = HttpScenarios.runner(c, w, keys, echoed, HttpScenarios.spec(opts("url", url,
          "header.X", "Bearer {env:SIDECAR_DB_PASSWORD}", "result.x", "/x"), "{\"timeoutMs\":10000}"));
      Ctx.send(h, keys, HttpScenarios.rows(1, "a"));
      String e = Ctx.expectBundleError(h);
      contains(e, "header.X", "'SIDECAR_DB_PASSWORD' is not one the operator allows", rule, "FNW_SECRETS_ALLOW");
      check(!e.contains(dbPw), "the error shows the value: " + e);
      if (py != null) {
        // a name with the prefix is allowed: its value reaches the server the job named
        FunctionRunner ok = HttpScenarios.runner(c, w, keys, echoed, HttpScenarios.spec(opts("url", url,
            "header.X", "env:FNW_SECRET_T_TOKEN", "result.x", "/x"), "{\"timeoutMs\":10000}"));
        Row row = HttpScenarios.byId(echoed, Ctx.bundle(ok, keys, HttpScenarios.rows(1, "a"))).get(0L);
        check(row != null && tok.equals(row.get(2)), "the allowed secret did not arrive: " + row);
      }
    }
    TypeInfo out = TypeInfo.parse("ROW<id:INT,name:STRING,city:STRING>");
    FunctionRunner r = RedisScenarios.runner(c, w, out, RedisScenarios.redis(null, opts("address", "127.0.0.1:9",
        "command", "GET city:{id}", "result_field", "city", "password_env", "SIDECAR_DB_PASSWORD"),
        "{\"timeoutMs\":2000}"));
    Ctx.send(r, RedisScenarios.USER, RedisScenarios.users(1));
    contains(Ctx.expectBundleError(r), "'password_env'", "'SIDECAR_DB_PASSWORD' is not one the operator allows", rule);
    FunctionRunner k = KServeScenarios.runner(c, w, KServeScenarios.IN, KServeScenarios.OUT,
        KServeScenarios.spec(opts("target", "127.0.0.1:9", "model_name", "linear", "inputs", "x:FP32[4]=features",
            "outputs", "y:FP32[2]=scores", "auth_header_env", "SIDECAR_DB_PASSWORD", "connect_timeout_ms", "300"),
            "{\"timeoutMs\":1000}"));
    Ctx.send(k, KServeScenarios.IN, KServeScenarios.rows(1));
    contains(Ctx.expectBundleError(k), "'auth_header_env'", "'SIDECAR_DB_PASSWORD' is not one the operator allows");
    check(!w.process().output().contains(dbPw), "the worker's output shows the value");

    // the operator's list allows an exact name; an empty prefix allows no prefix
    Worker listed = c.worker(o -> {
      o.env.put("SIDECAR_DB_PASSWORD", dbPw);
      o.env.put("FNW_SECRET_T_TOKEN", tok);
      o.env.put("FNW_SECRETS_ALLOW", "OTHER_NAME,SIDECAR_DB_PASSWORD");
      o.env.put("FNW_SECRETS_PREFIX", "");
    });
    FunctionRunner pre = HttpScenarios.runner(c, listed, keys, keys, HttpScenarios.spec(opts("url",
        "http://127.0.0.1:9/x", "header.X", "env:FNW_SECRET_T_TOKEN"), "{\"timeoutMs\":10000}"));
    Ctx.send(pre, keys, HttpScenarios.rows(1, "a"));
    contains(Ctx.expectBundleError(pre), "'FNW_SECRET_T_TOKEN' is not one the operator allows", "no prefix");
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py != null) {
        FunctionRunner ok = HttpScenarios.runner(c, listed, keys, echoed, HttpScenarios.spec(opts("url",
            py.url("/headers"), "header.X", "env:SIDECAR_DB_PASSWORD", "result.x", "/x"), "{\"timeoutMs\":10000}"));
        Row row = HttpScenarios.byId(echoed, Ctx.bundle(ok, keys, HttpScenarios.rows(1, "a"))).get(0L);
        check(row != null && dbPw.equals(row.get(2)), "the listed variable did not arrive: " + row);
      }
    }
  }
}
