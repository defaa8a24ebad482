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
// <build>/flink/2.3/venv/bin/python next to the worker binary; without it
// each prints a SKIP line. Names start with "relay_" (a run.sh filter).
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
      File build = new File(c.settings.worker).getAbsoluteFile().getParentFile();
      py = new File(build, "flink/2.3/venv/bin/python").getPath();
    }
    if (!new File(py).canExecute()) {
      throw new Scenario.Skip("no PyFlink virtualenv at " + py + " (make deps-flink, or set FNW_PYFLINK_PYTHON)");
    }
    return py;
  }

  /** name -> UserDefinedDataStreamFunction.payload from fixtures/python-fns.txt, checked against the venv. */
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
      expectKeyed(in, Ctx.bundle(r, KEYED_IN, in), counts);
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
      expectMapped(in, Ctx.bundle(r, LONG, in), LONG, x -> (Long) x.value * 2);
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
}
