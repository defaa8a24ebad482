// Launching and stopping the worker process the way Beam's
// ProcessEnvironmentFactory + Flink's ProcessManager do:
//   <command> --id=<workerId> --provision_endpoint=localhost:<port>
// with the parent environment plus Flink's variables, stdout+stderr captured
// (kept in memory and in <tmp>/worker-<id>.out), SIGTERM then SIGKILL after a
// grace period. FNW_WRAPPER (split on blanks) prefixes the command.
package fnworker.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

public final class WorkerProcess {
  public static final String BOOT_LOG_NAME = "flink-python-udf-boot.log";
  private static final int KEEP_CHARS = 1 << 20;

  public final String workerId;
  public final List<String> commandLine;
  public final Path bootLogDir;
  private final Process process;
  private final Thread pump;
  private final StringBuilder output = new StringBuilder();
  private volatile boolean sentTerm;

  private WorkerProcess(String workerId, List<String> cmd, Path bootLogDir, Process p, String printPrefix)
      throws IOException {
    this.workerId = workerId;
    this.commandLine = cmd;
    this.bootLogDir = bootLogDir;
    this.process = p;
    Path outFile = bootLogDir.resolve("worker-" + workerId + ".out");
    Writer file = Files.newBufferedWriter(outFile, StandardCharsets.UTF_8);
    pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
           Writer w = file) {
        String line;
        while ((line = r.readLine()) != null) {
          synchronized (output) {
            output.append(line).append('\n');
            if (output.length() > KEEP_CHARS) {
              output.delete(0, output.length() - KEEP_CHARS / 2);
            }
          }
          w.write(line);
          w.write('\n');
          w.flush();
          if (printPrefix != null) {
            System.err.println(printPrefix + line);
          }
        }
      } catch (IOException e) {
        // process gone
      }
    }, "worker-output-" + workerId);
    pump.setDaemon(true);
    pump.start();
  }

  /** Starts {@code [FNW_WRAPPER...] executable args...}; wrapper only when useWrapper. */
  public static WorkerProcess start(String executable, List<String> args, boolean useWrapper, String workerId,
      Map<String, String> env, Path bootLogDir, String printPrefix) throws IOException {
    List<String> cmd = new ArrayList<>();
    String wrapper = System.getenv("FNW_WRAPPER");
    if (useWrapper && wrapper != null && !wrapper.isBlank()) {
      for (String w : wrapper.trim().split("\\s+")) {
        cmd.add(w);
      }
    }
    cmd.add(executable);
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    Log.info("launching " + String.join(" ", cmd));
    return new WorkerProcess(workerId, cmd, bootLogDir, pb.start(), printPrefix);
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Exit code (128+signal if killed), or null while running. */
  public Integer exitCode() {
    return process.isAlive() ? null : process.exitValue();
  }

  /** Waits up to ms for the process to end; its exit code or null. */
  public Integer waitFor(long ms) throws InterruptedException {
    if (process.waitFor(ms, TimeUnit.MILLISECONDS)) {
      pump.join(1000);
      return process.exitValue();
    }
    return null;
  }

  /** Everything the process printed so far (last 1 MB). */
  public String output() {
    synchronized (output) {
      return output.toString();
    }
  }

  /** The boot log file the runner script writes, if any, else the captured output. */
  public String bootLog() {
    Path p = bootLogDir.resolve(BOOT_LOG_NAME);
    try {
      if (Files.exists(p)) {
        return Files.readString(p, StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      // fall through
    }
    return output();
  }

  public boolean sentTerm() {
    return sentTerm;
  }

  public void sigterm() {
    sentTerm = true;
    process.destroy();
  }

  public void sigkill() {
    process.destroyForcibly();
  }

  /** Sends any signal by name (e.g. "INT", "USR1") with the shell's own kill
   * (a minimal Debian has no kill(1) binary: it comes with procps). */
  public void signal(String name) throws IOException, InterruptedException {
    if (!name.matches("[A-Z0-9]+")) {
      throw new IllegalArgumentException("signal name " + name);
    }
    new ProcessBuilder("sh", "-c", "kill -" + name + " " + pid()).inheritIO().start().waitFor();
  }

  /** Flink's stop: SIGTERM, up to graceMs, then SIGKILL. Returns the exit code. */
  public int stop(long graceMs) throws InterruptedException {
    if (process.isAlive()) {
      sigterm();
      if (!process.waitFor(graceMs, TimeUnit.MILLISECONDS)) {
        Log.warn("worker " + workerId + " still alive " + graceMs + " ms after SIGTERM; sending SIGKILL");
        sigkill();
        process.waitFor();
      }
    }
    pump.join(1000);
    return process.exitValue();
  }
}
