// fnworker's stand-in for Flink's BeamPythonFunctionRunner (the
// PythonFunctionRunner contract): open(), process(record), pollResult(),
// takeResult(), flush(), close(). A bundle starts lazily on the first
// process() after open/flush and ends by size (bundleSize) or time
// (bundleTimeMs) or on flush(). Input goes out like Beam's
// BeamFnDataOutboundAggregator: varint(len)+record buffered, flushed past
// 1,000,000 bytes, the rest plus is_last in one Elements at bundle close.
// Errors surface like Flink's: "Failed to close remote bundle" caused by
// "Error received from SDK harness for instruction <id>: <error>".
package fnworker.harness;

import com.google.protobuf.ByteString;
import fnworker.harness.types.ByteWriter;
import fnworker.harness.types.TypeInfo;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.pipeline.v1.MetricsApi;

public final class FunctionRunner implements AutoCloseable {
  /** One output record: the PCollection it came on ("output" or a side tag) and its bytes. */
  public static final class Result {
    public final String tag;
    public final byte[] bytes;

    public Result(String tag, byte[] bytes) {
      this.tag = tag;
      this.bytes = bytes;
    }
  }

  public static final class Config {
    public TypeInfo inputType;
    public TypeInfo outputType;
    public final List<DescriptorBuilder.Fn> functions = new ArrayList<>();
    public final Map<String, TypeInfo> sideOutputs = new LinkedHashMap<>();
    public int bundleSize = 100_000;
    public long bundleTimeMs = 1000;
    /** Max wait for a bundle's response and outputs (0 = forever, like Flink). */
    public long flushTimeoutMs;
    public String taskName = "harness operator";
    public boolean metricEnabled = true;
    public final Map<String, String> jobParameters = new LinkedHashMap<>();
    /** Flush buffered input once it exceeds this many bytes (Beam: 1,000,000). */
    public int bufferLimitBytes = 1_000_000;
    /** Test hook: cut buffered input into Data messages of at most this many bytes (0 = off). */
    public int maxChunkBytes;
    /** Test hook: send the ProcessBundleRequest only at close, after all data and is_last. */
    public boolean requestAfterData;
    /** Wait this long for the worker's Data stream (Beam: 3 min). */
    public long dataConnectTimeoutMs = 180_000;
    /** Test hook: the input coder's CoderInfoDescriptor bytes as sent (see WireBytes). */
    public byte[] inputCoderPayload;
    /**
     * A keyed operator (ExternalPythonKeyedProcessOperator): the key row type (ROW<f0:K>; the
     * input is then ROW<f0:K,f1:V>, AddKey's output). The head function gets the stateful URN,
     * key_type_info and the timer family; bundles get the keyed state handler and the timer
     * streams (Flink's is_last on "timer" in, the worker's timers out).
     */
    public TypeInfo keyType;
    /** Test hook: rewrites the built descriptor before it is registered (e.g. adds raw fields). */
    public java.util.function.UnaryOperator<BeamFnApi.ProcessBundleDescriptor> editDescriptor;
  }

  /** What one finished bundle left behind, for tests and summaries. */
  public static final class BundleRecord {
    public final String instructionId;
    public final int elements;
    public final long outputs;
    public final String error;
    public final List<MetricsApi.MonitoringInfo> monitoringInfos;
    public final List<String> problems;

    BundleRecord(String id, int elements, long outputs, String error, List<MetricsApi.MonitoringInfo> infos,
        List<String> problems) {
      this.instructionId = id;
      this.elements = elements;
      this.outputs = outputs;
      this.error = error;
      this.monitoringInfos = infos;
      this.problems = problems;
    }
  }

  private final class Bundle {
    final String instructionId = worker.nextInstructionId();
    final Map<String, OutputReceiver> receivers = new LinkedHashMap<>();
    final ByteWriter buffer = new ByteWriter(1 << 16);
    final long startMs = System.currentTimeMillis();
    final TimerReceiver timers = new TimerReceiver();
    final ByteWriter timerInput = new ByteWriter(256);
    final BeamFnApi.InstructionRequest request;
    CompletableFuture<BeamFnApi.InstructionResponse> response;
    int elements;

    Bundle() {
      // Results of the main output carry the tag "output"; its PCollection is
      // DescriptorBuilder.MAIN_OUTPUT (""), as in a real Flink.
      receivers.put("output", new OutputReceiver("output", DescriptorBuilder.sinkId(DescriptorBuilder.MAIN_OUTPUT),
          results::add));
      for (String tag : cfg.sideOutputs.keySet()) {
        receivers.put(tag, new OutputReceiver(tag, DescriptorBuilder.sinkId(tag), results::add));
      }
      Map<String, DataService.Receiver> byTransform = new LinkedHashMap<>();
      for (OutputReceiver r : receivers.values()) {
        byTransform.put(r.transformId, r);
      }
      if (cfg.keyType != null) {
        byTransform.put(DataService.timerKey(TIMER_TRANSFORM, DescriptorBuilder.TIMER_FAMILY), timers);
        worker.servers.state.registerKeyed(instructionId);
      } else {
        worker.servers.state.registerUnsupported(instructionId);
      }
      worker.servers.data.register(instructionId, byTransform);
      request = BeamFnApi.InstructionRequest.newBuilder()
          .setInstructionId(instructionId)
          .setProcessBundle(BeamFnApi.ProcessBundleRequest.newBuilder()
              .setProcessBundleDescriptorId(descriptor.getId())
              .addCacheTokens(BeamFnApi.ProcessBundleRequest.CacheToken.newBuilder()
                  .setUserState(BeamFnApi.ProcessBundleRequest.CacheToken.UserState.getDefaultInstance())
                  .setToken(ByteString.copyFrom(cacheToken, StandardCharsets.UTF_8))))
          .build();
      if (!cfg.requestAfterData) {
        response = worker.control().handle(request);
      }
      awaitDataClient();
    }

    /**
     * Beam's newBundle blocks (up to 3 min) in createOutboundAggregator until the worker's
     * Data stream exists, whatever happens to the request meanwhile.
     */
    private void awaitDataClient() {
      try {
        worker.servers.data.awaitClient(cfg.dataConnectTimeoutMs);
      } catch (IllegalStateException e) {
        String answer = "";
        if (response != null && response.isDone()) {
          try {
            response.getNow(null);
          } catch (RuntimeException ex) {
            answer = "; meanwhile the worker answered the bundle with: " + Main.describe(ex.getCause() != null
                ? ex.getCause() : ex) + ". Flink's runner blocks up to 3 minutes here and then fails with this"
                + " message instead: a worker must open its Data stream before it fails a bundle";
          }
        }
        worker.servers.data.unregister(instructionId, true);
        worker.servers.state.deregister(instructionId);
        throw new IllegalStateException(e.getMessage() + answer, e);
      }
    }

    void add(byte[] framedOrRaw, boolean frame) {
      if (frame) {
        buffer.varint(framedOrRaw.length);
      }
      buffer.bytes(framedOrRaw);
      if (buffer.size() > cfg.bufferLimitBytes) {
        sendBuffered(false);
      }
    }

    private BeamFnApi.Elements.Data.Builder data() {
      return BeamFnApi.Elements.Data.newBuilder().setInstructionId(instructionId)
          .setTransformId(DescriptorBuilder.READ_ID);
    }

    /** Sends what is buffered; with last, also the is_last entry (one Elements unless chunking). */
    void sendBuffered(boolean last) {
      int n = buffer.size();
      if (cfg.maxChunkBytes > 0) {
        for (int off = 0; off < n; off += cfg.maxChunkBytes) {
          int len = Math.min(cfg.maxChunkBytes, n - off);
          send(BeamFnApi.Elements.newBuilder()
              .addData(data().setData(ByteString.copyFrom(buffer.array(), off, len))).build());
        }
        if (last) {
          BeamFnApi.Elements.Builder e = BeamFnApi.Elements.newBuilder().addData(data().setIsLast(true));
          addTimersLast(e);
          send(e.build());
        }
      } else {
        BeamFnApi.Elements.Builder e = BeamFnApi.Elements.newBuilder();
        if (n > 0) {
          e.addData(data().setData(ByteString.copyFrom(buffer.array(), 0, n)));
        }
        if (last) {
          e.addData(data().setIsLast(true));
          addTimersLast(e);
        }
        if (e.getDataCount() > 0) {
          send(e.build());
        }
      }
      buffer.reset();
    }

    /** A keyed operator's bundle ends its timer stream to the worker too (no timer fired here). */
    private void addTimersLast(BeamFnApi.Elements.Builder e) {
      if (cfg.keyType != null) {
        if (timerInput.size() > 0) {
          // fired timers in an entry of their own: Beam's SDK ignores the data of an is_last entry
          e.addTimers(BeamFnApi.Elements.Timers.newBuilder().setInstructionId(instructionId)
              .setTransformId(TIMER_TRANSFORM).setTimerFamilyId(DescriptorBuilder.TIMER_FAMILY)
              .setTimers(ByteString.copyFrom(timerInput.array(), 0, timerInput.size())));
        }
        e.addTimers(BeamFnApi.Elements.Timers.newBuilder().setInstructionId(instructionId)
            .setTransformId(TIMER_TRANSFORM).setTimerFamilyId(DescriptorBuilder.TIMER_FAMILY).setIsLast(true));
      }
    }

    private void send(BeamFnApi.Elements e) {
      worker.servers.data.send(e, cfg.dataConnectTimeoutMs);
    }
  }

  /** The head function: where a keyed operator's timers go in and come out. */
  static final String TIMER_TRANSFORM = "transform-0";

  /** The worker's timer stream of one bundle (none is expected here: bytes kept, is_last awaited). */
  static final class TimerReceiver implements DataService.Receiver {
    final CompletableFuture<Void> done = new CompletableFuture<>();
    final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();

    @Override
    public synchronized void accept(byte[] data) {
      bytes.writeBytes(data);
    }

    @Override
    public void last() {
      done.complete(null);
    }
  }

  private final Worker worker;
  private final boolean ownsWorker;
  public final Config cfg;
  private final String cacheToken = UUID.randomUUID().toString();
  private final LinkedBlockingQueue<Result> results = new LinkedBlockingQueue<>();
  private final List<BundleRecord> history = new ArrayList<>();
  private BeamFnApi.ProcessBundleDescriptor descriptor;
  private Bundle bundle;
  private volatile byte[] lastTimers;
  private long recordsIn;
  private long resultsTaken;

  public FunctionRunner(Worker worker, Config cfg) {
    this(worker, cfg, false);
  }

  private FunctionRunner(Worker worker, Config cfg, boolean owns) {
    this.worker = worker;
    this.cfg = cfg;
    this.ownsWorker = owns;
  }

  /** A runner with its own worker process, closed with it. */
  public static FunctionRunner withOwnWorker(Worker.Options wo, Config cfg) throws Exception {
    return new FunctionRunner(Worker.start(wo), cfg, true);
  }

  public Worker worker() {
    return worker;
  }

  public BeamFnApi.ProcessBundleDescriptor descriptor() {
    return descriptor;
  }

  /** Builds and registers the descriptor (sends nothing unless the worker uses register). */
  public void open() {
    DescriptorBuilder b = new DescriptorBuilder();
    b.id = worker.nextDescriptorId();
    b.inputType = cfg.inputType;
    b.outputType = cfg.outputType != null ? cfg.outputType : cfg.inputType;
    b.functions.addAll(cfg.functions);
    b.sideOutputs.putAll(cfg.sideOutputs);
    b.dataEndpoint = worker.servers.dataEndpoint();
    b.stateEndpoint = worker.servers.stateEndpoint();
    // No environment: a real Flink's descriptor has none (the worker was launched for it).
    b.taskName = cfg.taskName;
    b.metricEnabled = cfg.metricEnabled;
    b.jobParameters.putAll(cfg.jobParameters);
    b.inputCoderPayload = cfg.inputCoderPayload;
    if (cfg.keyType != null) {
      b.headUrn = DescriptorBuilder.STATEFUL_URN;
      b.timerKeyType = cfg.keyType;
      if (b.functions.get(0).keyType == null) {
        b.functions.get(0).keyType = cfg.keyType;
      }
    }
    descriptor = b.build();
    if (cfg.editDescriptor != null) {
      descriptor = cfg.editDescriptor.apply(descriptor);
    }
    worker.registerDescriptor(descriptor, cfg.flushTimeoutMs);
  }

  /** Starts a bundle now if none is active (process() does this lazily). */
  public String startBundle() {
    if (descriptor == null) {
      throw new IllegalStateException("open() first");
    }
    if (bundle == null) {
      try {
        bundle = new Bundle();
      } catch (IllegalStateException e) {
        // Flink: the failure surfaces from startBundle inside process()/flush()
        throw new RuntimeException("Failed to start remote bundle", e);
      }
    }
    return bundle.instructionId;
  }

  /** The active bundle's instruction id, or null. */
  public String activeInstruction() {
    return bundle == null ? null : bundle.instructionId;
  }

  /** One record: the Flink bytes of Row(LONG ts, LONG watermark, data). */
  public void process(byte[] record) {
    startBundle();
    bundle.add(record, true);
    bundle.elements++;
    recordsIn++;
    checkBundleEnd();
  }

  /**
   * A keyed operator's fired timer (Flink's processTimer): one Beam timer element, encoded as the
   * runner's timer coder does (see RelayScenarios.firedTimer), sent at the end of the bundle.
   */
  public void processTimer(byte[] beamTimer) {
    if (cfg.keyType == null) {
      throw new IllegalStateException("timers need a keyed operator (Config.keyType)");
    }
    startBundle();
    bundle.timerInput.bytes(beamTimer);
  }

  /** The timer stream the worker sent in the last finished bundle (Beam timer elements), or null. */
  public byte[] lastTimerOutput() {
    return lastTimers;
  }

  /** Test hook: bytes appended to the input stream as they are (no length prefix). */
  public void processRaw(byte[] bytes) {
    startBundle();
    bundle.add(bytes, false);
  }

  /** Test hook: sends what is buffered now (respecting maxChunkBytes), without ending the bundle. */
  public void sendBuffered() {
    if (bundle != null) {
      bundle.sendBuffered(false);
    }
  }

  private void checkBundleEnd() {
    if (bundle.elements >= cfg.bundleSize) {
      flush();
    } else {
      checkBundleTime();
    }
  }

  /** Ends the active bundle if it is older than bundleTimeMs (Flink's timer, polled). */
  public void checkBundleTime() {
    if (bundle != null && System.currentTimeMillis() - bundle.startMs >= cfg.bundleTimeMs) {
      flush();
    }
  }

  /** Non-blocking: the next result or null. */
  public Result pollResult() {
    Result r = results.poll();
    if (r != null) {
      resultsTaken++;
    }
    return r;
  }

  /** Blocking: the next result. */
  public Result takeResult() throws InterruptedException {
    Result r = results.take();
    resultsTaken++;
    return r;
  }

  /** Waits up to ms for the next result; null on timeout. */
  public Result takeResult(long ms) throws InterruptedException {
    Result r = results.poll(ms, TimeUnit.MILLISECONDS);
    if (r != null) {
      resultsTaken++;
    }
    return r;
  }

  /** Results waiting to be taken. */
  public int pendingResults() {
    return results.size();
  }

  /**
   * Ends the current bundle: sends the rest of the input and is_last, waits for the
   * ProcessBundleResponse, then for is_last on every output. No-op without a bundle.
   */
  public void flush() {
    flush(true);
  }

  /**
   * Test hook: ends the active bundle whose input and is_last the test sent itself (with
   * servers.data.inject): sends nothing, then waits as flush() does.
   */
  public void flushInjected() {
    flush(false);
  }

  private void flush(boolean sendRest) {
    if (bundle == null) {
      return;
    }
    Bundle b = bundle;
    bundle = null;
    String error = null;
    List<MetricsApi.MonitoringInfo> infos = List.of();
    try {
      if (sendRest) {
        b.sendBuffered(true);
      }
      if (b.response == null) {
        b.response = worker.control().handle(b.request);
      }
      BeamFnApi.InstructionResponse resp = await(b.response, "the ProcessBundleResponse of bundle " + b.instructionId);
      for (OutputReceiver r : b.receivers.values()) {
        await(r.done, "is_last on " + r.transformId + " for bundle " + b.instructionId);
      }
      if (cfg.keyType != null) {
        await(b.timers.done, "is_last on the timers of " + TIMER_TRANSFORM + " for bundle " + b.instructionId);
        synchronized (b.timers) {
          lastTimers = b.timers.bytes.toByteArray();
        }
      }
      infos = resp.getProcessBundle().getMonitoringInfosList();
    } catch (RuntimeException e) {
      error = String.valueOf(e.getCause() != null ? e.getCause().getMessage() : e.getMessage());
      if (error.equals("null")) {
        error = e.toString();
      }
      throw new RuntimeException("Failed to close remote bundle", e.getCause() != null ? e.getCause() : e);
    } finally {
      worker.servers.data.unregister(b.instructionId, error != null);
      worker.servers.state.deregister(b.instructionId);
      long outs = 0;
      List<String> problems = new ArrayList<>();
      for (OutputReceiver r : b.receivers.values()) {
        outs += r.records();
        problems.addAll(r.problems());
      }
      synchronized (history) {
        history.add(new BundleRecord(b.instructionId, b.elements, outs, error, infos, problems));
      }
    }
  }

  /**
   * Test hook for a runner that lost its Data stream mid-bundle: ends the active bundle
   * without sending more input (no is_last) and waits for its ProcessBundleResponse,
   * which must be an error. Returns the worker's error text; throws if the bundle
   * succeeded or no response came within flushTimeoutMs.
   */
  public String awaitBundleFailure() {
    if (bundle == null) {
      throw new IllegalStateException("no active bundle");
    }
    Bundle b = bundle;
    bundle = null;
    String error = null;
    try {
      if (b.response == null) {
        b.response = worker.control().handle(b.request);
      }
      BeamFnApi.InstructionResponse resp = await(b.response, "the ProcessBundleResponse of bundle " + b.instructionId);
      if (resp.getError().isEmpty()) {
        throw new IllegalStateException("bundle " + b.instructionId + " succeeded; a failure was expected");
      }
      error = resp.getError();
    } catch (RuntimeException e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      String m = String.valueOf(c.getMessage());
      String prefix = "Error received from SDK harness for instruction " + b.instructionId + ": ";
      if (!m.startsWith(prefix)) {
        throw e;
      }
      error = m.substring(prefix.length());
    } finally {
      worker.servers.data.unregister(b.instructionId, true);
      worker.servers.state.deregister(b.instructionId);
      synchronized (history) {
        history.add(new BundleRecord(b.instructionId, b.elements, 0, error, List.of(), List.of()));
      }
    }
    return error;
  }

  private <T> T await(CompletableFuture<T> f, String what) {
    try {
      return cfg.flushTimeoutMs > 0 ? f.get(cfg.flushTimeoutMs, TimeUnit.MILLISECONDS) : f.get();
    } catch (ExecutionException e) {
      throw new RuntimeException(e.getCause());
    } catch (TimeoutException e) {
      throw new RuntimeException(new TimeoutException("no " + what + " within " + cfg.flushTimeoutMs + " ms"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RuntimeException(e);
    }
  }

  public List<BundleRecord> bundles() {
    synchronized (history) {
      return new ArrayList<>(history);
    }
  }

  public BundleRecord lastBundle() {
    synchronized (history) {
      return history.isEmpty() ? null : history.get(history.size() - 1);
    }
  }

  public long recordsIn() {
    return recordsIn;
  }

  /** Flushes an open bundle, then (if it owns it) tears the worker down. */
  @Override
  public void close() {
    try {
      if (bundle != null) {
        flush();
      }
    } finally {
      if (ownsWorker) {
        worker.close();
      }
    }
  }
}
