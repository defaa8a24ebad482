// Integration scenarios about seeing into a running worker: a bundle whose
// calls never return is reported at WARN once --lull-seconds pass with no
// progress, naming what is in flight, and SIGQUIT makes the worker log every
// bundle, queue and call and keep running. Both are checked where an
// operator sees them: the runner's Logging service (the TaskManager log).
// Listed in IntegrationTests.scenarios() through scenarios() below.
package fnworker.harness;

import static fnworker.harness.IntegrationTests.t;
import static fnworker.harness.IntegrationTests.values;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;

final class DiagnosticsScenarios {
  private DiagnosticsScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("hung_bundle_lull_warning", DiagnosticsScenarios::lullWarning));
    s.add(new Scenario("sigquit_dumps_bundles", DiagnosticsScenarios::sigquitDump));
    return s;
  }

  static final BeamFnApi.LogEntry.Severity.Enum WARN = BeamFnApi.LogEntry.Severity.Enum.WARN;
  static final BeamFnApi.LogEntry.Severity.Enum INFO = BeamFnApi.LogEntry.Severity.Enum.INFO;

  /** A runner whose bundle has 3 LONG inputs out in `echo hang=true` calls that never return. */
  static FunctionRunner hungBundle(Ctx c, Worker w) {
    TypeInfo ty = t("LONG");
    FunctionRunner r = c.runner(w, ty, ty, RunnerRows.spec("echo", Map.of("hang", "true"), null));
    List<In> in = values(ty, 3, 1);
    Ctx.send(r, ty, in);
    r.sendBuffered();
    return r;
  }

  static String texts(Worker w) {
    StringBuilder sb = new StringBuilder();
    for (BeamFnApi.LogEntry e : w.servers.logging.entries()) {
      sb.append("\n  ").append(e.getSeverity()).append(' ').append(e.getMessage());
    }
    return sb.toString();
  }

  /** --lull-seconds=1: the hung bundle's WARN names the operation, its calls, queue and counts. */
  static void lullWarning(Ctx c) throws Exception {
    Worker w = c.worker(o -> o.extraArgs.add("--lull-seconds=1"));
    c.anyExitCode(w);   // the runner cancels Control with the bundle still open: exit 1
    hungBundle(c, w);
    BeamFnApi.LogEntry e = w.servers.logging.await(
        x -> x.getSeverity() == WARN && x.getMessage().contains("no progress for")
            && x.getMessage().contains("3 call(s) in flight"), c.ms(15_000));
    check(e != null, "no WARN about the hung bundle within 15 s with --lull-seconds=1; entries:" + texts(w));
    String m = e.getMessage();
    for (String want : new String[]{"(--lull-seconds=1)", "reading input: 3 input(s) read, 0 output(s) written",
        "operation 'echo' in transform '", "(the oldest started ", "3 input(s) queued"}) {
      check(m.contains(want), "the lull WARN should contain \"" + want + "\": " + m);
    }
    check(!e.getInstructionId().isEmpty(), "the lull WARN carries no instruction id: " + e);
  }

  /** SIGQUIT logs the bundle, its step and each call at INFO; the worker keeps serving. */
  static void sigquitDump(Ctx c) throws Exception {
    Worker w = c.worker();
    c.anyExitCode(w);   // the runner cancels Control with the bundle still open: exit 1
    hungBundle(c, w);
    BeamFnApi.LogEntry step = null;
    long end = System.currentTimeMillis() + c.ms(15_000);
    while (step == null && System.currentTimeMillis() < end) {   // until the worker has the 3 calls
      w.process().signal("QUIT");
      step = w.servers.logging.await(x -> x.getSeverity() == INFO
          && x.getMessage().contains("3 call(s) in flight"), c.ms(500));
    }
    check(step != null, "no INFO dump of the hung bundle's step after SIGQUIT; entries:" + texts(w));
    String all = texts(w);
    for (String want : new String[]{"SIGQUIT: 1 bundle(s) in progress", "reading input: 3 input(s) read",
        "operation 'echo' in transform '", "call on input 0 (no timestamp)", "attempt 1, with the operation"}) {
      check(all.contains(want), "the SIGQUIT dump should contain \"" + want + "\"; entries:" + all);
    }
    check(w.process().isAlive(), "the worker exited after SIGQUIT");
    TypeInfo ty = t("INT");
    FunctionRunner ok = c.runner(w, ty, ty, Ctx.spec("identity"));
    List<In> in = values(ty, 5, 2);
    Ctx.expectSame(ty, in, Ctx.bundle(ok, ty, in));
  }
}
