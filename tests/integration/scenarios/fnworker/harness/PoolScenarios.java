// Integration scenario for the sidecar set-up: `fnworker pool` runs the real
// worker, and the harness launches pyflink-udf-runner.sh with FNW_POOL_ADDRESS
// pointing at it (as a TaskManager without the worker's libraries would), from
// a runner directory that holds only the script. A job runs end to end, the
// worker's output reaches the boot log through the launcher, the pool's
// /metrics shows the worker's bundles and records, the launcher exits with
// the worker's code, and the pool exits 0 on SIGTERM. The pool runs with a
// 1 s start deadline (--start-timeout) and the job pauses past it: a real
// worker that connected tells the pool so and is not stopped.
// Listed in IntegrationTests.scenarios() through scenarios().
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

final class PoolScenarios {
  private PoolScenarios() {}

  static List<Scenario> scenarios() {
    return List.of(new Scenario("launched_via_worker_pool", PoolScenarios::viaPool));
  }

  /** Reads the pool's start-up lines; returns its launcher and HTTP addresses. */
  static String[] startPool(Process p, StringBuilder log) throws Exception {
    BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
    Pattern addr = Pattern.compile("(launcher|HTTP) endpoint on (\\S+)");
    String[] found = new String[2];
    for (String line; (line = err.readLine()) != null; ) {
      log.append(line).append('\n');
      Matcher m = addr.matcher(line);
      if (m.find()) {
        found[m.group(1).equals("launcher") ? 0 : 1] = m.group(2);
      }
      if (line.contains("ready")) {
        break;
      }
    }
    Thread drain = new Thread(() -> {
      try {
        for (String line; (line = err.readLine()) != null; ) {
          synchronized (log) {
            log.append(line).append('\n');
          }
        }
      } catch (Exception e) {
        // the pool ended
      }
    });
    drain.setDaemon(true);
    drain.start();
    check(found[0] != null && found[1] != null, "the pool did not start: " + log);
    return found;
  }

  static String get(String addr, String path) throws Exception {
    java.net.HttpURLConnection h =
        (java.net.HttpURLConnection) new java.net.URL("http://" + addr + path).openConnection();
    try (java.io.InputStream in = h.getInputStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } finally {
      h.disconnect();
    }
  }

  /** Polls /metrics until it matches (the worker reports once a second). */
  static String awaitMetrics(Ctx c, String http, Pattern want) throws Exception {
    long end = System.nanoTime() + c.ms(10_000) * 1_000_000L;
    String m = "";
    while (System.nanoTime() < end) {
      m = get(http, "/metrics");
      if (want.matcher(m).find()) {
        return m;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("/metrics never showed " + want + ":\n" + m);
  }

  static void viaPool(Ctx c) throws Exception {
    check(c.settings.runnerScript != null && new File(c.settings.runnerScript).isFile(),
        "no runner script (--runner-script scripts/pyflink-udf-runner.sh)");
    String bin = Path.of(c.settings.worker).toAbsolutePath().toString();
    Process pool = new ProcessBuilder(bin, "pool", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
        "--start-timeout", "1").start();
    StringBuilder poolLog = new StringBuilder();
    Path dir = Files.createTempDirectory("fnw-pool-runner-dir-");
    try {
      String[] addrs = startPool(pool, poolLog);
      String addr = addrs[0];
      Path script = dir.resolve(Worker.RUNNER_SCRIPT);
      Files.copy(Path.of(c.settings.runnerScript), script, StandardCopyOption.REPLACE_EXISTING);
      script.toFile().setExecutable(true);
      // no fnworker next to the script: only the pool can run the worker
      Worker w = c.worker(o -> {
        o.runnerDir = dir.toString();
        o.env.put("FNW_POOL_ADDRESS", addr);
        o.selfExitWaitMs = 5000;   // the worker ends with Control; its code comes back through the pool
      });
      TypeInfo ty = t("ROW<a:LONG,b:STRING>");
      FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
      for (int b = 0; b < 3; b++) {
        List<In> in = values(ty, 200, 10 + b);
        Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
        if (b == 0) {
          Thread.sleep(1500);   // past the start deadline: the worker said it connected
        }
      }
      // the worker's own figures, through its stats pipe, and its memory
      String m = awaitMetrics(c, addrs[1], Pattern.compile(
          "(?m)^fnworker_pool_worker_bundles_total\\{[^}]*\\} 3$"));
      check(Pattern.compile("(?m)^fnworker_pool_worker_records_in_total\\{[^}]*\\} 600$").matcher(m).find()
          && Pattern.compile("(?m)^fnworker_pool_worker_records_out_total\\{[^}]*\\} 600$").matcher(m).find()
          && Pattern.compile("(?m)^fnworker_pool_worker_rss_bytes\\{[^}]*\\} [1-9]").matcher(m).find(),
          "unexpected /metrics:\n" + m);
      check(get(addrs[1], "/healthz").startsWith("ok"), "/healthz is not ok");
      String boot = w.process().bootLog();
      check(boot.contains("fnworker"), "the worker's output is not in the boot log: " + boot);
      w.close();
      check(w.exitCode() != null && w.exitCode() == 0, "the launcher exited " + w.exitCode()
          + " (it should return the worker's 0)");
      pool.destroy();   // SIGTERM: no worker runs, the pool exits at once
      check(pool.waitFor(c.ms(5000), TimeUnit.MILLISECONDS), "the pool did not exit after SIGTERM");
      check(pool.exitValue() == 0, "the pool exited " + pool.exitValue() + ": " + poolLog);
    } finally {
      pool.destroyForcibly();
      LifecycleScenarios.deleteTree(dir);
    }
  }
}
