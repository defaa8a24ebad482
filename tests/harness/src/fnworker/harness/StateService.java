// BeamFnState as Flink serves it for a non-keyed operator: no state backend,
// so every request is answered with error "Unsupported state type: <kind>".
// Requests are recorded for tests.
package fnworker.harness;

import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.fnexecution.v1.BeamFnStateGrpc;

public final class StateService extends BeamFnStateGrpc.BeamFnStateImplBase {
  private final List<BeamFnApi.StateRequest> requests = new ArrayList<>();
  private final List<StreamObserver<BeamFnApi.StateResponse>> streams = new ArrayList<>();

  @Override
  public StreamObserver<BeamFnApi.StateRequest> state(StreamObserver<BeamFnApi.StateResponse> out) {
    synchronized (streams) {
      streams.add(out);
    }
    return new StreamObserver<>() {
      @Override
      public void onNext(BeamFnApi.StateRequest req) {
        synchronized (requests) {
          requests.add(req);
        }
        BeamFnApi.StateResponse resp = BeamFnApi.StateResponse.newBuilder().setId(req.getId())
            .setError("Unsupported state type: " + req.getStateKey().getTypeCase()).build();
        synchronized (out) {
          out.onNext(resp);
        }
      }

      @Override
      public void onError(Throwable t) {
        // "cancelled before receiving half close" is normal at shutdown
      }

      @Override
      public void onCompleted() {
        synchronized (out) {
          try {
            out.onCompleted();
          } catch (RuntimeException e) {
            // already closed
          }
        }
      }
    };
  }

  public List<BeamFnApi.StateRequest> requests() {
    synchronized (requests) {
      return new ArrayList<>(requests);
    }
  }

  public void close() {
    List<StreamObserver<BeamFnApi.StateResponse>> copy;
    synchronized (streams) {
      copy = new ArrayList<>(streams);
    }
    for (StreamObserver<BeamFnApi.StateResponse> s : copy) {
      synchronized (s) {
        try {
          s.onCompleted();
        } catch (RuntimeException e) {
          // already closed
        }
      }
    }
  }
}
