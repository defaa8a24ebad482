// fnworker's integration tests: named scenarios, each launching the real
// worker binary through the harness and asserting the behaviour a Flink job
// relies on. Prints "PASS name" / "FAIL name: reason", then "N passed, N failed".
//   java -cp $(cat build/harness/classpath) fnworker.harness.IntegrationTests \
//     --worker build/fnworker [--runner-script scripts/pyflink-udf-runner.sh] [--verbose] [FILTER]
// FILTER keeps the scenarios whose name contains it. New scenarios: add a
// Scenario to scenarios() (see Scenario.Ctx for the helpers).
package fnworker.harness;

import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.CodecSelfTest;
import fnworker.harness.types.Hex;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.ValueGenerator;
import fnworker.proto.v1.OperationProto;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

public final class IntegrationTests {
  private IntegrationTests() {}

  static final String CONTROL = "org.apache.beam.model.fn_execution.v1.BeamFnControl/Control";
  static final String LOGGING = "org.apache.beam.model.fn_execution.v1.BeamFnLogging/Logging";
  static final String DATA = "org.apache.beam.model.fn_execution.v1.BeamFnData/Data";
  static final String PROVISION = "org.apache.beam.model.fn_execution.v1.ProvisionService/GetProvisionInfo";

  static TypeInfo t(String s) {
    return TypeInfo.parse(s);
  }

  /** n generated values of t, the first one null (the data field of the runner row is nullable). */
  static List<In> values(TypeInfo t, int n, long seed) {
    ValueGenerator g = new ValueGenerator(seed);
    long[] stamps = {Long.MIN_VALUE, 0, -1, 1_700_000_000_000L, Long.MAX_VALUE};
    List<In> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Object v = i == 0 ? null : g.value(t, true);
      long ts = i < stamps.length ? stamps[i] : 1000L + i;
      long wm = i % 3 == 0 ? Long.MIN_VALUE : 500L + i;
      out.add(new In(ts, wm, v));
    }
    return out;
  }

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("every_type_roundtrip", IntegrationTests::everyType));
    s.add(new Scenario("two_operators_one_worker", IntegrationTests::twoOperators));
    s.add(new Scenario("data_split_across_messages", IntegrationTests::dataSplit));
    s.add(new Scenario("empty_bundle", IntegrationTests::emptyBundle));
    s.add(new Scenario("undecodable_element", IntegrationTests::undecodable));
    s.add(new Scenario("unknown_instruction", IntegrationTests::unknownInstruction));
    s.add(new Scenario("launched_via_runner_script", IntegrationTests::viaRunnerScript));
    s.add(new Scenario("runner_disappears_mid_bundle", IntegrationTests::runnerDisappears));
    s.add(new Scenario("sigterm", IntegrationTests::sigterm));
    s.add(new Scenario("control_closed_cleanly", IntegrationTests::controlClosed));
    s.add(new Scenario("pickle_payload", IntegrationTests::picklePayload));
    s.add(new Scenario("identity_type_mismatch", IntegrationTests::typeMismatch));
    s.add(new Scenario("chain_step_types_declared", IntegrationTests::chainStepTypes));
    s.add(new Scenario("logging", IntegrationTests::logging));
    s.add(new Scenario("log_level_from_pipeline_options", IntegrationTests::logLevelFromOptions));
    s.add(new Scenario("register_request", IntegrationTests::registerRequest));
    s.add(new Scenario("worker_id_headers", IntegrationTests::headers));
    s.add(new Scenario("legacy_flags", IntegrationTests::legacyFlags));
    s.add(new Scenario("data_before_process_bundle", IntegrationTests::dataBeforeRequest));
    s.add(new Scenario("large_records", IntegrationTests::largeRecords));
    s.add(new Scenario("many_bundles", IntegrationTests::manyBundles));
    s.add(new Scenario("hostile_type_nesting", IntegrationTests::hostileTypeNesting));
    s.addAll(AvroScenarios.scenarios());
    s.addAll(AsyncScenarios.scenarios());
    s.addAll(MetricsScenarios.scenarios());
    s.addAll(DataPlaneScenarios.scenarios());
    return s;
  }

  // ------------------------------------------------------------ scenarios

  /** Every type, with nulls, empty and nested containers, back byte-identical with timestamps. */
  static void everyType(Ctx c) throws Exception {
    List<String> types = new ArrayList<>(List.of(CodecSelfTest.ALL_TYPES));
    StringBuilder wide = new StringBuilder("ROW<");
    int i = 0;
    for (String ty : CodecSelfTest.ALL_TYPES) {
      if (!ty.startsWith("AVRO")) {
        wide.append(i == 0 ? "" : ",").append("c").append(i++).append(':').append(ty);
      }
    }
    types.add(wide.append('>').toString());
    Worker w = c.worker();
    List<String> failed = new ArrayList<>();
    for (String ty : types) {
      TypeInfo type = t(ty);
      FunctionRunner r = c.runner(w, type, type, Ctx.spec("identity"));
      List<In> in = values(type, 60, ty.hashCode());
      try {
        Ctx.expectSame(type, in, Ctx.bundle(r, type, in));
      } catch (RuntimeException e) {
        failed.add(ty + ": " + Main.describe(e));
      }
    }
    check(failed.isEmpty(), failed.size() + " of " + types.size() + " types failed; " + String.join("; ", failed));
    check(w.servers.data.violations().isEmpty(), "protocol violations: " + w.servers.data.violations());
  }

  /** Two descriptors on one worker, with bundles interleaved and open at the same time. */
  static void twoOperators(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ta = t("ROW<a:INT,b:STRING>");
    TypeInfo tb = t("LIST<DOUBLE>");
    FunctionRunner a = c.runner(w, ta, ta, Ctx.spec("identity"));
    FunctionRunner b = c.runner(w, tb, tb, Ctx.spec("identity"));
    check(!a.descriptor().getId().equals(b.descriptor().getId()), "descriptor ids must differ");
    for (int round = 0; round < 3; round++) {
      List<In> ia = values(ta, 40, round);
      List<In> ib = values(tb, 40, 100 + round);
      a.startBundle();
      b.startBundle();
      for (int k = 0; k < 40; k++) {
        Ctx.send(a, ta, ia.subList(k, k + 1));
        Ctx.send(b, tb, ib.subList(k, k + 1));
        if (k == 20) {
          a.sendBuffered();
          b.sendBuffered();
        }
      }
      if (round % 2 == 0) {
        b.flush();
        a.flush();
      } else {
        a.flush();
        b.flush();
      }
      Ctx.expectSame(ta, ia, Ctx.drain(a));
      Ctx.expectSame(tb, ib, Ctx.drain(b));
    }
    List<String> asked = w.servers.control.descriptorRequests();
    check(asked.contains(a.descriptor().getId()) && asked.contains(b.descriptor().getId()),
        "the worker should have fetched both descriptors with GetProcessBundleDescriptor, asked for " + asked);
    check(w.servers.data.clientCount() == 1, "expected one Data stream for the one data endpoint, saw "
        + w.servers.data.clientCount());
  }

  /** Records cut at arbitrary byte offsets across Data messages (chunks of 7 and of 1 byte). */
  static void dataSplit(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<id:LONG,s:STRING,l:LIST<INT>>");
    for (int chunk : new int[]{7, 1, 13}) {
      FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(), cfg -> {
        cfg.maxChunkBytes = chunk;
        cfg.bufferLimitBytes = 300;
      });
      List<In> in = values(ty, chunk == 1 ? 30 : 200, chunk);
      in.add(new In(7, Row.of(1L, "x".repeat(300), List.of(1, 2, 3))));  // a 2-byte length varint
      Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    }
    check(w.servers.data.violations().isEmpty(), "protocol violations: " + w.servers.data.violations());
  }

  /** A bundle with no elements still gets is_last on the sink and a response. */
  static void emptyBundle(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    r.startBundle();
    r.flush();
    FunctionRunner.BundleRecord b = r.lastBundle();
    check(b.error == null && b.outputs == 0, "empty bundle: error=" + b.error + " outputs=" + b.outputs);
    List<In> in = values(ty, 10, 1);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    r.startBundle();
    r.flush();
  }

  /** A garbage record fails its bundle with the transform and index named; the next bundle works. */
  static void undecodable(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<a:INT,s:STRING>");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> good = values(ty, 8, 5);
    Ctx.send(r, ty, good.subList(0, 4));
    // Row(ts, wm, Row(1, <string of length 0x7fffffff>)): the length runs past the record.
    r.process(fnworker.harness.types.Hex.parse("00 0000000000000001 8000000000000000 00 00000001 7fffffff 6162"));
    Ctx.send(r, ty, good.subList(4, 8));
    String err = Ctx.expectBundleError(r);
    check(err.contains(DescriptorBuilder.READ_ID) || err.contains("transform-0"),
        "the error should name the transform (fn/read/input:0 or transform-0): " + err);
    check(err.matches("(?is).*element\\D{0,20}\\b(4|5)\\b.*"),
        "the error should give the element index (element 4, or 5 counting from 1): " + err);
    List<In> in = values(ty, 20, 6);
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
  }

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

  /** All servers vanish mid-bundle: the worker exits non-zero within 5 s and says what it lost. */
  static void runnerDisappears(Ctx c) throws Exception {
    Worker w = c.worker();
    c.anyExitCode(w);
    TypeInfo ty = t("ROW<a:INT,s:STRING>");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    Ctx.send(r, ty, values(ty, 30, 4));
    r.sendBuffered();
    Thread.sleep(100);
    w.abortServers();
    Integer code = w.process().waitFor(c.ms(5000));
    check(code != null, "the worker was still running 5 s after the runner vanished");
    check(code != 0, "the worker exited 0 after losing its runner mid-bundle");
    String out = w.process().bootLog() + w.process().output();
    check(out.toLowerCase(Locale.ROOT).matches("(?s).*(control|data|runner|logging|stream|connection).*"),
        "the worker's output should say what was lost; it printed: " + tail(out));
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

  /** A pickled Python function as payload: a bundle error pointing at native operations and the README. */
  static void picklePayload(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    byte[] pickle = {(byte) 0x80, 0x04, (byte) 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, (byte) 0x8c, 0x08, 'b', 'u', 'i',
        'l', 't', 'i', 'n', 's', (byte) 0x94, '.'};
    FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, pickle, cfg -> { });
    Ctx.send(r, ty, values(ty, 3, 1));
    String err = Ctx.expectBundleError(r);
    check(err.toLowerCase(Locale.ROOT).contains("native"), "the error should mention native operations: " + err);
    check(err.contains("README"), "the error should point to the README: " + err);
    FunctionRunner ok = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 5, 2);
    Ctx.expectSame(ty, in, Ctx.bundle(ok, ty, in));
  }

  /** identity with an output type different from the input type: a bundle error saying so. */
  static void typeMismatch(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner r = c.runner(w, t("INT"), t("STRING"), Ctx.spec("identity"));
    Ctx.send(r, t("INT"), values(t("INT"), 3, 1));
    String err = Ctx.expectBundleError(r);
    String low = err.toLowerCase(Locale.ROOT);
    check(low.contains("identity") && low.contains("type"), "the error should say identity needs equal types: " + err);
  }

  /** in's ROW value with fields at the given positions, same row kind (null stays null). */
  static Row projected(Object value, int... fields) {
    if (value == null) {
      return null;
    }
    Row r = (Row) value;
    Object[] f = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) {
      f[i] = r.get(fields[i]);
    }
    return new Row(r.kind, f);
  }

  /**
   * A fused chain whose first function changes the type, described as Flink describes it (only the
   * operator's input and output types; every collection between functions has the input coder):
   * `project` ROW<id,name,score> -> ROW<name,id> with output_type in its OperationSpec, then `echo`,
   * which keeps the type. Each output is the projected input with its timestamp. Without output_type,
   * or with one the operator does not output, the bundle fails naming the step and saying what to set.
   */
  static void chainStepTypes(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo in = t("ROW<id:LONG,name:STRING,score:DOUBLE>");
    TypeInfo out = t("ROW<name:STRING,id:LONG>");
    OperationProto.OperationSpec project = RunnerRows.spec("project", Map.of("fields", "name, id"), null);
    OperationProto.OperationSpec echo = RunnerRows.spec("echo", Map.of("delay_ms", "2"),
        "{\"capacity\":10,\"outputMode\":\"ORDERED\"}");
    FunctionRunner r = c.runner(w, in, out, FunctionType.PROCESS, RunnerRows.withOutputType(project, out).toByteArray(),
        cfg -> cfg.functions.add(RunnerRows.fn(echo)));
    List<In> inputs = values(in, 60, 17);
    List<FunctionRunner.Result> res = Ctx.bundle(r, in, inputs);
    check(res.size() == inputs.size(), "sent " + inputs.size() + " records, got " + res.size() + " back");
    for (int i = 0; i < inputs.size(); i++) {
      In x = inputs.get(i);
      byte[] want = RunnerRows.expectedOutput(out, x.ts, projected(x.value, 1, 0));
      check(res.get(i).tag.equals("output") && java.util.Arrays.equals(want, res.get(i).bytes), "record " + i
          + " (" + x.value + ") should come back as " + out + " " + projected(x.value, 1, 0) + ": got "
          + Hex.of(res.get(i).bytes) + ", expected " + Hex.of(want));
    }
    check(AsyncScenarios.metric(r, "transform-1", "recordsIn").value == inputs.size(),
        "transform-1 (echo) should see every projected record");

    // No output_type on the type-changing first function: its type cannot be known.
    FunctionRunner missing = c.runner(w, in, out, FunctionType.PROCESS, project.toByteArray(),
        cfg -> cfg.functions.add(RunnerRows.fn(echo)));
    Ctx.send(missing, in, inputs.subList(0, 2));
    String err = Ctx.expectBundleError(missing);
    for (String part : List.of("transform 'transform-0' (operation 'project')", "'transform-1'", "output_type")) {
      check(err.contains(part), "the error should contain \"" + part + "\": " + err);
    }
    // The last function declares a type the operator does not output.
    FunctionRunner wrong = c.runner(w, in, out, FunctionType.PROCESS,
        RunnerRows.withOutputType(project, t("ROW<id:LONG,name:STRING>")).toByteArray(), cfg -> { });
    Ctx.send(wrong, in, inputs.subList(0, 2));
    err = Ctx.expectBundleError(wrong);
    for (String part : List.of("transform 'transform-0'", "ROW<id LONG, name STRING>", "ROW<name STRING, id LONG>")) {
      check(err.contains(part), "the error should contain \"" + part + "\": " + err);
    }
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

  /** All input and is_last arrive before the ProcessBundleRequest. */
  static void dataBeforeRequest(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<a:INT,s:STRING>");
    FunctionRunner first = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> warm = values(ty, 3, 9);
    Ctx.expectSame(ty, warm, Ctx.bundle(first, ty, warm));  // Data stream open
    FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.requestAfterData = true);
    for (int round = 0; round < 2; round++) {
      List<In> in = values(ty, 40, round);
      Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
    }
  }

  /** Records bigger than the 1 MB input buffer and a bundle of several flushes. */
  static void largeRecords(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<id:INT,s:STRING,b:PRIMITIVE_ARRAY<BYTE>>");
    FunctionRunner r = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = new ArrayList<>();
    byte[] big = new byte[3 << 20];
    new java.util.Random(1).nextBytes(big);
    for (int i = 0; i < 12; i++) {
      in.add(new In(i, Row.of(i, "x".repeat(i * 100_000), i % 3 == 0 ? big : new byte[i])));
    }
    Ctx.expectSame(ty, in, Ctx.bundle(r, ty, in));
  }

  /** Many bundles back to back on one descriptor, sized like Flink would end them. */
  static void manyBundles(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("ROW<id:LONG,name:STRING,score:DOUBLE>");
    FunctionRunner r = c.runner(w, ty, ty, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.bundleSize = 1000);
    List<In> in = values(ty, 20_000, 11);
    Ctx.send(r, ty, in);
    r.flush();
    check(r.bundles().size() == 20, "expected 20 bundles of 1000, got " + r.bundles().size());
    Ctx.expectSame(ty, in, Ctx.drain(r));
  }

  /**
   * A TypeInfo nested 10,000 levels deep, in the input coder and then in a function's key_type_info:
   * each descriptor's bundle fails naming the 64-level limit (instead of the worker overflowing its
   * stack in protobuf-c), and the same worker then runs a healthy bundle.
   */
  static void hostileTypeNesting(Ctx c) throws Exception {
    Worker w = c.worker();
    TypeInfo ty = t("INT");
    byte[] deep = WireBytes.deepListTypeInfo(10_000);
    byte[] spec = Ctx.spec("identity").toByteArray();
    for (String where : new String[]{"input coder", "key_type_info"}) {
      FunctionRunner bad = c.runner(w, ty, ty, FunctionType.PROCESS, spec, cfg -> {
        if (where.equals("input coder")) {
          cfg.inputCoderPayload = WireBytes.runnerInputCoder(deep);
        } else {
          cfg.functions.get(0).keyTypeInfo = deep;
        }
      });
      Ctx.send(bad, ty, values(ty, 3, 1));
      String err = Ctx.expectBundleError(bad);
      check(err.contains("TypeInfo nests deeper than 64 levels"), where + ": the error should name the limit: " + err);
      String names = where.equals("input coder") ? "coder 'input_coder'" : "transform 'transform-0'";
      check(err.contains(names), where + ": the error should name " + names + ": " + err);
      check(w.process().isAlive(), where + ": the worker died; output: " + tail(w.process().output()));
      FunctionRunner ok = c.runner(w, ty, ty, Ctx.spec("identity"));
      List<In> in = values(ty, 20, 2);
      Ctx.expectSame(ty, in, Ctx.bundle(ok, ty, in));
    }
  }

  // ------------------------------------------------------------ driver

  static String tail(String s) {
    String[] lines = s.split("\n");
    int from = Math.max(0, lines.length - 15);
    return String.join("\n", java.util.Arrays.asList(lines).subList(from, lines.length));
  }

  static void deleteTree(Path p) {
    try (java.util.stream.Stream<Path> s = Files.walk(p)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
    } catch (Exception e) {
      // best effort
    }
  }

  public static void main(String[] argv) throws Exception {
    Scenario.Settings st = new Scenario.Settings();
    String filter = null;
    for (int i = 0; i < argv.length; i++) {
      switch (argv[i]) {
        case "--worker": st.worker = argv[++i]; break;
        case "--runner-script": st.runnerScript = argv[++i]; break;
        case "--runner-dir": st.runnerScript = new File(argv[++i], Worker.RUNNER_SCRIPT).getPath(); break;
        case "--verbose": st.verbose = true; break;
        default:
          if (argv[i].startsWith("--")) {
            System.err.println("unknown option " + argv[i]);
            System.exit(2);
          }
          filter = argv[i];
      }
    }
    Log.setVerbose(st.verbose);
    if (st.worker == null || !new File(st.worker).canExecute()) {
      System.err.println("error: worker binary " + st.worker + " not found or not executable; build it first (make)");
      System.out.println("0 passed, 1 failed");
      System.exit(1);
    }
    String scale = System.getenv("FNW_TIME_SCALE");
    String wrapper = System.getenv("FNW_WRAPPER");
    st.timeScale = scale != null ? Double.parseDouble(scale) : (wrapper != null && !wrapper.isBlank() ? 10 : 1);
    int passed = 0;
    int failed = 0;
    ExecutorService pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "scenario");
      t.setDaemon(true);
      return t;
    });
    for (Scenario sc : scenarios()) {
      if (filter != null && !sc.name.contains(filter)) {
        continue;
      }
      Ctx ctx = new Ctx(st);
      long t0 = System.nanoTime();
      String reason = null;
      Future<?> f = pool.submit(() -> {
        sc.body.run(ctx);
        return null;
      });
      try {
        f.get(ctx.ms(90_000), TimeUnit.MILLISECONDS);
        reason = ctx.protocolProblems();
      } catch (TimeoutException e) {
        f.cancel(true);
        reason = "timed out after " + ctx.ms(90_000) / 1000 + " s";
      } catch (java.util.concurrent.ExecutionException e) {
        Throwable cause = e.getCause();
        reason = cause instanceof Scenario.Failure ? cause.getMessage() : Main.describe(cause);
        if (!(cause instanceof Scenario.Failure) && st.verbose) {
          cause.printStackTrace();
        }
      }
      String details = reason == null ? "" : ctx.workerOutputTail(12);
      String teardown = ctx.closeAll();
      if (reason == null && teardown != null) {
        reason = teardown;
        details = ctx.workerOutputTail(12);
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      if (reason == null) {
        passed++;
        System.out.println("PASS " + sc.name + " (" + ms + " ms)"
            + (ctx.notes().isEmpty() ? "" : " [" + String.join("; ", ctx.notes()) + "]"));
      } else {
        failed++;
        System.out.println("FAIL " + sc.name + ": " + oneLine(reason));
        if (!details.isEmpty()) {
          System.out.print(details);
        }
      }
      System.out.flush();
    }
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 && passed > 0 ? 0 : 1);
  }

  static String oneLine(String s) {
    String r = s.replace("\n", " | ");
    return r.length() > 1500 ? r.substring(0, 1500) + "..." : r;
  }
}
