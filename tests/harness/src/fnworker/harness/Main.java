// Command-line front end: runs one job through the worker.
//   java -cp $(cat build/harness/classpath) fnworker.harness.Main run \
//     --worker build/fnworker --type 'ROW<...>' [--output-type T] \
//     (--input in.jsonl | --generate N [--seed S]) [--operation identity] \
//     [--option k=v]... [--function-type PROCESS|ASYNC_BATCH] [--spec-json '{..}'] \
//     [--bundle-size N] [--bundle-time-ms N] [--output out.jsonl] [--quiet] \
//     [--verify identity] [--verbose] [--runner-dir DIR] [--timeout-ms N]
//     [--data-connect-timeout-ms N]
// Each input line is one data value (JSON, typed by --type); its timestamp is
// the line index unless the line is {"ts":..,"value":..}. Results go to
// stdout (or --output) as {"ts":..,"value":..} lines ("tag" added for side
// outputs); a summary goes to stderr. --spec-json is the OperationSpec in
// proto3 JSON; batch mode is '{"mode":"BATCH","batchSize":64,"timeoutMs":5000}'
// under the default function type PROCESS (what a released Flink sends).
package fnworker.harness;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import fnworker.harness.types.Hex;
import fnworker.harness.types.JsonValues;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.ValueGenerator;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

public final class Main {
  private Main() {}

  static final class Args {
    String worker;
    String runnerDir;
    String type;
    String outputType;
    String input;
    long generate = -1;
    long seed = 42;
    String operation = "identity";
    final Map<String, String> options = new LinkedHashMap<>();
    String functionType = "PROCESS";
    String specJson;
    int bundleSize = 100_000;
    long bundleTimeMs = 1000;
    String output;
    boolean quiet;
    String verify;
    boolean verbose;
    long timeoutMs = 120_000;
    long dataConnectTimeoutMs = 10_000;
  }

  /** The usage text: on stdout with exit 0 for --help, on stderr with exit 2 after an error. */
  private static void usage(String msg) {
    java.io.PrintStream to = msg == null ? System.out : System.err;
    if (msg != null) {
      System.err.println("error: " + msg);
    }
    to.println("usage: fnworker.harness.Main run (--worker PATH | --runner-dir DIR) --type T\n"
        + "         (--input FILE.jsonl | --generate N [--seed S]) [--output-type T] [--operation NAME]\n"
        + "         [--option k=v]... [--function-type PROCESS|ASYNC_BATCH] [--spec-json JSON]\n"
        + "         [--bundle-size N] [--bundle-time-ms N] [--output FILE.jsonl] [--quiet]\n"
        + "         [--verify identity] [--timeout-ms N] [--data-connect-timeout-ms N] [--verbose]\n"
        + "  --spec-json: the OperationSpec in proto3 JSON, e.g. batch mode:\n"
        + "    '{\"mode\":\"BATCH\",\"batchSize\":64,\"timeoutMs\":5000}'\n"
        + "  --function-type: PROCESS (default; all a released Flink sends) or ASYNC_BATCH (batch mode\n"
        + "    through function type 7, from an unreleased PyFlink)\n"
        + "  --timeout-ms: max wait for a bundle's response and outputs (default 120000)\n"
        + "  --data-connect-timeout-ms: max wait for the worker's Data stream per bundle (default 10000;\n"
        + "    Flink's runner waits 3 minutes)\n"
        + "Commands: run (above). Also: fnworker.harness.IntegrationTests --help,\n"
        + "fnworker.harness.HarnessSelfTest, fnworker.harness.types.CodecSelfTest (no arguments).");
    System.exit(msg == null ? 0 : 2);
  }

  static boolean isHelp(String s) {
    return s.equals("--help") || s.equals("-h") || s.equals("help");
  }

  static Args parse(String[] argv) {
    if (argv.length == 0) {
      usage("no command given (the command is run)");
    }
    if (isHelp(argv[0])
        || (argv[0].equals("run") && Arrays.stream(argv).anyMatch(x -> x.equals("--help") || x.equals("-h")))) {
      usage(null);
    }
    if (!argv[0].equals("run")) {
      usage("unknown command " + argv[0] + " (the command is run)");
    }
    Args a = new Args();
    for (int i = 1; i < argv.length; i++) {
      String k = argv[i];
      String v = null;
      int eq = k.indexOf('=');
      if (k.startsWith("--") && eq > 0 && !k.startsWith("--option")) {
        v = k.substring(eq + 1);
        k = k.substring(0, eq);
      }
      boolean flag = k.equals("--quiet") || k.equals("--verbose");
      if (!flag && v == null) {
        if (i + 1 >= argv.length) {
          usage(k + " needs a value");
        }
        v = argv[++i];
      }
      switch (k) {
        case "--worker": a.worker = v; break;
        case "--runner-dir": a.runnerDir = v; break;
        case "--type": a.type = v; break;
        case "--output-type": a.outputType = v; break;
        case "--input": a.input = v; break;
        case "--generate": a.generate = number(k, v); break;
        case "--seed": a.seed = number(k, v); break;
        case "--operation": a.operation = v; break;
        case "--option": {
          int e = v.indexOf('=');
          if (e <= 0) {
            usage("--option needs k=v");
          }
          a.options.put(v.substring(0, e), v.substring(e + 1));
          break;
        }
        case "--function-type": a.functionType = v; break;
        case "--spec-json": a.specJson = v; break;
        case "--bundle-size": a.bundleSize = (int) Math.min(Integer.MAX_VALUE, number(k, v)); break;
        case "--bundle-time-ms": a.bundleTimeMs = number(k, v); break;
        case "--output": a.output = v; break;
        case "--verify": a.verify = v; break;
        case "--timeout-ms": a.timeoutMs = number(k, v); break;
        case "--data-connect-timeout-ms": a.dataConnectTimeoutMs = number(k, v); break;
        case "--quiet": a.quiet = true; break;
        case "--verbose": a.verbose = true; break;
        default: usage("unknown option " + k);
      }
    }
    if (a.worker == null && a.runnerDir == null) {
      usage("--worker or --runner-dir is required");
    }
    if (a.type == null) {
      usage("--type is required");
    }
    if ((a.input == null) == (a.generate < 0)) {
      usage("give exactly one of --input and --generate");
    }
    if (a.verify != null && !a.verify.equals("identity")) {
      usage("--verify takes 'identity'");
    }
    if (a.bundleSize <= 0 || a.bundleTimeMs <= 0) {
      usage("--bundle-size and --bundle-time-ms must be positive");
    }
    if (a.input != null && !Files.isReadable(Paths.get(a.input))) {
      fail("--input " + a.input + ": " + (Files.exists(Paths.get(a.input)) ? "cannot be read" : "no such file"));
    }
    return a;
  }

  private static long number(String flag, String v) {
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      usage(flag + ": '" + v + "' is not a whole number");
      return 0;
    }
  }

  /** One line on stderr, exit 2: a mistake in what the user gave, before any worker starts. */
  private static void fail(String msg) {
    System.err.println("error: " + msg);
    System.exit(2);
  }

  /** The innermost message of e (Gson wraps its parse errors twice). */
  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
  }

  /**
   * Reads the whole --input once before the worker starts: the first line that is not JSON, or
   * not a value of the type, ends the run with one line naming the file, the line and why.
   */
  static void checkInput(String path, TypeInfo t) {
    try (BufferedReader r = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8)) {
      long i = 0;
      for (String line = r.readLine(); line != null; line = r.readLine(), i++) {
        if (line.isBlank()) {
          continue;
        }
        try {
          JsonParser.parseString(line);
        } catch (RuntimeException e) {
          fail(path + " line " + (i + 1) + ": not JSON (" + rootMessage(e) + ")");
        }
        try {
          parseLine(t, line, i);
        } catch (RuntimeException e) {
          fail(path + " line " + (i + 1) + ": not a value of " + t + " (" + rootMessage(e) + ")");
        }
      }
    } catch (IOException e) {
      fail("--input " + path + ": " + rootMessage(e));
    }
  }

  /** One input element. */
  private static final class In {
    final long ts;
    final Object value;

    In(long ts, Object value) {
      this.ts = ts;
      this.value = value;
    }
  }

  private static In parseLine(TypeInfo t, String line, long index) {
    JsonElement e = JsonParser.parseString(line);
    if (e.isJsonObject()) {
      JsonObject o = e.getAsJsonObject();
      if (o.has("ts") && o.has("value") && o.size() == 2) {
        return new In(o.get("ts").getAsLong(), JsonValues.fromJson(t, o.get("value")));
      }
    }
    return new In(index, JsonValues.fromJson(t, e));
  }

  public static void main(String[] argv) {
    Args a = parse(argv);
    System.exit(run(a));
  }

  static int run(Args a) {
    Log.setVerbose(a.verbose);
    TypeInfo inType;
    TypeInfo outType;
    try {
      inType = TypeInfo.parse(a.type);
      outType = a.outputType == null ? inType : TypeInfo.parse(a.outputType);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }
    if (a.input != null) {
      checkInput(a.input, inType);
    }
    Worker.Options wo = new Worker.Options();
    wo.workerBinary = a.worker;
    wo.runnerDir = a.runnerDir;
    wo.verbose = a.verbose;
    wo.selfExitWaitMs = 3000;
    FunctionRunner.Config cfg = new FunctionRunner.Config();
    cfg.inputType = inType;
    cfg.outputType = outType;
    cfg.bundleSize = a.bundleSize;
    cfg.bundleTimeMs = a.bundleTimeMs;
    cfg.flushTimeoutMs = a.timeoutMs;
    cfg.dataConnectTimeoutMs = a.dataConnectTimeoutMs;
    try {
      cfg.functions.add(RunnerRows.fn(RunnerRows.functionType(a.functionType),
          RunnerRows.spec(a.operation, a.options, a.specJson)));
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }

    long in = 0;
    long out = 0;
    long mismatches = 0;
    String firstMismatch = null;
    String ended = "ok";
    Integer exit = null;
    long startNs = 0;
    long endNs = 0;
    FunctionRunner r = null;
    Map<Long, byte[]> expected = a.verify != null ? new HashMap<>() : null;
    PrintWriter sink = null;
    BufferedReader reader = null;
    try {
      sink = a.quiet ? null : new PrintWriter(new BufferedWriter(a.output != null
          ? Files.newBufferedWriter(Paths.get(a.output), StandardCharsets.UTF_8)
          : new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
      r = FunctionRunner.withOwnWorker(wo, cfg);
      r.open();
      ValueGenerator gen = new ValueGenerator(a.seed);
      reader = a.input != null ? Files.newBufferedReader(Paths.get(a.input), StandardCharsets.UTF_8) : null;
      startNs = System.nanoTime();
      for (long i = 0; ; i++) {
        In item;
        if (reader != null) {
          String line = reader.readLine();
          if (line == null) {
            break;
          }
          if (line.isBlank()) {
            continue;
          }
          try {
            item = parseLine(inType, line, i);
          } catch (RuntimeException e) {
            throw new IllegalArgumentException(a.input + " line " + (i + 1) + ": " + e.getMessage(), e);
          }
        } else {
          if (i >= a.generate) {
            break;
          }
          item = new In(i, gen.value(inType, true));
        }
        byte[] rec = RunnerRows.input(inType, item.ts, Long.MIN_VALUE, item.value);
        if (expected != null) {
          expected.put(item.ts, RunnerRows.expectedOutput(inType, item.ts, item.value));
        }
        r.process(rec);
        in++;
        for (FunctionRunner.Result res = r.pollResult(); res != null; res = r.pollResult()) {
          out++;
          String m = handle(res, outType, sink, expected);
          if (m != null && mismatches++ == 0) {
            firstMismatch = m;
          }
        }
      }
      r.flush();
      endNs = System.nanoTime();
      for (FunctionRunner.Result res = r.pollResult(); res != null; res = r.pollResult()) {
        out++;
        String m = handle(res, outType, sink, expected);
        if (m != null && mismatches++ == 0) {
          firstMismatch = m;
        }
      }
      if (expected != null && !expected.isEmpty()) {
        if (mismatches == 0) {
          firstMismatch = "no output for timestamp " + expected.keySet().iterator().next();
        }
        mismatches += expected.size();
      }
      if (mismatches > 0) {
        ended = "error: " + mismatches + " output(s) differ from the input; first: " + firstMismatch;
      }
    } catch (Exception e) {
      if (endNs == 0) {
        endNs = System.nanoTime();
      }
      ended = "error: " + describe(e);
    } finally {
      if (sink != null) {
        sink.flush();
        if (a.output != null) {
          sink.close();
        }
      }
      if (reader != null) {
        try {
          reader.close();
        } catch (IOException e) {
          // ignore
        }
      }
      if (r != null) {
        try {
          r.worker().close();
        } catch (RuntimeException e) {
          // reported below through the exit code
        }
        exit = r.worker().exitCode();
      }
    }
    double secs = Math.max(1e-9, (endNs - startNs) / 1e9);
    int bundles = r == null ? 0 : r.bundles().size();
    System.err.printf("records in: %d%nrecords out: %d%nrows/s: %.0f (%.3f s)%nbundles: %d%n", in, out,
        startNs == 0 ? 0.0 : in / secs, startNs == 0 ? 0.0 : secs, bundles);
    System.err.println("worker exit code: " + (exit == null ? "n/a" : exit)
        + (r != null && r.worker().wasTerminated() ? " (after SIGTERM)" : ""));
    if (r != null) {
      for (String v : r.worker().servers.data.violations()) {
        System.err.println("protocol violation: " + v);
      }
      if (!r.worker().servers.data.violations().isEmpty() && ended.equals("ok")) {
        ended = "error: the worker broke the data protocol";
      }
    }
    System.err.println("ended: " + ended);
    return ended.equals("ok") ? 0 : 1;
  }

  /** Prints one result; returns a mismatch description when verifying. */
  private static String handle(FunctionRunner.Result res, TypeInfo outType, PrintWriter sink,
      Map<Long, byte[]> expected) {
    RunnerRows.Output o;
    try {
      o = RunnerRows.output(outType, res.bytes);
    } catch (RuntimeException e) {
      return "undecodable output " + Hex.of(res.bytes) + ": " + e.getMessage();
    }
    if (sink != null) {
      JsonObject j = new JsonObject();
      if (!res.tag.equals("output")) {
        j.addProperty("tag", res.tag);
      }
      j.addProperty("ts", o.ts);
      j.add("value", JsonValues.toJson(outType, o.value));
      sink.println(j);
    }
    if (expected != null) {
      byte[] want = expected.remove(o.ts);
      if (want == null) {
        return "unexpected output with timestamp " + o.ts;
      }
      if (!Arrays.equals(want, res.bytes)) {
        return "timestamp " + o.ts + ": got " + Hex.of(res.bytes) + ", expected " + Hex.of(want);
      }
    }
    return null;
  }

  /** The message chain of an exception, Flink-style ("A: B: C"). */
  static String describe(Throwable e) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (sb.length() > 0) {
        sb.append(" <- ");
      }
      sb.append(t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName());
      if (t.getCause() == t) {
        break;
      }
    }
    return sb.toString();
  }
}
