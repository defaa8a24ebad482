// Integration scenarios about the worker as a process and a Beam Fn API
// client rather than about the rows it carries: launched through Flink's
// pyflink-udf-runner.sh, the five-flag command line, worker_id headers on
// every RPC, descriptors sent in a register request, unknown instruction
// kinds, log entries and the log level taken from pipeline options, and how
// it ends (runner gone mid-bundle, SIGTERM, Control closed cleanly).
// Listed in IntegrationTests.scenarios().
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.tail;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;

final class LifecycleScenarios {
  private LifecycleScenarios() {}

  static final String CONTROL = "org.apache.beam.model.fn_execution.v1.BeamFnControl/Control";
  static final String LOGGING = "org.apache.beam.model.fn_execution.v1.BeamFnLogging/Logging";
  static final String DATA = "org.apache.beam.model.fn_execution.v1.BeamFnData/Data";
  static final String PROVISION = "org.apache.beam.model.fn_execution.v1.ProvisionService/GetProvisionInfo";

  /** Requests the worker does not support get an error naming them; bundles still work. */
  static void unknownInstruction(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("STRING");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 5, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    String[][] kinds = {{"process_bundle_split", "split"}, {"harness_monitoring_infos", "monitoring"}};
    for (String[] k : kinds) {
      BeamFnApi.InstructionRequest.Builder req = BeamFnApi.InstructionRequest.newBuilder()
          .setInstructionId(w.nextInstructionId());
      if (k[0].equals("process_bundle_split")) {
        req.setProcessBundleSplit(BeamFnApi.ProcessBundleSplitRequest.newBuilder().setInstructionId("1")
            .putDesiredSplits(DescriptorBuilder.READ_ID, BeamFnApi.ProcessBundleSplitRequest.DesiredSplit
                .newBuilder().setFractionOfRemainder(0.5).build()));
      } else {
        req.setHarnessMonitoringInfos(BeamFnApi.HarnessMonitoringInfosRequest.getDefaultInstance());
      }
      BeamFnApi.InstructionResponse resp = w.control().sendRaw(req.build()).get(c.ms(10_000), TimeUnit.MILLISECONDS);
      check(resp.getInstructionId().equals(req.getInstructionId()), "response id " + resp.getInstructionId());
      String e = resp.getError().toLowerCase(Locale.ROOT);
      check(!e.isEmpty(), k[0] + ": expected an error response, got " + resp);
      check(e.contains(k[0]) || e.contains(k[0].replace("_", " ")) || e.contains(k[0].replace("_", "")),
          k[0] + ": the error should name the request kind: " + resp.getError());
    }
    in = values(ty, 5, 2);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
  }

  /**
   * Flink's way: PYFLINK_UDF_RUNNER_DIR/pyflink-udf-runner.sh, with fnworker next to
   * the script or named by FNWORKER_BIN; the boot log appears, the worker runs in
   * _PYTHON_WORKING_DIR under the script's pid.
   */
  static void viaRunnerScript(Ctx c) throws Exception {
    check(c.settings.runnerScript != null && new File(c.settings.runnerScript).isFile(),
        "no runner script (--runner-script scripts/pyflink-udf-runner.sh)");
    for (boolean viaEnv : new boolean[]{false, true}) {
      Path dir = Files.createTempDirectory("fnw-runner-dir-");
      Path work = Files.createTempDirectory("fnw-working-dir-");
      try {
        Path script = dir.resolve(Worker.RUNNER_SCRIPT);
        Files.copy(Path.of(c.settings.runnerScript), script, StandardCopyOption.REPLACE_EXISTING);
        script.toFile().setExecutable(true);
        String bin = Path.of(c.settings.worker).toAbsolutePath().toString();
        if (!viaEnv) {
          Files.createSymbolicLink(dir.resolve("fnworker"), Path.of(bin));
        }
        Worker w = c.worker(o -> {
          o.runnerDir = dir.toString();
          o.env.put("_PYTHON_WORKING_DIR", work.toString());
          if (viaEnv) {
            o.env.put("FNWORKER_BIN", bin);
          }
        });
        TypeInfo ty = t("ROW<a:LONG,b:STRING>");
        FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
        List<In> in = values(ty, 50, 3);
        Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
        Path boot = w.tmpDir.resolve(WorkerProcess.BOOT_LOG_NAME);
        check(Files.exists(boot), "no boot log at " + boot);
        Path cwd = Files.readSymbolicLink(Path.of("/proc/" + w.process().pid() + "/cwd"));
        check(cwd.equals(work.toRealPath()), "the worker should run in _PYTHON_WORKING_DIR " + work + ", runs in "
            + cwd + " (the script must exec the worker, keeping its pid)");
        w.close();
        check(w.exitCode() != null, "no exit code");
      } finally {
        deleteTree(dir);
        deleteTree(work);
      }
    }
  }

  /**
   * All servers vanish mid-bundle (mid-input, and with calls in flight that never answer):
   * the worker exits within 5 s, non-zero but not by a signal (no crash, no core dump),
   * with an ERROR line naming the control stream it lost (the bundle may have failed
   * first, on the Data stream's end, or still be in progress).
   */
  static void runnerDisappears(Ctx c) throws Exception {
    TypeInfo ty = t("ROW<a:INT,s:STRING>");
    for (boolean callsOut : new boolean[]{false, true}) {
      String what = callsOut ? "with calls that never answer in flight" : "mid-input";
      Worker w = c.worker();
      c.anyExitCode(w);
      FunctionRunner r = c.runner(w, ty, ty, callsOut ? AsyncScenarios.echo(AsyncScenarios.opts("hang", "true"),
          "{\"capacity\":10}") : Ctx.spec("identity"));
      Ctx.send(r, ty, values(ty, 30, 4));
      r.sendBuffered();
      Thread.sleep(100);
      String control = w.servers.controlUrl();
      long t0 = System.nanoTime();
      w.abortServers();
      Integer code = w.process().waitFor(c.ms(5000));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      check(code != null, what + ": the worker was still running 5 s after the runner vanished");
      check(code != 0, what + ": the worker exited 0 after losing its runner mid-bundle");
      check(code < 128, what + ": the worker died of signal " + (code - 128) + " (a crash, maybe a core) instead "
          + "of exiting: " + tail(w.process().output()));
      String out = w.process().output();
      String line = "ERROR lost the control stream to " + java.util.regex.Pattern.quote(control)
          + " \\(status \\d+: [^)]*\\) with [01] bundle\\(s\\) in progress; exiting";
      check(java.util.regex.Pattern.compile(line).matcher(out).find(), what + ": no ERROR line saying the control "
          + "stream to " + control + " was lost; the worker printed: "
          + tail(out));
      c.note(what + ": exit " + code + " after " + ms + " ms");
    }
  }

  /** SIGTERM to an idle worker and to one mid-bundle: gone within 2 s. */
  static void sigterm(Ctx c) throws Exception {
    TypeInfo ty = t("INT");
    for (boolean midBundle : new boolean[]{false, true}) {
      Worker w = c.worker();
      c.anyExitCode(w);
      FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
      List<In> in = values(ty, 10, 1);
      Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
      if (midBundle) {
        Ctx.send(r, ty, values(ty, 10, 2));
        r.sendBuffered();
        Thread.sleep(50);
      }
      long t0 = System.nanoTime();
      w.process().sigterm();
      Integer code = w.process().waitFor(c.ms(2000));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      check(code != null, (midBundle ? "mid-bundle" : "idle") + " worker still running 2 s after SIGTERM");
      c.note((midBundle ? "mid-bundle" : "idle") + ": exit " + code + " after " + ms + " ms");
    }
  }

  /** The runner completes the Control stream: the worker exits 0 by itself. */
  static void controlClosed(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("STRING");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 10, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    w.control().close();
    Integer code = w.process().waitFor(c.ms(5000));
    check(code != null, "the worker did not exit within 5 s of the Control stream ending");
    check(code == 0, "exit code " + code + " after a clean end of Control; output: " + tail(w.process().output()));
  }

  /** Log entries reach the Logging service: a startup INFO line and a failed bundle's ERROR. */
  static void logging(Ctx c) throws Exception {
    Worker w = c.worker();
    BeamFnApi.LogEntry info = w.servers.logging.await(
        e -> e.getSeverity().getNumber() >= BeamFnApi.LogEntry.Severity.Enum.INFO_VALUE, c.ms(5000));
    check(info != null, "no INFO (or higher) log entry within 5 s of startup");
    FunctionRunner r = c.runner(w, t("INT"), t("STRING"), Ctx.spec("identity"));
    Ctx.send(r, t("INT"), values(t("INT"), 3, 1));
    String err = Ctx.expectBundleError(r);
    String probe = err.length() > 40 ? err.substring(0, 40) : err;
    BeamFnApi.LogEntry logged = w.servers.logging.await(
        e -> e.getSeverity().getNumber() >= BeamFnApi.LogEntry.Severity.Enum.ERROR_VALUE
            && (e.getMessage().contains(probe) || e.getTrace().contains(probe)), c.ms(5000));
    check(logged != null, "the failed bundle's error was not logged at ERROR; error: " + err + "; entries: "
        + w.servers.logging.entries().size());
    for (BeamFnApi.LogEntry e : w.servers.logging.entries()) {
      check(e.hasTimestamp() && e.getTimestamp().getSeconds() > 1_600_000_000L, "log entry without a timestamp: " + e);
    }
  }

  static final String LOG_LEVEL_OPTION = "beam:option:default_sdk_harness_log_level:v1";

  /**
   * One good bundle and one failing one on a worker started with the given pipeline log level
   * (and command line); returns the severities of every entry the Logging service got.
   */
  static java.util.Set<BeamFnApi.LogEntry.Severity.Enum> severitiesWith(Ctx c, String level, String... args)
      throws Exception {
    Worker w = c.worker(o -> {
      o.pipelineOptions.put(LOG_LEVEL_OPTION, level);
      o.extraArgs.addAll(List.of(args));
    });
    TypeInfo ty = t("INT");
    FunctionRunner ok = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 3, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(ok, ty, in));
    FunctionRunner bad = c.runner(w, ty, t("STRING"), Ctx.spec("identity"));
    Ctx.send(bad, ty, values(ty, 3, 1));
    Ctx.expectBundleError(bad);
    check(w.servers.logging.await(e -> e.getSeverity() == BeamFnApi.LogEntry.Severity.Enum.ERROR, c.ms(5000)) != null,
        "level " + level + " " + List.of(args) + ": the failed bundle's ERROR never reached the Logging service");
    Thread.sleep(c.ms(200));   // entries logged before it are sent within a few ms
    java.util.Set<BeamFnApi.LogEntry.Severity.Enum> seen = java.util.EnumSet.noneOf(
        BeamFnApi.LogEntry.Severity.Enum.class);
    for (BeamFnApi.LogEntry e : w.servers.logging.entries()) {
      seen.add(e.getSeverity());
    }
    return seen;
  }

  /**
   * Flink's pipeline option default_sdk_harness_log_level sets the worker's level: DEBUG (and the
   * Python threshold 10) brings debug lines, ERROR leaves only errors; --log-level still wins.
   */
  static void logLevelFromOptions(Ctx c) throws Exception {
    BeamFnApi.LogEntry.Severity.Enum debug = BeamFnApi.LogEntry.Severity.Enum.DEBUG;
    BeamFnApi.LogEntry.Severity.Enum info = BeamFnApi.LogEntry.Severity.Enum.INFO;
    for (String level : new String[]{"DEBUG", "10"}) {
      java.util.Set<BeamFnApi.LogEntry.Severity.Enum> s = severitiesWith(c, level);
      check(s.contains(debug) && s.contains(info), "pipeline level " + level + ": expected DEBUG and INFO entries, got "
          + s);
    }
    java.util.Set<BeamFnApi.LogEntry.Severity.Enum> quiet = severitiesWith(c, "ERROR");
    check(quiet.equals(java.util.EnumSet.of(BeamFnApi.LogEntry.Severity.Enum.ERROR)),
        "pipeline level ERROR: expected ERROR entries only, got " + quiet);
    java.util.Set<BeamFnApi.LogEntry.Severity.Enum> cli = severitiesWith(c, "DEBUG", "--log-level=warn");
    check(!cli.contains(debug) && !cli.contains(info), "--log-level=warn with pipeline level DEBUG: expected no "
        + "DEBUG or INFO entries, got " + cli);
    java.util.Set<BeamFnApi.LogEntry.Severity.Enum> dflt = severitiesWith(c, "INFO");
    check(dflt.contains(info) && !dflt.contains(debug), "pipeline level INFO: expected INFO and no DEBUG, got " + dflt);
  }

  /** Descriptors delivered with the deprecated register request work too. */
  static void registerRequest(Ctx c) throws Exception {
    Worker w = c.worker(o -> o.useRegister = true);
    TypeInfo ty = t("ROW<a:INT,b:LIST<STRING>>");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 30, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    check(w.servers.control.descriptorRequests().isEmpty(), "registered descriptor was also pulled: "
        + w.servers.control.descriptorRequests());
  }

  /** Every stream carries the worker_id header; provisioning came first. */
  static void headers(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 5, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    w.servers.logging.await(e -> true, c.ms(2000));
    Map<String, List<String>> seen = w.servers.headers.all();
    for (String m : new String[]{PROVISION, CONTROL, LOGGING, DATA}) {
      List<String> ids = seen.getOrDefault(m, List.of());
      check(!ids.isEmpty(), "no call to " + m + "; calls: " + seen.keySet());
      for (String id : ids) {
        check(id.equals(w.workerId), m + " called with worker_id '" + id + "', expected '" + w.workerId + "'");
      }
    }
  }

  /** Old Beam's five-flag command line works too. */
  static void legacyFlags(Ctx c) throws Exception {
    Worker w = c.worker(o -> o.legacyFlags = true);
    TypeInfo ty = t("STRING");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 5, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
  }

  static void deleteTree(Path p) {
    try (java.util.stream.Stream<Path> s = Files.walk(p)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
    } catch (Exception e) {
      // best effort
    }
  }
}
