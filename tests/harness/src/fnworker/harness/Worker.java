// One worker process and the runner-side servers it talks to: what Flink's
// DefaultJobBundleFactory + ProcessEnvironmentFactory hold for an
// environment. Several FunctionRunners (operators) may share one Worker.
// Ids follow Beam's generators: worker "1-1", descriptors "1-2", "1-3", ...;
// instruction ids are a decimal counter.
package fnworker.harness;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.pipeline.v1.RunnerApi;

public final class Worker implements AutoCloseable {
  public static final String RUNNER_SCRIPT = "pyflink-udf-runner.sh";

  public static final class Options {
    /** The worker binary (--worker); ignored when runnerDir is set. */
    public String workerBinary;
    /** Flink's way: run DIR/pyflink-udf-runner.sh (PYFLINK_UDF_RUNNER_DIR). */
    public String runnerDir;
    public boolean verbose;
    /** Give up if no Control connection after this long (0 = wait forever, like Flink). */
    public long startupTimeoutMs = 60_000;
    /** Deliver descriptors with the deprecated register request instead of the pull model. */
    public boolean useRegister;
    /** Old Beam's five flags instead of --id/--provision_endpoint. */
    public boolean legacyFlags;
    /** Extra environment variables for the worker. */
    public final Map<String, String> env = new LinkedHashMap<>();
    public final List<String> experiments = new ArrayList<>(List.of("state_cache_size=1000"));
    /** Extra pipeline options (key -> string value) served by the provision service. */
    public final Map<String, String> pipelineOptions = new LinkedHashMap<>();
    /** Extra worker flags after Flink's (not something Flink passes; for tests, e.g. "--early-data-ttl=1"). */
    public final List<String> extraArgs = new ArrayList<>();
    /** After closing the servers, let the worker exit by itself this long before SIGTERM (Flink: 0). */
    public long selfExitWaitMs;
    /** SIGTERM -> SIGKILL grace (Flink: 2 s). */
    public long killGraceMs = 2000;
    /** Keep the temp dir (boot log, worker output) after close. */
    public boolean keepTmp = System.getenv("FNW_KEEP_TMP") != null;
    /** Apply FNW_WRAPPER to the command (not meaningful through the runner script). */
    public boolean useWrapper = true;
    public String factoryId = "1";
  }

  public final Options options;
  public final Servers servers;
  public final Path tmpDir;
  public final String workerId;
  public final Map<String, String> launchEnv;
  public final RunnerApi.Environment environment;
  private final AtomicLong stageIds;
  private final AtomicLong instructionIds = new AtomicLong();
  private WorkerProcess process;
  private ControlClient control;
  private Integer exitCode;
  private boolean closed;

  private Worker(Options o) throws IOException {
    this.options = o;
    this.stageIds = new AtomicLong();
    this.tmpDir = Files.createTempDirectory("python-dist-");
    this.servers = new Servers("[worker log] ", o.verbose, o.experiments, o.pipelineOptions);
    this.workerId = o.factoryId + "-" + stageIds.incrementAndGet();
    Map<String, String> env = new LinkedHashMap<>(System.getenv());
    env.put("BOOT_LOG_DIR", tmpDir.toString());
    env.put("PYFLINK_GATEWAY_DISABLED", "true");
    env.put("_PYTHON_WORKER_MEMORY_LIMIT", "-1");
    env.put("TABLE_LOCAL_TIME_ZONE", ZoneId.systemDefault().getId());
    env.put("python", "python");
    env.putAll(o.env);
    this.launchEnv = env;
    this.environment = RunnerApi.Environment.newBuilder()
        .setUrn("beam:env:process:v1")
        .setPayload(RunnerApi.ProcessPayload.newBuilder().setOs("").setArch("").setCommand(command())
            .putAllEnv(env).build().toByteString())
        .build();
  }

  private String command() {
    if (options.runnerDir != null) {
      return new File(options.runnerDir, RUNNER_SCRIPT).getPath();
    }
    return options.workerBinary;
  }

  /** Launches the worker and waits for its Control connection. */
  public static Worker start(Options o) throws IOException, InterruptedException {
    Worker w = new Worker(o);
    try {
      w.launch();
    } catch (IOException | RuntimeException | InterruptedException e) {
      w.abortQuietly();
      throw e;
    }
    return w;
  }

  private void launch() throws IOException, InterruptedException {
    String cmd = command();
    if (cmd == null) {
      throw new IOException("no worker given (--worker PATH or --runner-dir DIR)");
    }
    File f = new File(cmd);
    if (!f.isFile()) {
      throw new IOException("worker executable not found: " + cmd + (options.runnerDir == null
          ? " (build it with `make`)" : " (the runner dir must contain " + RUNNER_SCRIPT + ")"));
    }
    if (!f.canExecute()) {
      throw new IOException("worker executable is not executable: " + cmd);
    }
    List<String> args = new ArrayList<>();
    args.add("--id=" + workerId);
    if (options.legacyFlags) {
      args.add("--logging_endpoint=" + servers.loggingUrl());
      args.add("--artifact_endpoint=" + servers.provision.info().getArtifactEndpoint().getUrl());
      args.add("--provision_endpoint=" + servers.provisionUrl());
      args.add("--control_endpoint=" + servers.controlUrl());
    } else {
      args.add("--provision_endpoint=" + servers.provisionUrl());
    }
    args.addAll(options.extraArgs);
    process = WorkerProcess.start(cmd, args, options.useWrapper && options.runnerDir == null, workerId,
        launchEnv, tmpDir, options.verbose ? "[worker " + workerId + "] " : null);
    long start = System.currentTimeMillis();
    long lastNote = start;
    while (true) {
      ControlClient c = servers.control.take(workerId, 50);
      if (c != null) {
        control = c;
        Log.info("worker " + workerId + " connected after " + (System.currentTimeMillis() - start) + " ms");
        return;
      }
      Integer code = process.exitCode();
      if (code != null) {
        process.waitFor(1000);
        throw new IllegalStateException("Process died with exit code " + code + "\n--- boot log ---\n"
            + process.bootLog());
      }
      long now = System.currentTimeMillis();
      if (options.startupTimeoutMs > 0 && now - start > options.startupTimeoutMs) {
        process.stop(options.killGraceMs);
        throw new IllegalStateException("worker " + workerId + " opened no Control stream within "
            + options.startupTimeoutMs + " ms\n--- boot log ---\n" + process.bootLog());
      }
      if (now - lastNote > 5000) {
        Log.info("Still waiting for startup of environment " + cmd + " for worker id " + workerId);
        lastNote = now;
      }
    }
  }

  public ControlClient control() {
    return control;
  }

  public WorkerProcess process() {
    return process;
  }

  public String nextDescriptorId() {
    return options.factoryId + "-" + stageIds.incrementAndGet();
  }

  public String nextInstructionId() {
    return Long.toString(instructionIds.incrementAndGet());
  }

  /** Makes a descriptor known to the worker: pull model, or a register request if so configured. */
  public void registerDescriptor(BeamFnApi.ProcessBundleDescriptor d, long timeoutMs) {
    if (!options.useRegister) {
      servers.control.registerDescriptor(d);
      return;
    }
    BeamFnApi.InstructionRequest req = BeamFnApi.InstructionRequest.newBuilder()
        .setInstructionId(nextInstructionId())
        .setRegister(BeamFnApi.RegisterRequest.newBuilder().addProcessBundleDescriptor(d))
        .build();
    try {
      if (timeoutMs > 0) {
        control.handle(req).get(timeoutMs, TimeUnit.MILLISECONDS);
      } else {
        control.handle(req).get();
      }
    } catch (ExecutionException e) {
      throw new RuntimeException("register request failed", e.getCause());
    } catch (TimeoutException e) {
      throw new RuntimeException("no RegisterResponse within " + timeoutMs + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RuntimeException(e);
    }
  }

  /** The worker's resident set in KiB (VmRSS of /proc/PID/status), or -1 if unreadable. */
  public long rssKb() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | RuntimeException e) {
      // gone, or not Linux
    }
    return -1;
  }

  /**
   * Why RSS figures of this worker mean nothing (it runs under FNW_WRAPPER, e.g. valgrind,
   * or was built with AddressSanitizer, whose quarantine keeps freed memory), or null.
   */
  public String rssUnreliable() {
    String wrapper = System.getenv("FNW_WRAPPER");
    if (options.useWrapper && wrapper != null && !wrapper.isBlank()) {
      return "the worker runs under " + wrapper.trim().split("\\s+")[0];
    }
    try {
      if (Files.readString(Path.of("/proc/" + process.pid() + "/maps")).contains("libasan")) {
        return "the worker is built with AddressSanitizer";
      }
    } catch (IOException | RuntimeException e) {
      return "cannot read /proc/" + process.pid() + "/maps";
    }
    return null;
  }

  /** Teardown like Flink: close logging, control, data, state (...) servers, then stop the process. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    servers.close();
    try {
      if (process != null) {
        if (options.selfExitWaitMs > 0) {
          process.waitFor(options.selfExitWaitMs);
        }
        exitCode = process.stop(options.killGraceMs);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    deleteTmp();
  }

  /** Exit code after close() (or once the process ended), else null. */
  public Integer exitCode() {
    if (exitCode == null && process != null) {
      return process.exitCode();
    }
    return exitCode;
  }

  /** True when close() had to SIGTERM the process (it had not exited on its own). */
  public boolean wasTerminated() {
    return process != null && process.sentTerm();
  }

  /** A runner that vanished: every server dropped at once, nothing completed. */
  public void abortServers() {
    servers.abort();
  }

  private void abortQuietly() {
    servers.abort();
    if (process != null && process.isAlive()) {
      process.sigkill();
    }
    deleteTmp();
  }

  private void deleteTmp() {
    if (options.keepTmp) {
      System.err.println("[harness] kept " + tmpDir);
      return;
    }
    try (Stream<Path> s = Files.walk(tmpDir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }
}
