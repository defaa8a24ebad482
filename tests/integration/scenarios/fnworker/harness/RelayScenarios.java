// Integration scenarios for fnworker's relay to PyFlink's own Python worker
// (issue 21, docs/design/relay.md section 12): descriptors whose functions
// are real PyFlink Python functions (tests/integration/fixtures/python-fns.txt,
// written by make_python_fns.py with the PyFlink virtualenv), a keyed one
// whose ValueState lives in the harness's State service.
//   relay_pyflink_own_*  the same descriptors against PyFlink's own worker,
//                        no fnworker at all (fixtures/pyflink-own-worker.sh):
//                        proves the harness speaks Flink's dialect to PyFlink.
//   relay_*              through the real fnworker binary and its child.
// They need PyFlink's virtualenv: FNW_PYFLINK_PYTHON, else
// flink/2.3/venv/bin/python next to the worker binary or under the
// checkout's build/; without it each prints a SKIP line. Names start with "relay_" (a run.sh filter).
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.Scenario.Ctx.check;

import com.google.protobuf.ByteString;
import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Hex;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class RelayScenarios {
  private RelayScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("relay_pyflink_own_worker_map", RelayScenarios::ownWorkerMap));
    s.add(new Scenario("relay_pyflink_own_worker_keyed", RelayScenarios::ownWorkerKeyed));
    s.add(new Scenario("relay_pyflink_own_worker_exception", RelayScenarios::ownWorkerException));
    s.add(new Scenario("relay_pyflink_own_worker_timers", RelayScenarios::ownWorkerTimers));
    s.add(new Scenario("relay_never_needs_child", RelayScenarios::neverNeedsChild));
    s.add(new Scenario("relay_python_map", RelayScenarios::pythonMap));
    s.add(new Scenario("relay_state_interleaved_with_data", RelayScenarios::stateInterleaved));
    s.add(new Scenario("relay_child_data_stream_closes", RelayScenarios::childDataStreamCloses));
    s.add(new Scenario("relay_mixed_message", RelayScenarios::mixedMessage));
    s.add(new Scenario("relay_refuses_without_worker_id", RelayScenarios::refusesWithoutWorkerId));
    s.add(new Scenario("relay_child_never_connects", RelayScenarios::childNeverConnects));
    s.add(new Scenario("relay_restart_backoff", RelayScenarios::restartBackoff));
    s.add(new Scenario("relay_python_exception", RelayScenarios::pythonException));
    s.add(new Scenario("relay_data_before_process_bundle", RelayScenarios::dataBeforeRequest));
    s.add(new Scenario("relay_timers_both_ways", RelayScenarios::timersBothWays));
    s.add(new Scenario("relay_state_survives_child_restart", RelayScenarios::stateSurvivesRestart));
    s.add(new Scenario("relay_shutdown_stops_child", RelayScenarios::shutdownStopsChild));
    s.add(new Scenario("relay_failed_bundle_data_dropped", RelayScenarios::failedBundleDataDropped));
    return s;
  }

  static final TypeInfo LONG = t("LONG");
  static final TypeInfo KEYED_IN = t("ROW<f0:STRING,f1:LONG>");
  static final TypeInfo KEY = t("ROW<f0:STRING>");
  static final TypeInfo STRING = t("STRING");

  // ------------------------------------------------------------ environment

  static File root(Ctx c) {
    String r = System.getProperty("fnworker.root");
    if (r != null) {
      return new File(r);
    }
    if (c.settings.runnerScript != null) {
      return new File(c.settings.runnerScript).getAbsoluteFile().getParentFile().getParentFile();
    }
    return new File(".").getAbsoluteFile();
  }

  /** PyFlink's virtualenv python, or a Skip. */
  static String venvPython(Ctx c) {
    String py = System.getenv("FNW_PYFLINK_PYTHON");
    if (py == null || py.isBlank()) {
      // next to the worker binary (build/), else the checkout's build/ (for build/asan and the like)
      File build = new File(c.settings.worker).getAbsoluteFile().getParentFile();
      py = new File(build, "flink/2.3/venv/bin/python").getPath();
      File fallback = new File(root(c), "build/flink/2.3/venv/bin/python");
      if (!new File(py).canExecute() && fallback.canExecute()) {
        py = fallback.getPath();
      }
    }
    if (!new File(py).canExecute()) {
      throw new Scenario.Skip("no PyFlink virtualenv at " + py + " (make deps-flink, or set FNW_PYFLINK_PYTHON)");
    }
    return py;
  }

  /**
   * name -> UserDefinedDataStreamFunction.payload from fixtures/python-fns.txt, checked against the
   * venv's Python version unless py is null.
   */
  static Map<String, byte[]> fns(Ctx c, String py) throws Exception {
    Path f = root(c).toPath().resolve("tests/integration/fixtures/python-fns.txt");
    Map<String, byte[]> m = new HashMap<>();
    String version = null;
    for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
      if (line.startsWith("#") || line.isBlank()) {
        continue;
      }
      String[] kv = line.trim().split(" ", 2);
      if (kv[0].equals("python")) {
        version = kv[1];
      } else {
        m.put(kv[0], Hex.parse(kv[1]));
      }
    }
    if (py == null) {
      return m;
    }
    Process p = new ProcessBuilder(py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
        .redirectErrorStream(true).start();
    String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    check(p.waitFor(c.ms(20_000), TimeUnit.MILLISECONDS) && p.exitValue() == 0, py + " failed: " + v);
    check(v.equals(version), f + " holds pickles of Python " + version + " but " + py + " is " + v
        + ": regenerate it with " + py + " tests/integration/fixtures/make_python_fns.py");
    return m;
  }

  /** PyFlink's own Python worker as the harness's worker (no fnworker). */
  static Worker ownWorker(Ctx c, String py) throws Exception {
    String script = new File(root(c), "tests/integration/fixtures/pyflink-own-worker.sh").getPath();
    return c.worker(o -> {
      o.workerBinary = script;
      o.useWrapper = false;
      o.env.put("python", py);
      o.startupTimeoutMs = c.ms(60_000);
    });
  }

  // ------------------------------------------------------------ runners and expectations

  static FunctionRunner mapRunner(Ctx c, Worker w, Map<String, byte[]> fns) {
    return c.runner(w, LONG, LONG, FunctionType.PROCESS, fns.get("map_double"), cfg -> {
      cfg.flushTimeoutMs = c.ms(60_000);
    });
  }

  static FunctionRunner keyedRunner(Ctx c, Worker w, Map<String, byte[]> fns) {
    return c.runner(w, KEYED_IN, STRING, FunctionType.KEYED_PROCESS, fns.get("keyed_count"), cfg -> {
      cfg.keyType = KEY;
      cfg.flushTimeoutMs = c.ms(60_000);
    });
  }

  static List<In> longs(long from, int n) {
    List<In> in = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      in.add(new In(1_700_000_000_000L + from + i, 1000L + i, from + i));
    }
    return in;
  }

  /** One bundle (send, flush, collect) whose check names the bundle's instruction when it fails. */
  static void checkedBundle(FunctionRunner r, TypeInfo t, List<In> in, java.util.function.Consumer<List<FunctionRunner.Result>> check) {
    List<FunctionRunner.Result> res = Ctx.bundle(r, t, in);
    try {
      check.accept(res);
    } catch (Scenario.Failure e) {
      throw new Scenario.Failure("bundle " + r.bundles().size() + " (instruction " + r.lastBundle().instructionId
          + "): " + e.getMessage() + "; the worker's element counts: " + elementCounts(r));
    }
  }

  /** The last bundle's element_count monitoring infos: PCollection=varint payload (hex). */
  static List<String> elementCounts(FunctionRunner r) {
    List<String> counts = new ArrayList<>();
    for (org.apache.beam.model.pipeline.v1.MetricsApi.MonitoringInfo m : r.lastBundle().monitoringInfos) {
      if (m.getUrn().equals("beam:metric:element_count:v1")) {
        counts.add(m.getLabelsMap().getOrDefault("PCOLLECTION", "?") + "=" + Hex.of(m.getPayload().toByteArray()));
      }
    }
    return counts;
  }

  /** Every record comes back as f(value), with its timestamp, in order. */
  static void expectMapped(List<In> inputs, List<FunctionRunner.Result> res, TypeInfo outType,
      java.util.function.Function<In, Object> f) {
    List<String> want = new ArrayList<>();
    for (In x : inputs) {
      want.add(Hex.of(RunnerRows.expectedOutput(outType, x.ts, f.apply(x))));
    }
    List<String> got = new ArrayList<>();
    for (FunctionRunner.Result r : res) {
      check(r.tag.equals("output"), "a result came back on '" + r.tag + "'");
      got.add(Hex.of(r.bytes));
    }
    if (!want.equals(got)) {
      List<String> decoded = new ArrayList<>();
      for (FunctionRunner.Result r : res) {
        try {
          RunnerRows.Output o = RunnerRows.output(outType, r.bytes);
          decoded.add(o.ts + ":" + o.value);
        } catch (RuntimeException e) {
          decoded.add("undecodable " + Hex.of(r.bytes));
        }
      }
      throw new Scenario.Failure("sent " + inputs.size() + " records, got " + res.size() + " back, not the expected"
          + " ones: got " + decoded);
    }
  }

  /** Keyed input: key "k<i % keys>", value; the function counts per key. */
  static List<In> keyed(long from, int n, int keys) {
    List<In> in = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long v = from + i;
      in.add(new In(1_700_000_000_000L + v, 1000L + v, Row.of("k" + (v % keys), v)));
    }
    return in;
  }

  /** What keyed_count emits for inputs, given the counts so far (updated). */
  static List<Object> keyedExpected(List<In> in, Map<String, Long> counts) {
    List<Object> out = new ArrayList<>();
    for (In x : in) {
      Row r = (Row) x.value;
      String k = (String) r.get(0);
      long n = counts.merge(k, 1L, Long::sum);
      out.add(k + ":" + r.get(1) + ":" + n);
    }
    return out;
  }

  static void expectKeyed(List<In> in, List<FunctionRunner.Result> res, Map<String, Long> counts) {
    List<Object> want = keyedExpected(in, counts);
    List<In> withWant = new ArrayList<>();
    for (int i = 0; i < in.size(); i++) {
      withWant.add(new In(in.get(i).ts, in.get(i).watermark, want.get(i)));
    }
    expectMapped(withWant, res, STRING, x -> x.value);
  }

  /** Runs bundles of the keyed function and checks results; returns the counts per key. */
  static Map<String, Long> keyedBundles(FunctionRunner r, int bundles, int perBundle, int keys) {
    Map<String, Long> counts = new LinkedHashMap<>();
    for (int b = 0; b < bundles; b++) {
      List<In> in = keyed((long) b * perBundle, perBundle, keys);
      checkedBundle(r, KEYED_IN, in, res -> expectKeyed(in, res, counts));
    }
    return counts;
  }

  /**
   * The harness's keyed state after keyed_count: one bag per key of state "cnt" (user_state_id
   * names it), keyed by PyFlink's key bytes (ending in the key's length and UTF-8), holding one
   * element, the count as Flink's LongSerializer writes it (8 bytes, big-endian).
   */
  static void expectState(StateService state, Map<String, Long> counts) {
    Map<String, List<ByteString>> bags = state.bags();
    check(bags.size() == counts.size(), "the State service should hold one bag per key (" + counts.keySet()
        + "), not " + bags.keySet());
    for (Map.Entry<String, Long> e : counts.entrySet()) {
      byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
      String suffix = Hex.of(new byte[] {(byte) k.length}) + " " + Hex.of(k);
      String bagId = null;
      for (String id : bags.keySet()) {
        if (id.split("/")[0].endsWith(suffix)) {
          bagId = id;
        }
      }
      check(bagId != null, "no bag for key " + e.getKey() + " among " + bags.keySet());
      List<ByteString> v = bags.get(bagId);
      byte[] want = java.nio.ByteBuffer.allocate(8).putLong(e.getValue()).array();
      check(v.size() == 1 && v.get(0).equals(ByteString.copyFrom(want)), "the ValueState 'cnt' of key "
          + e.getKey() + " should hold " + e.getValue() + " (" + Hex.of(want) + "), not " + hex(v));
    }
  }

  static String hex(List<ByteString> v) {
    List<String> s = new ArrayList<>();
    for (ByteString x : v) {
      s.add("[" + Hex.of(x.toByteArray()) + "]");
    }
    return String.join("", s);
  }

  // ------------------------------------------------------------ PyFlink's own worker

  /** map_double on PyFlink's own worker: exact results over three bundles. */
  static void ownWorkerMap(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = ownWorker(c, py);
    FunctionRunner r = mapRunner(c, w, fns);
    for (int b = 0; b < 3; b++) {
      List<In> in = longs(b * 100L, 50);
      checkedBundle(r, LONG, in, res -> expectMapped(in, res, LONG, x -> (Long) x.value * 2));
    }
  }

  /** keyed_count on PyFlink's own worker: exact counts per key across bundles, state in the harness. */
  static void ownWorkerKeyed(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = ownWorker(c, py);
    FunctionRunner r = keyedRunner(c, w, fns);
    Map<String, Long> counts = keyedBundles(r, 3, 20, 3);
    expectState(w.servers.state, counts);
    check(w.servers.state.clientCount() == 1, "PyFlink's worker should open one State stream, not "
        + w.servers.state.clientCount());
  }

  /**
   * map_fail raising on 13: the bundle's error is the Python traceback; the worker lives on and the
   * next bundle succeeds. Returns the error.
   */
  static String exceptionThenOk(Ctx c, Worker w, Map<String, byte[]> fns) {
    FunctionRunner r = c.runner(w, LONG, LONG, FunctionType.PROCESS, fns.get("map_fail"), cfg -> {
      cfg.flushTimeoutMs = c.ms(60_000);
    });
    Ctx.send(r, LONG, longs(10, 5));
    String err = Ctx.expectBundleError(r);
    for (String part : List.of("Traceback", "ValueError: relay test: 13 is unlucky", "fail_on_13")) {
      check(err.contains(part), "the error should carry the Python traceback (\"" + part + "\"): " + err);
    }
    List<In> in = longs(20, 10);
    checkedBundle(r, LONG, in, res -> expectMapped(in, res, LONG, x -> (Long) x.value + 1));
    return err;
  }

  static void ownWorkerException(Ctx c) throws Exception {
    String py = venvPython(c);
    exceptionThenOk(c, ownWorker(c, py), fns(c, py));
  }

  // ------------------------------------------------------------ through fnworker's relay

  static final Pattern STARTING = Pattern.compile(
      "relay: starting PyFlink's Python worker: (.*) \\(pid (\\d+)\\)");
  static final Pattern SERVING = Pattern.compile("relay: serving PyFlink's Python worker on 127\\.0\\.0\\.1:(\\d+)");

  /** fnworker, its `python` the given interpreter (as Flink's python.executable). */
  static Worker relayWorker(Ctx c, String python) throws Exception {
    return c.worker(o -> {
      o.env.put("python", python);
      o.startupTimeoutMs = c.ms(30_000);
    });
  }

  /** The pids of the children fnworker said it started, in order. */
  static List<Long> childPids(Worker w) {
    List<Long> pids = new ArrayList<>();
    Matcher m = STARTING.matcher(w.process().output());
    while (m.find()) {
      pids.add(Long.parseLong(m.group(2)));
    }
    return pids;
  }

  /** The relay port fnworker logged, or -1. */
  static int relayPort(Worker w) {
    Matcher m = SERVING.matcher(w.process().output());
    int port = -1;
    while (m.find()) {
      port = Integer.parseInt(m.group(1));
    }
    return port;
  }

  /** Live child processes of pid (every thread's /proc children list). */
  static List<Long> children(long pid) {
    List<Long> out = new ArrayList<>();
    File[] tasks = new File("/proc/" + pid + "/task").listFiles();
    if (tasks == null) {
      return out;
    }
    for (File t : tasks) {
      try {
        for (String x : Files.readString(new File(t, "children").toPath()).trim().split("\\s+")) {
          if (!x.isEmpty()) {
            out.add(Long.parseLong(x));
          }
        }
      } catch (IOException | RuntimeException e) {
        // thread gone
      }
    }
    return out;
  }

  static void waitFor(Ctx c, java.util.function.BooleanSupplier cond, long ms, String what) throws InterruptedException {
    long end = System.currentTimeMillis() + c.ms(ms);
    while (!cond.getAsBoolean()) {
      if (System.currentTimeMillis() > end) {
        throw new Scenario.Failure("timed out after " + c.ms(ms) + " ms waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  /**
   * A native descriptor only: fnworker starts no Python process, opens no relay port and says
   * nothing of the relay's child.
   */
  static void neverNeedsChild(Ctx c) throws Exception {
    String py;
    try {
      py = venvPython(c);
    } catch (Scenario.Skip e) {
      py = "python3"; // needs no PyFlink: nothing may start it
    }
    Worker w = relayWorker(c, py);
    FunctionRunner r = c.runner(w, LONG, LONG, Ctx.spec("identity"));
    for (int b = 0; b < 3; b++) {
      List<In> in = longs(b * 10L, 10);
      Ctx.expectSame(LONG, in, Ctx.bundle(r, LONG, in));
    }
    String out = w.process().output();
    check(!out.contains("relay: starting") && childPids(w).isEmpty(), "a native job should start no Python "
        + "worker, but fnworker said: " + IntegrationTests.tail(out));
    check(!out.contains("python["), "no Python worker output expected: " + IntegrationTests.tail(out));
    check(relayPort(w) < 0, "a native job should open no relay port: " + IntegrationTests.tail(out));
    List<Long> kids = children(w.process().pid());
    check(kids.isEmpty(), "fnworker (pid " + w.process().pid() + ") has child processes " + kids
        + " in a job with no Python function");
  }

  /** map_double through the relay: exact results over bundles, one child, reused, its log in the runner's. */
  static void pythonMap(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner r = mapRunner(c, w, fns);
    for (int b = 0; b < 4; b++) {
      List<In> in = longs(b * 1000L, 200);
      checkedBundle(r, LONG, in, res -> expectMapped(in, res, LONG, x -> (Long) x.value * 2));
    }
    List<Long> pids = childPids(w);
    check(pids.size() == 1, "one child for every bundle expected; fnworker started " + pids);
    check(children(w.process().pid()).contains(pids.get(0)), "the child (pid " + pids.get(0)
        + ") should still run between bundles (reused), children now: " + children(w.process().pid()));
    check(w.servers.state.recorded().isEmpty(), "a stateless map made state requests: "
        + w.servers.state.recorded().size());
    boolean logged = false;
    for (BeamFnApi.LogEntry e : w.servers.logging.entries()) {
      logged |= e.getMessage().contains("python[" + pids.get(0) + "]") && e.getMessage().contains("harness starting");
    }
    check(logged, "the child's log entries (\"Python sdk harness starting.\") should reach the runner's Logging "
        + "service");
  }

  /**
   * keyed_count through the relay, its input sent in many small Data messages per bundle
   * across several bundles: the child's state requests reach the harness's State service
   * directly (on its own State stream, with the relay's worker id, Flink's instruction
   * ids), every one answered without error; exact results and state contents.
   */
  static void stateInterleaved(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner r = c.runner(w, KEYED_IN, STRING, FunctionType.KEYED_PROCESS, fns.get("keyed_count"), cfg -> {
      cfg.keyType = KEY;
      cfg.flushTimeoutMs = c.ms(60_000);
      cfg.bufferLimitBytes = 60; // a Data message every few records, while the child asks for state
    });
    Map<String, Long> counts = keyedBundles(r, 4, 40, 7);
    expectState(w.servers.state, counts);
    StateService st = w.servers.state;
    List<String> ids = st.clientWorkerIds();
    check(!ids.isEmpty(), "no State client connected");
    for (String id : ids) {
      check(id.startsWith(w.workerId + "-py-"), "State clients should be the child (worker id " + w.workerId
          + "-py-...), connected directly; saw " + ids);
    }
    java.util.Set<String> withState = new java.util.HashSet<>();
    for (StateService.Recorded x : st.recorded()) {
      check(x.response.getError().isEmpty(), "state request " + x.request.getRequestCase() + " of instruction "
          + x.request.getInstructionId() + " failed: " + x.response.getError());
      withState.add(x.request.getInstructionId());
    }
    for (FunctionRunner.BundleRecord b : r.bundles()) {
      check(withState.contains(b.instructionId), "bundle " + b.instructionId + " made no state request "
          + "(bundles with state: " + withState + ")");
    }
    check(childPids(w).size() == 1, "one child expected: " + childPids(w));
    c.note(st.recorded().size() + " state requests over " + r.bundles().size() + " bundles");
  }

  /**
   * The child killed mid-bundle (its Control and Data streams end): the bundle fails naming the
   * child, how it ended and its last output; the next bundle starts a new child and succeeds.
   */
  static void childDataStreamCloses(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner r = mapRunner(c, w, fns);
    List<In> first = longs(0, 20);
    checkedBundle(r, LONG, first, res -> expectMapped(first, res, LONG, x -> (Long) x.value * 2));
    List<Long> pids = childPids(w);
    check(pids.size() == 1, "one child expected after the first bundle: " + pids);
    long pid = pids.get(0);
    r.startBundle();
    Ctx.send(r, LONG, longs(100, 30));
    r.sendBuffered();
    Thread.sleep(c.ms(300)); // the bundle is in the child: request and data, no is_last
    new ProcessBuilder("sh", "-c", "kill -KILL " + pid).inheritIO().start().waitFor();
    String err = r.awaitBundleFailure();
    for (String part : List.of("PyFlink's Python worker", "pid " + pid, "last output")) {
      check(err.contains(part), "the failed bundle's error should contain \"" + part + "\": " + err);
    }
    check(err.contains("signal 9") || err.contains("SIGKILL") || err.contains("killed")
        || err.contains("closed its Data stream") || err.contains("closed its Control stream"),
        "the error should say how the child ended (signal 9, or its streams closing): " + err);
    String ring = err.substring(err.indexOf("last output") + "last output".length()).replaceAll("[\\s:.]", "");
    check(!ring.isEmpty() && !ring.startsWith("(none)"), "the error should quote the child's last output: " + err);
    c.note("error: " + IntegrationTests.oneLine(err.length() > 400 ? err.substring(0, 400) + "..." : err));
    List<In> again = longs(200, 20);
    checkedBundle(r, LONG, again, res -> expectMapped(again, res, LONG, x -> (Long) x.value * 2));
    List<Long> now = childPids(w);
    check(now.size() == 2 && now.get(1) != pid, "the next bundle should start a new child: " + now);
  }

  /** Framed runner-input records: varint(len) + Row(ts, wm, value) per record. */
  static byte[] framed(TypeInfo t, List<In> in) {
    fnworker.harness.types.ByteWriter bw = new fnworker.harness.types.ByteWriter();
    for (In x : in) {
      byte[] rec = RunnerRows.input(t, x.ts, x.watermark, x.value);
      bw.varint(rec.length);
      bw.bytes(rec);
    }
    return bw.toByteArray();
  }

  /** One Flink Elements message with data and is_last of a native and a relayed instruction. */
  static void mixedMessage(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner nat = c.runner(w, LONG, LONG, Ctx.spec("identity"));
    FunctionRunner rel = mapRunner(c, w, fns);
    for (int round = 0; round < 3; round++) {
      List<In> a = longs(round * 100L, 15);
      List<In> b = longs(round * 100L + 50, 25);
      String ia = nat.startBundle();
      String ib = rel.startBundle();
      BeamFnApi.Elements.Builder e = BeamFnApi.Elements.newBuilder();
      // interleaved: native, relayed, native is_last, relayed is_last; the order flips each round
      String first = round % 2 == 0 ? ia : ib;
      String second = round % 2 == 0 ? ib : ia;
      e.addData(data(first, first.equals(ia) ? framed(LONG, a) : framed(LONG, b), false));
      e.addData(data(second, second.equals(ia) ? framed(LONG, a) : framed(LONG, b), false));
      e.addData(data(first, new byte[0], true));
      e.addData(data(second, new byte[0], true));
      w.servers.data.inject(e.build());
      rel.flushInjected();
      nat.flushInjected();
      String where = "round " + round + " (native instruction " + ia + ", relayed " + ib + "): ";
      try {
        Ctx.expectSame(LONG, a, Ctx.drain(nat));
        expectMapped(b, Ctx.drain(rel), LONG, x -> (Long) x.value * 2);
      } catch (Scenario.Failure f) {
        throw new Scenario.Failure(where + f.getMessage() + "; the relayed bundle's element counts: "
            + elementCounts(rel));
      }
    }
    check(childPids(w).size() == 1, "one child expected: " + childPids(w));
  }

  static BeamFnApi.Elements.Data data(String instruction, byte[] bytes, boolean last) {
    return BeamFnApi.Elements.Data.newBuilder().setInstructionId(instruction)
        .setTransformId(DescriptorBuilder.READ_ID).setData(ByteString.copyFrom(bytes)).setIsLast(last).build();
  }

  /**
   * The relay's port refuses calls without the child's worker_id (none, or fnworker's own id):
   * PERMISSION_DENIED for Provision and for a descriptor; the relay keeps working.
   */
  static void refusesWithoutWorkerId(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner r = mapRunner(c, w, fns);
    List<In> in = longs(0, 10);
    checkedBundle(r, LONG, in, res -> expectMapped(in, res, LONG, x -> (Long) x.value * 2));
    int port = relayPort(w);
    check(port > 0, "fnworker should log \"relay: serving PyFlink's Python worker on 127.0.0.1:<port>\": "
        + IntegrationTests.tail(w.process().output()));
    io.grpc.ManagedChannel ch = io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
        .build();
    try {
      for (String id : new String[] {null, w.workerId, ""}) {
        io.grpc.Metadata md = new io.grpc.Metadata();
        if (id != null) {
          md.put(Headers.WORKER_ID, id);
        }
        io.grpc.ClientInterceptor hdr = io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(md);
        String who = id == null ? "no worker_id" : "worker_id '" + id + "'";
        expectDenied(() -> org.apache.beam.model.fnexecution.v1.ProvisionServiceGrpc.newBlockingStub(ch)
            .withInterceptors(hdr).withDeadlineAfter(c.ms(10_000), TimeUnit.MILLISECONDS)
            .getProvisionInfo(org.apache.beam.model.fnexecution.v1.ProvisionApi.GetProvisionInfoRequest
                .getDefaultInstance()), "GetProvisionInfo with " + who);
        expectDenied(() -> org.apache.beam.model.fnexecution.v1.BeamFnControlGrpc.newBlockingStub(ch)
            .withInterceptors(hdr).withDeadlineAfter(c.ms(10_000), TimeUnit.MILLISECONDS)
            .getProcessBundleDescriptor(BeamFnApi.GetProcessBundleDescriptorRequest.newBuilder()
                .setProcessBundleDescriptorId(r.descriptor().getId()).build()),
            "GetProcessBundleDescriptor with " + who);
      }
    } finally {
      ch.shutdownNow();
      ch.awaitTermination(5, TimeUnit.SECONDS);
    }
    List<In> more = longs(100, 10);
    checkedBundle(r, LONG, more, res -> expectMapped(more, res, LONG, x -> (Long) x.value * 2));
    check(childPids(w).size() == 1, "one child expected: " + childPids(w));
  }

  static void expectDenied(Runnable call, String what) {
    try {
      call.run();
    } catch (io.grpc.StatusRuntimeException e) {
      check(e.getStatus().getCode() == io.grpc.Status.Code.PERMISSION_DENIED, what + " should be refused with "
          + "PERMISSION_DENIED, not " + e.getStatus());
      return;
    }
    throw new Scenario.Failure(what + " was answered; the relay must refuse it (PERMISSION_DENIED)");
  }

  /** python=/bin/true: the child exits at once; the bundle fails saying so, naming the interpreter. */
  static void childNeverConnects(Ctx c) throws Exception {
    Map<String, byte[]> fns = fns(c, null);
    Worker w = relayWorker(c, "/bin/true");
    FunctionRunner r = mapRunner(c, w, fns);
    r.cfg.flushTimeoutMs = c.ms(30_000);
    Ctx.send(r, LONG, longs(0, 5));
    long t0 = System.currentTimeMillis();
    String err = Ctx.expectBundleError(r);
    long ms = System.currentTimeMillis() - t0;
    for (String part : List.of("PyFlink's Python worker did not start", "/bin/true")) {
      check(err.contains(part), "the error should contain \"" + part + "\": " + err);
    }
    check(ms < c.ms(15_000), "the bundle should fail as soon as the child exits, not after " + ms + " ms");
    c.note("failed after " + ms + " ms");
  }

  /** A Python exception in the child: relayed as the child's error (the traceback); the same child goes on. */
  static void pythonException(Ctx c) throws Exception {
    String py = venvPython(c);
    Worker w = relayWorker(c, py);
    exceptionThenOk(c, w, fns(c, py));
    check(childPids(w).size() == 1, "the child should survive its function's exception: " + childPids(w));
  }

  /**
   * Flink's data and is_last reach fnworker before the process_bundle request (early data,
   * Config.requestAfterData): when the request turns out relayed, the data goes to the child
   * after the request; every bundle comes back exact, the child's first one included (it
   * starts the child). A native bundle first opens fnworker's Data stream, as Flink's runner
   * waits for it before it sends anything.
   */
  static void dataBeforeRequest(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner warm = c.runner(w, LONG, LONG, Ctx.spec("identity"));
    List<In> first = longs(0, 3);
    Ctx.expectSame(LONG, first, Ctx.bundle(warm, LONG, first)); // fnworker's Data stream is open
    FunctionRunner r = c.runner(w, LONG, LONG, FunctionType.PROCESS, fns.get("map_double"), cfg -> {
      cfg.flushTimeoutMs = c.ms(60_000);
      cfg.requestAfterData = true;
    });
    for (int b = 0; b < 3; b++) {
      List<In> in = longs(b * 100L, 30);
      checkedBundle(r, LONG, in, res -> expectMapped(in, res, LONG, x -> (Long) x.value * 2));
    }
  }

  // ------------------------------------------------------------ timers

  /** One Beam timer element of the timer stream: Flink's timer data row and the rest of the element. */
  static final class BeamTimer {
    final Row data;
    final String tag;
    final int windows;
    final boolean cleared;

    BeamTimer(Row data, String tag, int windows, boolean cleared) {
      this.data = data;
      this.tag = tag;
      this.windows = windows;
      this.cleared = cleared;
    }
  }

  static long varint(byte[] b, int[] pos) {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      int x = b[pos[0]++] & 0xFF;
      v |= (long) (x & 0x7F) << shift;
      if ((x & 0x80) == 0) {
        return v;
      }
    }
    throw new Scenario.Failure("varint too long in the timer stream");
  }

  /**
   * The timer stream PyFlink's worker sends (timerservice_impl._set_timer): Beam timer elements,
   * each the length-prefixed Flink timer data ROW(op, -1, timestamp, key row, namespace), the tag
   * (string), the windows (int32 count, global windows take no bytes) and clear_bit 1 (no
   * timestamps follow).
   */
  static List<BeamTimer> parseTimers(byte[] b, TypeInfo timerData) {
    List<BeamTimer> out = new ArrayList<>();
    int[] pos = {0};
    while (pos[0] < b.length) {
      int n = (int) varint(b, pos);
      Row row = (Row) fnworker.harness.types.TypeCodec.decode(timerData,
          java.util.Arrays.copyOfRange(b, pos[0], pos[0] + n));
      pos[0] += n;
      int tl = (int) varint(b, pos);
      String tag = new String(b, pos[0], tl, StandardCharsets.UTF_8);
      pos[0] += tl;
      int windows = java.nio.ByteBuffer.wrap(b, pos[0], 4).getInt();
      pos[0] += 4;
      boolean cleared = b[pos[0]++] != 0;
      check(cleared, "PyFlink's set-timer elements have clear_bit set (no timestamps follow); got one without");
      out.add(new BeamTimer(row, tag, windows, cleared));
    }
    return out;
  }

  /**
   * A fired event-time timer as Flink sends it (ExternalPythonKeyedProcessOperator.processTimer,
   * BeamPythonFunctionRunner.processTimer: Timer.cleared(timerData, "", no windows)): the timer data
   * ROW(0 = event time, watermark, timestamp, key row, null namespace), length-prefixed, then tag
   * "", zero windows, clear_bit 1.
   */
  static byte[] firedTimer(TypeInfo timerData, long watermark, long ts, Row key) {
    byte[] row = fnworker.harness.types.TypeCodec.encode(timerData, Row.of((byte) 0, watermark, ts, key, null));
    fnworker.harness.types.ByteWriter w = new fnworker.harness.types.ByteWriter();
    w.varint(row.length).bytes(row).varint(0).i32(0).u8(1);
    return w.toByteArray();
  }

  /**
   * keyed_timer: bundle 1 registers an event-time timer per element (the worker's timer stream
   * holds them: REGISTER_EVENT_TIMER, timestamp value * 10, the element's key); bundle 2 fires them
   * (timers only, no data) and on_timer's outputs come back with the timers' timestamps.
   * Returns the set-timer bytes, for comparison.
   */
  static byte[] timersRoundTrip(Ctx c, Worker w, Map<String, byte[]> fns) {
    FunctionRunner r = c.runner(w, KEYED_IN, STRING, FunctionType.KEYED_PROCESS, fns.get("keyed_timer"), cfg -> {
      cfg.keyType = KEY;
      cfg.flushTimeoutMs = c.ms(60_000);
    });
    TypeInfo timerData = DescriptorBuilder.timerDataType(KEY);
    List<In> in = List.of(new In(1000, 900, Row.of("k0", 1L)), new In(1001, 900, Row.of("k1", 2L)),
        new In(1002, 900, Row.of("k0", 3L)));
    List<In> want = new ArrayList<>();
    for (In x : in) {
      Row v = (Row) x.value;
      want.add(new In(x.ts, x.watermark, "e:" + v.get(0) + ":" + v.get(1)));
    }
    checkedBundle(r, KEYED_IN, in, res -> expectMapped(want, res, STRING, x -> x.value));
    byte[] set = r.lastTimerOutput();
    check(set != null && set.length > 0, "the worker sent no timers for bundle 1 (three timers registered)");
    List<BeamTimer> timers = parseTimers(set, timerData);
    List<String> got = new ArrayList<>();
    for (BeamTimer t : timers) {
      got.add(t.data.get(0) + "/" + t.data.get(2) + "/" + ((Row) t.data.get(3)).get(0) + "/" + t.tag + "/" + t.windows);
    }
    check(got.equals(List.of("0/10/k0//1", "0/20/k1//1", "0/30/k0//1")), "the timer stream should register "
        + "event-time timers k0@10, k1@20, k0@30 (op 0, tag '', one global window), got " + got);
    for (BeamTimer t : timers) {
      r.processTimer(firedTimer(timerData, 5000, (Long) t.data.get(2), (Row) t.data.get(3)));
    }
    List<In> fired = List.of(new In(10, "t:k0:10"), new In(20, "t:k1:20"), new In(30, "t:k0:30"));
    checkedBundle(r, KEYED_IN, List.of(), res -> expectMapped(fired, res, STRING, x -> x.value));
    return set;
  }

  static void ownWorkerTimers(Ctx c) throws Exception {
    String py = venvPython(c);
    timersRoundTrip(c, ownWorker(c, py), fns(c, py));
  }

  /**
   * Timers through the relay, both ways: the child's set-timer stream reaches the harness byte for
   * byte as PyFlink's own worker sends it, and timers the harness fires reach the child.
   */
  static void timersBothWays(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    byte[] relayed = timersRoundTrip(c, relayWorker(c, py), fns);
    byte[] own = timersRoundTrip(c, ownWorker(c, py), fns);
    check(java.util.Arrays.equals(relayed, own), "the relayed timer stream should be PyFlink's own: relayed "
        + Hex.of(relayed) + ", own worker " + Hex.of(own));
  }

  /**
   * The child killed between bundles of a keyed function: the next bundle starts a new child,
   * whose own State stream (a second client, another relay id) reads the counts the first child
   * wrote: the counts go on exactly, as the state lives in the runner, not in the child.
   */
  static void stateSurvivesRestart(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner r = keyedRunner(c, w, fns);
    Map<String, Long> counts = new LinkedHashMap<>();
    for (int b = 0; b < 2; b++) {
      List<In> in = keyed(b * 10L, 10, 3);
      checkedBundle(r, KEYED_IN, in, res -> expectKeyed(in, res, counts));
    }
    long pid = childPids(w).get(0);
    new ProcessBuilder("sh", "-c", "kill -KILL " + pid).inheritIO().start().waitFor();
    waitFor(c, () -> !children(w.process().pid()).contains(pid), 10_000, "fnworker to reap its child " + pid);
    for (int b = 2; b < 4; b++) {
      List<In> in = keyed(b * 10L, 10, 3);
      checkedBundle(r, KEYED_IN, in, res -> expectKeyed(in, res, counts));
    }
    expectState(w.servers.state, counts);
    List<Long> pids = childPids(w);
    check(pids.size() == 2, "a new child should run the bundles after the kill: " + pids);
    List<String> ids = w.servers.state.clientWorkerIds();
    check(ids.size() == 2, "the State service should have served both children (two State streams), saw " + ids);
    for (String id : ids) {
      check(id.startsWith(w.workerId + "-py-"), "State clients should be the children, saw " + ids);
    }
  }

  static boolean alive(long pid) {
    try {
      String st = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return !st.substring(st.lastIndexOf(')') + 2).startsWith("Z");
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Flink's teardown (its servers closed, so fnworker's Control stream ends, then SIGTERM if it
   * lingers): fnworker exits 0 by itself and its child is gone with it, none left behind.
   */
  static void shutdownStopsChild(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner r = mapRunner(c, w, fns);
    List<In> in = longs(0, 10);
    checkedBundle(r, LONG, in, res -> expectMapped(in, res, LONG, x -> (Long) x.value * 2));
    long pid = childPids(w).get(0);
    check(alive(pid), "the child " + pid + " should run before the teardown");
    w.options.selfExitWaitMs = c.ms(10_000);
    w.close();
    check(!w.wasTerminated() && Integer.valueOf(0).equals(w.exitCode()), "fnworker should exit 0 by itself when "
        + "Control ends, exited " + w.exitCode() + (w.wasTerminated() ? " after SIGTERM" : ""));
    waitFor(c, () -> !alive(pid), 10_000, "PyFlink's Python worker (pid " + pid + ") to end with fnworker");
  }

  /**
   * A relayed bundle whose Python function raises on its first record, followed by 10 MB of its
   * input: the bundle fails with the traceback, the rest of its data is dropped on the way (fnworker's
   * memory stays bounded), and native and relayed bundles on the same streams go on.
   */
  static void failedBundleDataDropped(Ctx c) throws Exception {
    String py = venvPython(c);
    Map<String, byte[]> fns = fns(c, py);
    Worker w = relayWorker(c, py);
    FunctionRunner nat = c.runner(w, LONG, LONG, Ctx.spec("identity"));
    FunctionRunner rel = c.runner(w, LONG, LONG, FunctionType.PROCESS, fns.get("map_fail"), cfg -> {
      cfg.flushTimeoutMs = c.ms(60_000);
    });
    List<In> warm = longs(0, 10);
    checkedBundle(rel, LONG, warm, res -> expectMapped(warm, res, LONG, x -> (Long) x.value + 1));
    long before = w.rssKb();
    long[] peak = {before};
    String err = DataPlaneScenarios.within(c, 60_000, "a failing relayed bundle and 10 MB of its input", () -> {
      rel.process(RunnerRows.input(LONG, 1, Long.MIN_VALUE, 13L));
      for (int i = 0; i < 400_000; i++) {
        rel.process(RunnerRows.input(LONG, i, Long.MIN_VALUE, 100L + i));
        if (i % 50_000 == 0) {
          peak[0] = Math.max(peak[0], w.rssKb());
        }
      }
      return Ctx.expectBundleError(rel);
    });
    peak[0] = Math.max(peak[0], w.rssKb());
    check(err.contains("ValueError: relay test: 13 is unlucky"), "the failed bundle should carry the traceback: "
        + err);
    for (int round = 0; round < 2; round++) {
      List<In> a = longs(round * 100L, 20);
      Ctx.expectSame(LONG, a, Ctx.bundle(nat, LONG, a));
      List<In> b = longs(round * 100L + 50, 20);
      checkedBundle(rel, LONG, b, res -> expectMapped(b, res, LONG, x -> (Long) x.value + 1));
    }
    DataPlaneScenarios.checkRss(c, w, "10 MB for a failed relayed bundle", before, peak[0], 64);
    check(childPids(w).size() == 1, "the child should live on after its function's exception: " + childPids(w));
  }

  /**
   * A child that dies at once, bundle after bundle (python=/bin/true): after three quick deaths in a
   * row fnworker stops starting it for a while (no fork storm): the next bundles fail at once saying
   * so, naming the interpreter, and no further child is started.
   */
  static void restartBackoff(Ctx c) throws Exception {
    Map<String, byte[]> fns = fns(c, null);
    Worker w = relayWorker(c, "/bin/true");
    FunctionRunner r = mapRunner(c, w, fns);
    List<String> errs = new ArrayList<>();
    for (int b = 0; b < 5; b++) {
      Ctx.send(r, LONG, longs(b * 10L, 3));
      errs.add(Ctx.expectBundleError(r));
    }
    for (int b = 0; b < 3; b++) {
      check(errs.get(b).contains("did not start") && errs.get(b).contains("/bin/true"), "bundle " + (b + 1)
          + " should fail saying the worker did not start: " + errs.get(b));
    }
    for (int b = 3; b < 5; b++) {
      check(errs.get(b).contains("not started again") && errs.get(b).contains("/bin/true"), "bundle " + (b + 1)
          + " should fail saying the worker is not started again for a while: " + errs.get(b));
    }
    check(childPids(w).size() == 3, "three starts expected before the backoff, fnworker started " + childPids(w));
  }
}
