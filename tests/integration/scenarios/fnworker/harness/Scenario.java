// Integration-test plumbing: a named scenario body plus the context it runs
// in (workers and runners it opened are torn down afterwards, timeouts scale
// with FNW_TIME_SCALE, or 10x under FNW_WRAPPER), and assertion helpers.
package fnworker.harness;

import fnworker.harness.types.Hex;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.Values;
import fnworker.proto.v1.OperationProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

public final class Scenario {
  public interface Body {
    void run(Ctx c) throws Exception;
  }

  public final String name;
  public final Body body;

  public Scenario(String name, Body body) {
    this.name = name;
    this.body = body;
  }

  /** Where the binaries are. */
  public static final class Settings {
    public String worker;
    public String runnerScript;
    public boolean verbose;
    public double timeScale = 1.0;
  }

  /** A failed expectation. */
  public static final class Failure extends RuntimeException {
    public Failure(String msg) {
      super(msg);
    }
  }

  /** A scenario that cannot run here (a tool or virtualenv is missing): reported as SKIP, not PASS. */
  public static final class Skip extends RuntimeException {
    public Skip(String msg) {
      super(msg);
    }
  }

  /** One input element: timestamp, watermark, value. */
  public static final class In {
    public final long ts;
    public final long watermark;
    public final Object value;

    public In(long ts, long watermark, Object value) {
      this.ts = ts;
      this.watermark = watermark;
      this.value = value;
    }

    public In(long ts, Object value) {
      this(ts, Long.MIN_VALUE, value);
    }
  }

  public static final class Ctx {
    public final Settings settings;
    private final List<Worker> workers = new ArrayList<>();
    private final List<FunctionRunner> runners = new ArrayList<>();
    private final java.util.Set<Worker> anyExit = new java.util.HashSet<>();
    private final List<String> notes = new ArrayList<>();

    Ctx(Settings s) {
      this.settings = s;
    }

    /** base ms scaled for slow runs (valgrind). */
    public long ms(long base) {
      return (long) (base * settings.timeScale);
    }

    public Worker.Options options() {
      Worker.Options o = new Worker.Options();
      o.workerBinary = settings.worker;
      o.verbose = settings.verbose;
      o.startupTimeoutMs = ms(20_000);
      return o;
    }

    public Worker worker() throws Exception {
      return worker(o -> { });
    }

    public Worker worker(Consumer<Worker.Options> tweak) throws Exception {
      Worker.Options o = options();
      tweak.accept(o);
      return track(Worker.start(o));
    }

    public Worker track(Worker w) {
      synchronized (workers) {
        workers.add(w);
      }
      return w;
    }

    public static OperationProto.OperationSpec spec(String operation) {
      return RunnerRows.spec(operation, Map.of(), null);
    }

    /** An opened runner for one PROCESS function. */
    public FunctionRunner runner(Worker w, TypeInfo in, TypeInfo out, OperationProto.OperationSpec spec) {
      return runner(w, in, out, FunctionType.PROCESS, spec.toByteArray(), c -> { });
    }

    public FunctionRunner runner(Worker w, TypeInfo in, TypeInfo out, FunctionType type, byte[] payload,
        Consumer<FunctionRunner.Config> tweak) {
      FunctionRunner.Config c = new FunctionRunner.Config();
      c.inputType = in;
      c.outputType = out;
      c.functions.add(new DescriptorBuilder.Fn(type, payload));
      c.flushTimeoutMs = ms(20_000);
      c.dataConnectTimeoutMs = Math.min(ms(10_000), 30_000);
      c.bundleSize = Integer.MAX_VALUE;
      c.bundleTimeMs = Long.MAX_VALUE / 4;
      tweak.accept(c);
      FunctionRunner r = new FunctionRunner(w, c);
      r.open();
      synchronized (runners) {
        runners.add(r);
      }
      return r;
    }

    /** Sends the inputs (without flushing). */
    public static void send(FunctionRunner r, TypeInfo t, List<In> inputs) {
      for (In i : inputs) {
        r.process(RunnerRows.input(t, i.ts, i.watermark, i.value));
      }
    }

    /** Everything already received. */
    public static List<FunctionRunner.Result> drain(FunctionRunner r) {
      List<FunctionRunner.Result> out = new ArrayList<>();
      for (FunctionRunner.Result x = r.pollResult(); x != null; x = r.pollResult()) {
        out.add(x);
      }
      return out;
    }

    /** One bundle: send, flush, collect. */
    public static List<FunctionRunner.Result> bundle(FunctionRunner r, TypeInfo t, List<In> inputs) {
      send(r, t, inputs);
      r.flush();
      return drain(r);
    }

    /**
     * Checks an identity-like result: one output per input, in order, on "output",
     * byte-identical to Row(ts, value) encoded with the output type t.
     */
    public static void expectSame(TypeInfo t, List<In> inputs, List<FunctionRunner.Result> results) {
      if (results.size() != inputs.size()) {
        throw new Failure("sent " + inputs.size() + " records, got " + results.size() + " back");
      }
      for (int i = 0; i < inputs.size(); i++) {
        FunctionRunner.Result res = results.get(i);
        In in = inputs.get(i);
        if (!res.tag.equals("output")) {
          throw new Failure("record " + i + " came back on '" + res.tag + "', not 'output'");
        }
        byte[] want = RunnerRows.expectedOutput(t, in.ts, in.value);
        if (!java.util.Arrays.equals(want, res.bytes)) {
          String detail;
          try {
            RunnerRows.Output o = RunnerRows.output(t, res.bytes);
            detail = o.ts != in.ts ? "timestamp " + o.ts + " instead of " + in.ts
                : String.valueOf(Values.firstDifference(t, in.value, o.value, ""));
          } catch (RuntimeException e) {
            detail = "undecodable: " + e.getMessage();
          }
          throw new Failure("record " + i + " (" + t + ") differs: " + detail + "; got " + Hex.of(res.bytes)
              + ", expected " + Hex.of(want));
        }
      }
    }

    /** Runs flush() expecting Flink's failure; returns the worker's error text. */
    public static String expectBundleError(FunctionRunner r) {
      try {
        r.flush();
      } catch (RuntimeException e) {
        if (!"Failed to close remote bundle".equals(e.getMessage())) {
          throw new Failure("flush failed with '" + e.getMessage() + "' instead of 'Failed to close remote bundle'");
        }
        Throwable c = e.getCause();
        String m = c == null ? "" : String.valueOf(c.getMessage());
        String prefix = "Error received from SDK harness for instruction ";
        if (!m.startsWith(prefix)) {
          throw new Failure("bundle failed without an error response: " + Main.describe(e));
        }
        int colon = m.indexOf(": ", prefix.length());
        return colon < 0 ? m : m.substring(colon + 2);
      }
      throw new Failure("the bundle succeeded but an error response was expected");
    }

    public static void check(boolean ok, String msg) {
      if (!ok) {
        throw new Failure(msg);
      }
    }

    public void note(String s) {
      synchronized (notes) {
        notes.add(s);
      }
    }

    List<String> notes() {
      synchronized (notes) {
        return new ArrayList<>(notes);
      }
    }

    /**
     * Protocol slips any scenario must not show: data after is_last or for unknown
     * transforms, incomplete records at is_last, responses nobody asked for.
     */
    String protocolProblems() {
      List<String> p = new ArrayList<>();
      synchronized (workers) {
        for (Worker w : workers) {
          p.addAll(w.servers.data.violations());
          if (w.control() != null) {
            for (String id : w.control().unknownResponses()) {
              p.add("InstructionResponse for unknown instruction " + id);
            }
          }
        }
      }
      synchronized (runners) {
        for (FunctionRunner r : runners) {
          for (FunctionRunner.BundleRecord b : r.bundles()) {
            p.addAll(b.problems);
          }
        }
      }
      return p.isEmpty() ? null : "protocol problems: " + String.join("; ", p);
    }

    /** Last lines the workers printed, for failure reports. */
    String workerOutputTail(int lines) {
      StringBuilder sb = new StringBuilder();
      synchronized (workers) {
        for (Worker w : workers) {
          if (w.process() == null) {
            continue;
          }
          String[] all = w.process().output().split("\n");
          int from = Math.max(0, all.length - lines);
          for (int i = from; i < all.length; i++) {
            if (!all[i].isEmpty()) {
              sb.append("    [worker ").append(w.workerId).append("] ").append(all[i]).append('\n');
            }
          }
        }
      }
      return sb.toString();
    }

    /** This worker is expected to die or be killed: its exit code is not checked at teardown. */
    public void anyExitCode(Worker w) {
      synchronized (workers) {
        anyExit.add(w);
      }
    }

    /**
     * Tears every worker down like Flink (servers closed, Control completed) but lets
     * it exit by itself first: each must exit 0 (under valgrind/ASan that also means
     * no memory errors or leaks). Returns the problems found, or null.
     */
    String closeAll() {
      List<Worker> copy;
      synchronized (workers) {
        copy = new ArrayList<>(workers);
      }
      List<String> bad = new ArrayList<>();
      for (Worker w : copy) {
        boolean wasRunning = w.process() != null && w.process().isAlive();
        w.options.selfExitWaitMs = ms(5000);
        try {
          w.close();
        } catch (RuntimeException e) {
          bad.add("worker " + w.workerId + ": teardown failed: " + e);
        }
        boolean check;
        synchronized (workers) {
          check = !anyExit.contains(w);
        }
        Integer code = w.exitCode();
        if (check && wasRunning && (code == null || code != 0 || w.wasTerminated())) {
          bad.add("worker " + w.workerId + " " + (w.wasTerminated() ? "needed SIGTERM at teardown (it should exit "
              + "when Control ends) and exited " + code : "exited " + code + " at teardown"));
        }
      }
      return bad.isEmpty() ? null : String.join("; ", bad);
    }
  }
}
