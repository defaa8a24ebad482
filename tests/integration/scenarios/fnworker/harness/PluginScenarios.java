// Integration scenarios for operation plugins (include/fnworker.h, "plugins"):
// the example plugins make builds into build/plugins/ (examples/plugins/) are
// loaded by the real worker from a directory named by --plugins-dir, by
// FNW_PLUGINS_DIR, or found beside the executable, and rows run through them:
// dns_lookup (asynchronous, c-ares on the loop) against the test DNS server
// on 127.0.0.1 (tests/servers/dns_server.py), sha256_hex (blocking, on the
// pool threads) per element and in batches. A plugin that cannot be loaded
// stops the worker at start with exit code 2 and a message naming the file.
package fnworker.harness;

import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

final class PluginScenarios {
  private PluginScenarios() {}

  static List<Scenario> scenarios() {
    return List.of(
        new Scenario("plugin_dns_lookup_async", PluginScenarios::dnsLookup),
        new Scenario("plugin_sha256_blocking", PluginScenarios::sha256Blocking),
        new Scenario("plugin_bad_stops_worker", PluginScenarios::badPlugin));
  }

  static TypeInfo t(String s) {
    return TypeInfo.parse(s);
  }

  /** build/plugins, beside the worker binary. */
  static Path builtPlugins(Ctx c) {
    return Path.of(c.settings.worker).toAbsolutePath().getParent().resolve("plugins");
  }

  static Path repoRoot(Ctx c) {
    check(c.settings.runnerScript != null, "no runner script (--runner-script scripts/pyflink-udf-runner.sh)");
    return Path.of(c.settings.runnerScript).toAbsolutePath().getParent().getParent();
  }

  /** A fresh directory holding copies of the named example plugins. */
  static Path pluginDir(Ctx c, String... names) throws IOException {
    Path dir = Files.createTempDirectory("fnw-plugins-");
    for (String n : names) {
      Path so = builtPlugins(c).resolve(n + ".so");
      check(Files.isRegularFile(so), "example plugin " + so + " is missing (make builds it)");
      Files.copy(so, dir.resolve(n + ".so"), StandardCopyOption.REPLACE_EXISTING);
    }
    return dir;
  }

  static void deleteTree(Path p) throws IOException {
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
  }

  /** The test DNS server on 127.0.0.1; its port once it listens. Closing its stdin stops it. */
  static Process startDns(Ctx c, Path dir) throws Exception {
    Path root = repoRoot(c);
    Path portFile = dir.resolve("dns.port");
    ProcessBuilder pb = new ProcessBuilder("python3", root.resolve("tests/servers/dns_server.py").toString(),
        root.resolve("tests/servers/dns_fixture.txt").toString(), portFile.toString());
    pb.redirectErrorStream(true).redirectOutput(dir.resolve("dns.log").toFile());
    Process p = pb.start();
    long until = System.currentTimeMillis() + c.ms(10_000);
    while (!Files.exists(portFile) && p.isAlive() && System.currentTimeMillis() < until) {
      Thread.sleep(20);
    }
    if (!Files.exists(portFile)) {
      p.destroyForcibly();
      throw new Scenario.Failure("the test DNS server did not start: " + Files.readString(dir.resolve("dns.log")));
    }
    return p;
  }

  /** Hosts in the fixture resolve, others give null, a null host gives null, a null row stays null. */
  static void dnsLookup(Ctx c) throws Exception {
    Path dir = pluginDir(c, "dns");
    Process dns = startDns(c, dir);
    try {
      String port = Files.readString(dir.resolve("dns.port")).trim();
      Worker w = c.worker(o -> o.extraArgs.add("--plugins-dir=" + dir));
      TypeInfo ty = t("ROW<host:STRING,ip:STRING>");
      FunctionRunner r = c.runner(w, ty, ty,
          RunnerRows.spec("dns_lookup", Map.of("servers", "127.0.0.1:" + port, "timeout_ms", "5000"),
              "{\"capacity\": 8}"));
      String[][] cases = {
          {"alpha.fnworker.test", null, "10.1.2.3"},
          {"beta.fnworker.test", "stale", "192.0.2.44"},
          {"unknown.fnworker.test", "stale", null},
          {null, "stale", null},
      };
      List<In> in = new ArrayList<>();
      List<In> want = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        String[] k = cases[i % cases.length];
        in.add(new In(100 + i, Row.of(k[0], k[1])));
        want.add(new In(100 + i, Row.of(k[0], k[2])));
      }
      in.add(new In(999, null));
      want.add(new In(999, null));
      Ctx.expectSame(ty, want, Ctx.bundle(r, ty, in));
      Ctx.expectSame(ty, want, Ctx.bundle(r, ty, in));   // the instance is reused across bundles
    } finally {
      dns.getOutputStream().close();
      dns.waitFor(5, TimeUnit.SECONDS);
      dns.destroyForcibly();
      deleteTree(dir);
    }
  }

  static String sha256Hex(String s) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
  }

  static void sha256Rows(Ctx c, Worker w, boolean batch) throws Exception {
    TypeInfo ty = t("ROW<text:STRING,digest:STRING>");
    String json = batch ? "{\"capacity\": 16, \"batchSize\": 5, \"timeoutMs\": 30000}" : "{\"capacity\": 16}";
    var spec = RunnerRows.spec("sha256_hex", Map.of(), json);
    FunctionRunner r = c.runner(w, ty, ty, batch ? RunnerRows.batchMode(spec) : spec);
    List<In> in = new ArrayList<>();
    List<In> want = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      String text = i % 7 == 6 ? null : "row " + i + " " + "x".repeat(i);
      in.add(new In(i, Row.of(text, "old")));
      want.add(new In(i, Row.of(text, text == null ? null : sha256Hex(text))));
    }
    Ctx.expectSame(ty, want, Ctx.bundle(r, ty, in));
  }

  /** Named by FNW_PLUGINS_DIR, then found in plugins/ beside the executable with neither given. */
  static void sha256Blocking(Ctx c) throws Exception {
    Path dir = pluginDir(c, "sha256");
    try {
      Worker w = c.worker(o -> {
        o.env.put("FNW_PLUGINS_DIR", dir.toString());
        o.extraArgs.add("--blocking-threads=2");
      });
      sha256Rows(c, w, false);
      sha256Rows(c, w, true);
      Worker dflt = c.worker(o -> o.env.remove("FNW_PLUGINS_DIR"));
      sha256Rows(c, dflt, false);
    } finally {
      deleteTree(dir);
    }
  }

  /** Runs the worker binary as far as loading plugins; returns exit code and output. */
  static String[] startOnly(Ctx c, Map<String, String> env, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(c.settings.worker, "--id=plugin-check",
        "--provision_endpoint=127.0.0.1:9"));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().remove("FNW_PLUGINS_DIR");
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    if (!p.waitFor(c.ms(10_000), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new Scenario.Failure("the worker kept running with a bad plugin: " + String.join(" ", cmd));
    }
    return new String[]{String.valueOf(p.exitValue()), new String(p.getInputStream().readAllBytes(),
        StandardCharsets.UTF_8)};
  }

  /** An unloadable *.so and a missing named directory stop the worker with exit code 2, naming them. */
  static void badPlugin(Ctx c) throws Exception {
    Path dir = pluginDir(c, "sha256");
    try {
      Path broken = dir.resolve("zz-broken.so");
      Files.writeString(broken, "not a shared object\n");
      String[] res = startOnly(c, Map.of(), "--plugins-dir=" + dir);
      check(res[0].equals("2"), "exit code " + res[0] + " with a broken plugin (expected 2); output: " + res[1]);
      check(res[1].contains(broken.toString()), "the message should name " + broken + "; output: " + res[1]);
      Path missing = dir.resolve("no-such-dir");
      res = startOnly(c, Map.of("FNW_PLUGINS_DIR", missing.toString()));
      check(res[0].equals("2"), "exit code " + res[0] + " with a missing FNW_PLUGINS_DIR (expected 2); output: "
          + res[1]);
      check(res[1].contains(missing.toString()), "the message should name " + missing + "; output: " + res[1]);
    } finally {
      deleteTree(dir);
    }
  }
}
