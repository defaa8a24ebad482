// Integration scenarios for the relay to PyFlink's own Python worker (issue 21,
// docs/design/relay.md section 12, "Harness scenarios"): the harness plays
// Flink, the worker relays descriptors of plain PyFlink functions to PyFlink's
// worker, its child, started as `$python -m pyflink.fn_execution.beam.beam_boot`.
// The payloads are PyFlink ProcessFunctions cloudpickled at test time, as
// PyFlink's _create_j_data_stream_python_function_info does, by a Python with
// PyFlink (FNW_PYFLINK_PYTHON, else build/flink/2.3/venv/bin/python); without
// one, the scenarios that need it pass with a note saying they were skipped.
// Listed in scenarios() here, added to IntegrationTests.scenarios().
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.Hex;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.model.fnexecution.v1.ProvisionApi;
import org.apache.beam.model.fnexecution.v1.ProvisionServiceGrpc;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class RelayScenarios {
  private RelayScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("relay_native_descriptor_starts_no_child", RelayScenarios::nativeStartsNoChild));
    s.add(new Scenario("relay_runs_a_pyflink_function", RelayScenarios::runsPyFlinkFunction));
    s.add(new Scenario("relay_input_before_its_request", RelayScenarios::inputBeforeItsRequest));
    s.add(new Scenario("relay_child_never_connects", RelayScenarios::childNeverConnects));
    s.add(new Scenario("relay_refuses_calls_without_worker_id", RelayScenarios::refusesWithoutWorkerId));
    s.add(new Scenario("relay_child_killed_mid_bundle", RelayScenarios::childKilledMidBundle));
    return s;
  }

  static final Pattern CHILD_START = Pattern.compile(
      "relay: starting PyFlink's Python worker.*?--provision_endpoint=([^\\s:]+):(\\d+).*?\\(pid (\\d+)\\)");

  /** PyFlink ProcessFunctions pickled the way PyFlink pickles them (cloudpickle.dumps(func)). */
  static final String JOB = String.join("\n",
      "import cloudpickle",
      "from pyflink.common import Row",
      "from pyflink.datastream.functions import ProcessFunction",
      "class Double(ProcessFunction):",
      "    def process_element(self, value, ctx):",
      "        yield Row(value[0] * 2, value[1])",
      "class Sleepy(ProcessFunction):",
      "    def process_element(self, value, ctx):",
      "        import time",
      "        print('SLEEPY %d' % value[0])",
      "        time.sleep(0.2)",
      "        yield value",
      "print('double', cloudpickle.dumps(Double()).hex())",
      "print('sleepy', cloudpickle.dumps(Sleepy()).hex())",
      "");

  static final TypeInfo ROW = t("ROW<id:LONG,name:STRING>");

  /** A Python with PyFlink, or null (with a note). */
  static String pyflinkPython(Ctx c) {
    String py = System.getenv("FNW_PYFLINK_PYTHON");
    if (py == null && c.settings.runnerScript != null) {
      File root = new File(c.settings.runnerScript).getAbsoluteFile().getParentFile().getParentFile();
      py = new File(root, "build/flink/2.3/venv/bin/python").getPath();
    }
    if (py == null || !new File(py).canExecute()) {
      c.note("skipped: no Python with PyFlink (FNW_PYFLINK_PYTHON, or make flink-venvs)");
      return null;
    }
    return py;
  }

  /** name -> payload bytes printed by JOB. */
  static Map<String, byte[]> payloads(Ctx c, String py) throws Exception {
    Process p = new ProcessBuilder(py, "-c", JOB).redirectErrorStream(true).start();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    p.getInputStream().transferTo(out);
    check(p.waitFor(c.ms(60_000), TimeUnit.MILLISECONDS), "the payload script did not finish");
    String text = out.toString(StandardCharsets.UTF_8);
    check(p.exitValue() == 0, "the payload script failed: " + text);
    Map<String, byte[]> m = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] kv = line.trim().split(" ");
      if (kv.length == 2) {
        m.put(kv[0], Hex.parse(kv[1]));
      }
    }
    return m;
  }

  static List<In> rows(int n) {
    List<In> in = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      in.add(new In(1000 + i, Row.of((long) i, "r" + i)));
    }
    return in;
  }

  /** Each output is Row(id * 2, name) with its input's timestamp, in input order. */
  static void expectDoubled(List<In> in, List<FunctionRunner.Result> res) {
    check(res.size() == in.size(), "sent " + in.size() + " records, got " + res.size() + " back");
    for (int i = 0; i < in.size(); i++) {
      Row r = (Row) in.get(i).value;
      Object[] f = r.fields;
      byte[] want = RunnerRows.expectedOutput(ROW, in.get(i).ts, Row.of((Long) f[0] * 2, f[1]));
      check(res.get(i).tag.equals("output") && java.util.Arrays.equals(want, res.get(i).bytes),
          "record " + i + ": got " + Hex.of(res.get(i).bytes) + ", expected " + Hex.of(want));
    }
  }

  static Matcher childStart(Worker w, long timeoutMs) throws InterruptedException {
    long end = System.currentTimeMillis() + timeoutMs;
    while (true) {
      Matcher m = CHILD_START.matcher(w.process().output());
      if (m.find()) {
        return m;
      }
      check(System.currentTimeMillis() < end, "the worker never logged starting PyFlink's Python worker: "
          + IntegrationTests.tail(w.process().output()));
      Thread.sleep(50);
    }
  }

  /**
   * A descriptor of fnworker operations only: the bundle runs natively and no Python process
   * starts (`python` is a script that would leave a mark).
   */
  static void nativeStartsNoChild(Ctx c) throws Exception {
    Path dir = Files.createTempDirectory("fnw-relay-native-");
    try {
      Path mark = dir.resolve("started");
      Path py = dir.resolve("python");
      Files.writeString(py, "#!/bin/sh\ntouch '" + mark + "'\nexit 1\n");
      py.toFile().setExecutable(true);
      Worker w = c.worker(o -> o.env.put("python", py.toString()));
      FunctionRunner r = c.runner(w, ROW, ROW, Ctx.spec("identity"));
      List<In> in = values(ROW, 20, 7);
      Ctx.expectSame(ROW, in, Ctx.bundle(r, ROW, in));
      check(!Files.exists(mark), "a descriptor of fnworker operations started a Python process");
      check(!w.process().output().contains("relay: starting"), "the worker started its relay child: "
          + IntegrationTests.tail(w.process().output()));
    } finally {
      LifecycleScenarios.deleteTree(dir);
    }
  }

  /** A plain PyFlink ProcessFunction runs in the child; two bundles, one child. */
  static void runsPyFlinkFunction(Ctx c) throws Exception {
    String py = pyflinkPython(c);
    if (py == null) {
      return;
    }
    Map<String, byte[]> p = payloads(c, py);
    Worker w = c.worker(o -> o.env.put("python", py));
    FunctionRunner r = c.runner(w, ROW, ROW, FunctionType.PROCESS, p.get("double"), cfg -> { });
    for (int b = 0; b < 2; b++) {
      List<In> in = rows(30);
      expectDoubled(in, Ctx.bundle(r, ROW, in));
    }
    Matcher m = childStart(w, c.ms(5000));
    check(!m.find(), "one child should serve both bundles: " + IntegrationTests.tail(w.process().output()));
  }

  /**
   * The whole input and its is_last arrive before the bundle's request (held, then handed to the
   * relay): every row comes back. Handed over with is_last in the data entry, Beam's SDK skipped
   * the data (apache_beam data_plane.py, _GrpcDataChannel.input_elements) and the bundle lost it.
   */
  static void inputBeforeItsRequest(Ctx c) throws Exception {
    String py = pyflinkPython(c);
    if (py == null) {
      return;
    }
    Map<String, byte[]> p = payloads(c, py);
    Worker w = c.worker(o -> o.env.put("python", py));
    // a first bundle opens the worker's Data stream (and starts the child)
    FunctionRunner first = c.runner(w, ROW, ROW, FunctionType.PROCESS, p.get("double"), cfg -> { });
    List<In> in = rows(5);
    expectDoubled(in, Ctx.bundle(first, ROW, in));
    FunctionRunner r = c.runner(w, ROW, ROW, FunctionType.PROCESS, p.get("double"),
        cfg -> cfg.requestAfterData = true);
    for (int b = 0; b < 2; b++) {
      in = rows(25);
      expectDoubled(in, Ctx.bundle(r, ROW, in));
    }
  }

  /** `python` exits at once (/bin/true): the bundle fails saying the worker did not start. */
  static void childNeverConnects(Ctx c) throws Exception {
    String py = pyflinkPython(c);
    if (py == null) {
      return;
    }
    Map<String, byte[]> p = payloads(c, py);
    Worker w = c.worker(o -> o.env.put("python", "/bin/true"));
    FunctionRunner r = c.runner(w, ROW, ROW, FunctionType.PROCESS, p.get("double"), cfg -> { });
    Ctx.send(r, ROW, rows(3));
    String err = Ctx.expectBundleError(r);
    check(err.contains("PyFlink's Python worker did not start") && err.contains("/bin/true"),
        "the error should say PyFlink's Python worker did not start and name /bin/true: " + err);
  }

  /** A call to the relay server without the child's worker_id is refused (PERMISSION_DENIED). */
  static void refusesWithoutWorkerId(Ctx c) throws Exception {
    String py = pyflinkPython(c);
    if (py == null) {
      return;
    }
    Map<String, byte[]> p = payloads(c, py);
    Worker w = c.worker(o -> o.env.put("python", py));
    FunctionRunner r = c.runner(w, ROW, ROW, FunctionType.PROCESS, p.get("double"), cfg -> { });
    List<In> in = rows(5);
    expectDoubled(in, Ctx.bundle(r, ROW, in));
    Matcher m = childStart(w, c.ms(5000));
    ManagedChannel ch = ManagedChannelBuilder.forAddress(m.group(1), Integer.parseInt(m.group(2)))
        .usePlaintext().build();
    try {
      ProvisionServiceGrpc.newBlockingStub(ch).withDeadlineAfter(c.ms(5000), TimeUnit.MILLISECONDS)
          .getProvisionInfo(ProvisionApi.GetProvisionInfoRequest.getDefaultInstance());
      throw new Scenario.Failure("GetProvisionInfo without a worker_id was answered");
    } catch (StatusRuntimeException e) {
      check(e.getStatus().getCode() == Status.Code.PERMISSION_DENIED,
          "GetProvisionInfo without a worker_id should be PERMISSION_DENIED, was " + e.getStatus());
    } finally {
      ch.shutdownNow();
    }
    // the relay still serves its child
    in = rows(5);
    expectDoubled(in, Ctx.bundle(r, ROW, in));
  }

  /**
   * The child is killed (SIGKILL) mid-bundle: the bundle fails naming its death and its last
   * output; the next bundle starts a new child and succeeds.
   */
  static void childKilledMidBundle(Ctx c) throws Exception {
    String py = pyflinkPython(c);
    if (py == null) {
      return;
    }
    Map<String, byte[]> p = payloads(c, py);
    Worker w = c.worker(o -> o.env.put("python", py));
    FunctionRunner slow = c.runner(w, ROW, ROW, FunctionType.PROCESS, p.get("sleepy"), cfg -> { });
    Ctx.send(slow, ROW, rows(40));
    slow.sendBuffered();
    Matcher m = childStart(w, c.ms(30_000));
    long pid = Long.parseLong(m.group(3));
    Thread.sleep(c.ms(2000));    // a few rows of the 8 s bundle
    new ProcessBuilder("kill", "-KILL", Long.toString(pid)).start().waitFor();
    String err = Ctx.expectBundleError(slow);
    check(err.contains("PyFlink's Python worker (pid " + pid + ") ended (signal 9"),
        "the error should name the child's end by signal 9: " + err);
    check(err.contains("SLEEPY"), "the error should quote the child's last output: " + err);
    FunctionRunner r = c.runner(w, ROW, ROW, FunctionType.PROCESS, p.get("double"), cfg -> { });
    List<In> in = rows(5);
    expectDoubled(in, Ctx.bundle(r, ROW, in));
    Matcher again = CHILD_START.matcher(w.process().output());
    int starts = 0;
    while (again.find()) {
      starts++;
    }
    check(starts == 2, "a new child should serve the next bundle; starts logged: " + starts);
  }
}
