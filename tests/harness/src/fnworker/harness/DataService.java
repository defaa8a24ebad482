// BeamFnData as the runner serves it (Beam's GrpcDataService): the first
// client to connect carries all runner->worker traffic; inbound Elements are
// demultiplexed by (instruction_id, transform_id) to receivers registered per
// bundle. Data for an instruction nobody registered yet is held until it is.
// Protocol slips the Java runner would reject are collected as violations.
// Fault hooks: resetStreams() fails every Data stream from the server side
// (the next client to connect then carries the traffic, as if the runner
// accepted a reconnect); pauseReading() stops taking the worker's messages
// (no more gRPC requests, so HTTP/2 flow control pushes back on it) until
// resumeReading().
package fnworker.harness;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.fnexecution.v1.BeamFnDataGrpc;

public final class DataService extends BeamFnDataGrpc.BeamFnDataImplBase {
  /** Receives one (instruction, transform) stream. */
  public interface Receiver {
    void accept(byte[] data);

    void last();
  }

  private final Object lock = new Object();
  private volatile CompletableFuture<ServerCallStreamObserver<BeamFnApi.Elements>> firstClient =
      new CompletableFuture<>();
  private boolean paused;
  private final List<ServerCallStreamObserver<BeamFnApi.Elements>> owed = new ArrayList<>();
  private final List<ServerCallStreamObserver<BeamFnApi.Elements>> clients = new ArrayList<>();
  private final Map<String, Map<String, Receiver>> receivers = new HashMap<>();
  private final Map<String, Set<String>> doneTransforms = new HashMap<>();
  private final Map<String, List<BeamFnApi.Elements.Data>> early = new HashMap<>();
  private final Set<String> finished = new HashSet<>();
  private final Set<String> failed = new HashSet<>();
  private final List<String> violations = new ArrayList<>();
  private final List<String> late = new ArrayList<>();
  private final Object sendLock = new Object();
  private volatile boolean closed;
  private long elementsMessagesIn;
  private long elementsMessagesOut;

  @Override
  public StreamObserver<BeamFnApi.Elements> data(StreamObserver<BeamFnApi.Elements> outbound) {
    ServerCallStreamObserver<BeamFnApi.Elements> out = (ServerCallStreamObserver<BeamFnApi.Elements>) outbound;
    out.setOnReadyHandler(() -> {
      synchronized (sendLock) {
        sendLock.notifyAll();
      }
    });
    out.disableAutoRequest();
    synchronized (lock) {
      clients.add(out);
    }
    firstClient.complete(out);
    Log.info("Beam Fn Data client connected (" + clientCount() + " so far)");
    requestNext(out);
    return new StreamObserver<>() {
      @Override
      public void onNext(BeamFnApi.Elements e) {
        dispatch(e);
        requestNext(out);
      }

      @Override
      public void onError(Throwable t) {
        Log.info("Data stream failed: " + t);
      }

      @Override
      public void onCompleted() {
        synchronized (sendLock) {
          try {
            out.onCompleted();
          } catch (RuntimeException e) {
            // already closed
          }
        }
      }
    };
  }

  /** Asks gRPC for the stream's next message, or owes it while reading is paused. */
  private void requestNext(ServerCallStreamObserver<BeamFnApi.Elements> out) {
    synchronized (lock) {
      if (paused) {
        owed.add(out);
        return;
      }
    }
    try {
      out.request(1);
    } catch (RuntimeException e) {
      // the call has ended
    }
  }

  /** Stops taking the worker's messages: what it sends next waits in its flow-control window. */
  public void pauseReading() {
    synchronized (lock) {
      paused = true;
    }
  }

  /** Takes the worker's messages again (those owed since pauseReading first). */
  public void resumeReading() {
    List<ServerCallStreamObserver<BeamFnApi.Elements>> again;
    synchronized (lock) {
      paused = false;
      again = new ArrayList<>(owed);
      owed.clear();
    }
    for (ServerCallStreamObserver<BeamFnApi.Elements> out : again) {
      requestNext(out);
    }
  }

  /**
   * Fails every Data stream from the server side with UNAVAILABLE and description why
   * (the worker sees the stream end with that status). The next client to connect
   * carries all traffic from then on; sends wait for it like the first one.
   */
  public void resetStreams(String why) {
    List<ServerCallStreamObserver<BeamFnApi.Elements>> copy;
    synchronized (lock) {
      copy = new ArrayList<>(clients);
      owed.clear();
      firstClient = new CompletableFuture<>();
    }
    synchronized (sendLock) {
      for (ServerCallStreamObserver<BeamFnApi.Elements> c : copy) {
        try {
          c.onError(Status.UNAVAILABLE.withDescription(why).asRuntimeException());
        } catch (RuntimeException e) {
          // already closed
        }
      }
      sendLock.notifyAll();
    }
    Log.info("reset " + copy.size() + " Data stream(s): " + why);
  }

  /** Data streams connected so far (reset ones included). */
  public int clientCount() {
    synchronized (lock) {
      return clients.size();
    }
  }

  private void dispatch(BeamFnApi.Elements e) {
    List<Runnable> deliveries = new ArrayList<>();
    synchronized (lock) {
      elementsMessagesIn++;
      for (BeamFnApi.Elements.Data d : e.getDataList()) {
        route(d, deliveries);
      }
      for (BeamFnApi.Elements.Timers t : e.getTimersList()) {
        Map<String, Receiver> byTransform = receivers.get(t.getInstructionId());
        if (byTransform == null || !byTransform.containsKey(timerKey(t.getTransformId(), t.getTimerFamilyId()))) {
          violations.add("unexpected timers for instruction " + t.getInstructionId() + " transform "
              + t.getTransformId() + " family " + t.getTimerFamilyId());
          continue;
        }
        // A keyed operator's timer stream: routed like data, under timerKey(transform, family).
        route(BeamFnApi.Elements.Data.newBuilder().setInstructionId(t.getInstructionId())
            .setTransformId(timerKey(t.getTransformId(), t.getTimerFamilyId())).setData(t.getTimers())
            .setIsLast(t.getIsLast()).build(), deliveries);
      }
    }
    for (Runnable r : deliveries) {
      r.run();
    }
  }

  /** Under lock: find the receiver or hold the data; deliveries run outside the lock. */
  private void route(BeamFnApi.Elements.Data d, List<Runnable> deliveries) {
    String instr = d.getInstructionId();
    Map<String, Receiver> byTransform = receivers.get(instr);
    if (byTransform == null) {
      if (finished.contains(instr) && !failed.contains(instr)) {
        violations.add("data after the end of bundle " + instr + " (all its is_last already arrived): transform "
            + d.getTransformId() + ", " + d.getData().size() + " bytes" + (d.getIsLast() ? ", is_last" : ""));
      } else if (finished.contains(instr)) {
        // Beam drops data of failed ("poisoned") instructions; it may legitimately
        // race the error response, so it is noted, not a violation.
        late.add("instruction " + instr + " transform " + d.getTransformId() + " ("
            + d.getData().size() + " bytes" + (d.getIsLast() ? ", is_last" : "") + ")");
      } else {
        early.computeIfAbsent(instr, k -> new ArrayList<>()).add(d);
      }
      return;
    }
    Receiver r = byTransform.get(d.getTransformId());
    if (r == null) {
      violations.add(String.format("Unable to find inbound data receiver for instruction %s and transform %s",
          instr, d.getTransformId()));
      return;
    }
    Set<String> done = doneTransforms.computeIfAbsent(instr, k -> new HashSet<>());
    if (done.contains(d.getTransformId())) {
      violations.add("Received data after inbound data receiver is done: instruction " + instr + " transform "
          + d.getTransformId());
      return;
    }
    byte[] bytes = d.getData().toByteArray();
    boolean last = d.getIsLast();
    if (last) {
      done.add(d.getTransformId());
    }
    deliveries.add(() -> {
      if (bytes.length > 0) {
        r.accept(bytes);
      }
      if (last) {
        r.last();
      }
    });
  }

  /** The receiver key of a timer stream (instruction's receivers map): "timers:<transform>/<family>". */
  public static String timerKey(String transformId, String family) {
    return "timers:" + transformId + "/" + family;
  }

  /** Registers the receivers of one bundle (before its request is sent). */
  public void register(String instructionId, Map<String, Receiver> byTransform) {
    List<Runnable> deliveries = new ArrayList<>();
    synchronized (lock) {
      receivers.put(instructionId, new HashMap<>(byTransform));
      List<BeamFnApi.Elements.Data> held = early.remove(instructionId);
      if (held != null) {
        for (BeamFnApi.Elements.Data d : held) {
          route(d, deliveries);
        }
      }
    }
    for (Runnable r : deliveries) {
      r.run();
    }
  }

  /** Drops a bundle's receivers; later data for it is a violation unless the bundle failed. */
  public void unregister(String instructionId, boolean bundleFailed) {
    synchronized (lock) {
      if (bundleFailed) {
        failed.add(instructionId);
      }
      receivers.remove(instructionId);
      doneTransforms.remove(instructionId);
      finished.add(instructionId);
    }
  }

  /**
   * Waits up to timeoutMs for the first Data client, as Beam's createOutboundAggregator
   * does at the start of every bundle (3 min there); fails with Beam's message.
   */
  public ServerCallStreamObserver<BeamFnApi.Elements> awaitClient(long timeoutMs) {
    try {
      return firstClient.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException ex) {
      throw new IllegalStateException("No client connected within timeout (" + timeoutMs + " ms)");
    } catch (Exception ex) {
      throw new IllegalStateException("waiting for a Data client: " + ex, ex);
    }
  }

  public boolean hasClient() {
    return firstClient.isDone();
  }

  /** Sends to the first connected client (waiting for one like awaitClient). */
  public void send(BeamFnApi.Elements e, long connectTimeoutMs) {
    ServerCallStreamObserver<BeamFnApi.Elements> out = awaitClient(connectTimeoutMs);
    synchronized (sendLock) {
      while (!out.isReady() && !out.isCancelled() && !closed) {
        try {
          sendLock.wait(20);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while sending data");
        }
      }
      if (out.isCancelled() || closed) {
        throw new IllegalStateException("Data stream closed");
      }
      out.onNext(e);
      elementsMessagesOut++;
    }
  }

  /**
   * Test hook: sends any Elements message as it is (arbitrary instruction ids, unknown
   * fields, is_last-only entries), waiting for the first client and for flow control.
   */
  public void inject(BeamFnApi.Elements e) {
    send(e, 60_000);
  }

  /** Protocol violations seen so far (empty for a well-behaved worker). */
  public List<String> violations() {
    synchronized (lock) {
      return new ArrayList<>(violations);
    }
  }

  /** Data that arrived for instructions already finished (dropped). */
  public List<String> lateData() {
    synchronized (lock) {
      return new ArrayList<>(late);
    }
  }

  /** Instruction ids with data that no bundle registered for (yet). */
  public Set<String> heldInstructions() {
    synchronized (lock) {
      return new HashSet<>(early.keySet());
    }
  }

  public long messagesIn() {
    synchronized (lock) {
      return elementsMessagesIn;
    }
  }

  public long messagesOut() {
    synchronized (sendLock) {
      return elementsMessagesOut;
    }
  }

  /** Completes every Data stream from the runner side. */
  public void close() {
    closed = true;
    List<ServerCallStreamObserver<BeamFnApi.Elements>> copy;
    synchronized (lock) {
      copy = new ArrayList<>(clients);
    }
    synchronized (sendLock) {
      for (ServerCallStreamObserver<BeamFnApi.Elements> c : copy) {
        try {
          c.onCompleted();
        } catch (RuntimeException e) {
          // already closed
        }
      }
      sendLock.notifyAll();
    }
  }
}
