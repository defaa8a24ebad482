// fnworker's integration tests: named scenarios, each launching the real
// worker binary through the harness (tests/harness) and asserting the
// behaviour a Flink job relies on. This file lists every scenario in run
// order and runs them: prints "PASS name" / "FAIL name: reason", then
// "N passed, N failed".
//   java -cp $(cat build/harness/classpath) fnworker.harness.IntegrationTests \
//     --worker build/fnworker [--runner-script scripts/pyflink-udf-runner.sh] [--verbose] [FILTER]
// FILTER keeps the scenarios whose name contains it. New scenarios: write a
// static void name(Ctx c) in the *Scenarios file of its theme and add it to
// scenarios() here (or to that file's own list); Scenario.Ctx has the helpers.
package fnworker.harness;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.ValueGenerator;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public final class IntegrationTests {
  private IntegrationTests() {}

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

  /** The last 15 lines of s (a worker's output in a failure message). */
  static String tail(String s) {
    String[] lines = s.split("\n");
    int from = Math.max(0, lines.length - 15);
    return String.join("\n", java.util.Arrays.asList(lines).subList(from, lines.length));
  }

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("every_type_roundtrip", RecordScenarios::everyType));
    s.add(new Scenario("two_operators_one_worker", RecordScenarios::twoOperators));
    s.add(new Scenario("data_split_across_messages", RecordScenarios::dataSplit));
    s.add(new Scenario("empty_bundle", RecordScenarios::emptyBundle));
    s.add(new Scenario("undecodable_element", RecordScenarios::undecodable));
    s.add(new Scenario("unknown_instruction", LifecycleScenarios::unknownInstruction));
    s.add(new Scenario("launched_via_runner_script", LifecycleScenarios::viaRunnerScript));
    s.add(new Scenario("runner_disappears_mid_bundle", LifecycleScenarios::runnerDisappears));
    s.add(new Scenario("sigterm", LifecycleScenarios::sigterm));
    s.add(new Scenario("control_closed_cleanly", LifecycleScenarios::controlClosed));
    s.add(new Scenario("pickle_payload", RecordScenarios::picklePayload));
    s.add(new Scenario("identity_type_mismatch", RecordScenarios::typeMismatch));
    s.add(new Scenario("chain_step_types_declared", RecordScenarios::chainStepTypes));
    s.add(new Scenario("logging", LifecycleScenarios::logging));
    s.add(new Scenario("log_level_from_pipeline_options", LifecycleScenarios::logLevelFromOptions));
    s.add(new Scenario("register_request", LifecycleScenarios::registerRequest));
    s.add(new Scenario("worker_id_headers", LifecycleScenarios::headers));
    s.add(new Scenario("legacy_flags", LifecycleScenarios::legacyFlags));
    s.add(new Scenario("data_before_process_bundle", RecordScenarios::dataBeforeRequest));
    s.add(new Scenario("large_records", RecordScenarios::largeRecords));
    s.add(new Scenario("many_bundles", RecordScenarios::manyBundles));
    s.add(new Scenario("hostile_type_nesting", RecordScenarios::hostileTypeNesting));
    s.addAll(HostileScenarios.scenarios());
    s.addAll(AvroScenarios.scenarios());
    s.addAll(AsyncScenarios.scenarios());
    s.addAll(MetricsScenarios.scenarios());
    s.addAll(RealFlinkScenarios.scenarios());
    s.addAll(DataPlaneScenarios.scenarios());
    s.addAll(PyFlinkScenarios.scenarios());
    s.addAll(KeyedScenarios.scenarios());
    s.addAll(RelayScenarios.scenarios());
    s.addAll(RedisScenarios.scenarios());
    s.addAll(PluginScenarios.scenarios());
    s.addAll(HttpScenarios.scenarios());
    s.addAll(KServeScenarios.scenarios());
    s.addAll(SecretScenarios.scenarios());
    s.addAll(OpsSecurityScenarios.scenarios());
    s.addAll(DiagnosticsScenarios.scenarios());
    s.addAll(PoolScenarios.scenarios());
    s.addAll(FaultScenarios.scenarios());
    return s;
  }

  // ------------------------------------------------------------ driver

  public static void main(String[] argv) throws Exception {
    Scenario.Settings st = new Scenario.Settings();
    String filter = null;
    for (int i = 0; i < argv.length; i++) {
      switch (argv[i]) {
        case "--worker": st.worker = argv[++i]; break;
        case "--runner-script": st.runnerScript = argv[++i]; break;
        case "--runner-dir": st.runnerScript = new File(argv[++i], Worker.RUNNER_SCRIPT).getPath(); break;
        case "--verbose": st.verbose = true; break;
        case "--help":
        case "-h":
          System.out.println("usage: fnworker.harness.IntegrationTests --worker PATH [--runner-script PATH | "
              + "--runner-dir DIR] [--verbose] [NAME_FILTER]\n"
              + "  runs every scenario (or those whose name contains NAME_FILTER) against the worker;\n"
              + "  FNW_WRAPPER prefixes the worker command, FNW_TIME_SCALE stretches timeouts");
          System.exit(0);
          break;
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
    int skipped = 0;
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
      String skip = null;
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
        if (cause instanceof Scenario.Skip) {
          skip = cause.getMessage();
          ctx.closeAll();
          skipped++;
          System.out.println("SKIP " + sc.name + ": " + skip);
          System.out.flush();
          continue;
        }
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
    System.out.println(passed + " passed, " + failed + " failed" + (skipped > 0 ? ", " + skipped + " skipped" : ""));
    System.exit(failed == 0 && passed + skipped > 0 ? 0 : 1);
  }

  static String oneLine(String s) {
    String r = s.replace("\n", " | ");
    return r.length() > 1500 ? r.substring(0, 1500) + "..." : r;
  }
}
