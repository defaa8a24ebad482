// The runner's end of one worker's Control stream (Beam's FnApiControlClient):
// sends InstructionRequests, matches InstructionResponses by instruction id,
// turns a non-empty error into "Error received from SDK harness for
// instruction <id>: <error>", and fails everything outstanding with "SDK
// harness closed connection" when the worker ends the stream.
package fnworker.harness;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.model.fnexecution.v1.BeamFnApi.InstructionRequest;
import org.apache.beam.model.fnexecution.v1.BeamFnApi.InstructionResponse;

public final class ControlClient {
  public final String workerId;
  private final ServerCallStreamObserver<InstructionRequest> out;
  private final Map<String, CompletableFuture<InstructionResponse>> outstanding = new ConcurrentHashMap<>();
  private final List<InstructionResponse> responses = new ArrayList<>();
  private final List<String> unknownResponses = new ArrayList<>();
  /** Completes with the reason once the stream is over (from either side). */
  public final CompletableFuture<Throwable> closed = new CompletableFuture<>();
  private boolean outDone;

  ControlClient(String workerId, StreamObserver<InstructionRequest> out) {
    this.workerId = workerId;
    this.out = (ServerCallStreamObserver<InstructionRequest>) out;
  }

  /** Sends a request; the future completes with the raw response (error or not). */
  public CompletableFuture<InstructionResponse> sendRaw(InstructionRequest req) {
    CompletableFuture<InstructionResponse> f = new CompletableFuture<>();
    if (closed.isDone()) {
      f.completeExceptionally(closed.join());
      return f;
    }
    outstanding.put(req.getInstructionId(), f);
    synchronized (out) {
      if (outDone) {
        outstanding.remove(req.getInstructionId());
        f.completeExceptionally(new IllegalStateException("Control stream already closed"));
        return f;
      }
      out.onNext(req);
    }
    return f;
  }

  /** Like Beam's handle(): a response with an error completes the future exceptionally. */
  public CompletableFuture<InstructionResponse> handle(InstructionRequest req) {
    return sendRaw(req).thenApply(r -> {
      if (!r.getError().isEmpty()) {
        throw new CompletionException(new RuntimeException(
            "Error received from SDK harness for instruction " + r.getInstructionId() + ": " + r.getError()));
      }
      return r;
    });
  }

  StreamObserver<InstructionResponse> inbound() {
    return new StreamObserver<>() {
      @Override
      public void onNext(InstructionResponse r) {
        synchronized (responses) {
          responses.add(r);
        }
        CompletableFuture<InstructionResponse> f = outstanding.remove(r.getInstructionId());
        if (f == null) {
          synchronized (unknownResponses) {
            unknownResponses.add(r.getInstructionId());
          }
          Log.warn("Dropped unknown InstructionResponse " + r.getInstructionId());
        } else {
          f.complete(r);
        }
      }

      @Override
      public void onError(Throwable t) {
        closeWith(t);
      }

      @Override
      public void onCompleted() {
        closeWith(new IllegalStateException("SDK harness closed connection"));
      }
    };
  }

  private void closeWith(Throwable reason) {
    closed.complete(reason);
    for (String id : new ArrayList<>(outstanding.keySet())) {
      CompletableFuture<InstructionResponse> f = outstanding.remove(id);
      if (f != null) {
        f.completeExceptionally(reason);
      }
    }
    synchronized (out) {
      if (!outDone) {
        outDone = true;
        try {
          out.onCompleted();
        } catch (RuntimeException e) {
          // call already gone
        }
      }
    }
  }

  /**
   * The runner closes the stream (Beam: onCompleted with nothing outstanding, else
   * CANCELLED "Runner closed connection").
   */
  public void close() {
    boolean clean = outstanding.isEmpty();
    synchronized (out) {
      if (!outDone) {
        outDone = true;
        try {
          if (clean) {
            out.onCompleted();
          } else {
            out.onError(Status.CANCELLED.withDescription("Runner closed connection").asRuntimeException());
          }
        } catch (RuntimeException e) {
          // call already gone
        }
      }
    }
    IllegalStateException reason = new IllegalStateException("Runner closed connection");
    for (String id : new ArrayList<>(outstanding.keySet())) {
      CompletableFuture<InstructionResponse> f = outstanding.remove(id);
      if (f != null) {
        f.completeExceptionally(reason);
      }
    }
    closed.complete(reason);
  }

  public boolean isClosed() {
    return closed.isDone();
  }

  /** Every InstructionResponse received, in order. */
  public List<InstructionResponse> responses() {
    synchronized (responses) {
      return new ArrayList<>(responses);
    }
  }

  /** Instruction ids of responses that matched no request. */
  public List<String> unknownResponses() {
    synchronized (unknownResponses) {
      return new ArrayList<>(unknownResponses);
    }
  }
}
