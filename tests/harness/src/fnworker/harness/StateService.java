// BeamFnState as Flink serves it (flink-python's copy of Beam's
// GrpcStateService): any number of clients may connect, and every request is
// answered by the handler registered for its instruction_id
// (registerForProcessBundleInstructionId, done by the runner when a bundle
// starts and undone when it ends); a request naming no registered instruction
// gets error "Unknown process bundle instruction id '<id>'". Two handlers:
// a non-keyed operator's, which answers every request with error
// "Unsupported state type: <kind>" (no state backend), and a keyed one,
// an in-memory bag state per (key bytes, user_state_id) with Flink's
// BeamBagStateHandler semantics (get = the elements concatenated, append
// adds one, clear empties), enough for a Python ValueState. Requests are
// recorded with the client (connection) they came on, for tests.
package fnworker.harness;

import com.google.protobuf.ByteString;
import fnworker.harness.types.Hex;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.fnexecution.v1.BeamFnStateGrpc;

public final class StateService extends BeamFnStateGrpc.BeamFnStateImplBase {
  /** One state request as it arrived: the client (0 = first to connect) and the request. */
  public static final class Recorded {
    public final int client;
    public final String workerId;
    public final BeamFnApi.StateRequest request;
    public final BeamFnApi.StateResponse response;

    Recorded(int client, String workerId, BeamFnApi.StateRequest request, BeamFnApi.StateResponse response) {
      this.client = client;
      this.workerId = workerId;
      this.request = request;
      this.response = response;
    }
  }

  private final List<Recorded> requests = new ArrayList<>();
  private final List<StreamObserver<BeamFnApi.StateResponse>> streams = new ArrayList<>();
  private final List<String> clientWorkerIds = new ArrayList<>();
  private final Map<String, Function<BeamFnApi.StateRequest, BeamFnApi.StateResponse.Builder>> handlers =
      new ConcurrentHashMap<>();
  /** Keyed bag state: "<key hex>/<user_state_id>" -> elements. */
  private final Map<String, List<ByteString>> bags = new LinkedHashMap<>();

  @Override
  public StreamObserver<BeamFnApi.StateRequest> state(StreamObserver<BeamFnApi.StateResponse> out) {
    int client;
    String wid = Headers.currentWorkerId();
    synchronized (streams) {
      client = streams.size();
      streams.add(out);
      clientWorkerIds.add(wid);
    }
    Log.info("Beam Fn State client " + client + " connected with id " + wid);
    return new StreamObserver<>() {
      @Override
      public void onNext(BeamFnApi.StateRequest req) {
        Function<BeamFnApi.StateRequest, BeamFnApi.StateResponse.Builder> h = handlers.get(req.getInstructionId());
        BeamFnApi.StateResponse resp;
        if (h == null) {
          resp = BeamFnApi.StateResponse.newBuilder().setId(req.getId())
              .setError(String.format("Unknown process bundle instruction id '%s'", req.getInstructionId())).build();
        } else {
          BeamFnApi.StateResponse.Builder b;
          try {
            b = h.apply(req);
          } catch (RuntimeException e) {
            b = BeamFnApi.StateResponse.newBuilder().setError(e.toString());
          }
          resp = b.setId(req.getId()).build();
        }
        synchronized (requests) {
          requests.add(new Recorded(client, wid, req, resp));
        }
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

  /** A non-keyed operator's bundle: every request fails as Flink's does without a state backend. */
  public void registerUnsupported(String instructionId) {
    handlers.put(instructionId, req -> BeamFnApi.StateResponse.newBuilder()
        .setError("Unsupported state type: " + req.getStateKey().getTypeCase()));
  }

  /** A keyed operator's bundle: bag user state served from memory (see the file comment). */
  public void registerKeyed(String instructionId) {
    handlers.put(instructionId, this::bag);
  }

  /** The bundle ended: its requests are unknown from now on. */
  public void deregister(String instructionId) {
    handlers.remove(instructionId);
  }

  private BeamFnApi.StateResponse.Builder bag(BeamFnApi.StateRequest req) {
    if (req.getStateKey().getTypeCase() != BeamFnApi.StateKey.TypeCase.BAG_USER_STATE) {
      return BeamFnApi.StateResponse.newBuilder()
          .setError("harness: only bag_user_state is served, not " + req.getStateKey().getTypeCase());
    }
    BeamFnApi.StateKey.BagUserState k = req.getStateKey().getBagUserState();
    String id = bagId(k.getKey().toByteArray(), k.getUserStateId());
    synchronized (bags) {
      switch (req.getRequestCase()) {
        case GET: {
          List<ByteString> v = bags.getOrDefault(id, List.of());
          return BeamFnApi.StateResponse.newBuilder()
              .setGet(BeamFnApi.StateGetResponse.newBuilder().setData(ByteString.copyFrom(v)));
        }
        case APPEND:
          bags.computeIfAbsent(id, x -> new ArrayList<>()).add(req.getAppend().getData());
          return BeamFnApi.StateResponse.newBuilder().setAppend(BeamFnApi.StateAppendResponse.getDefaultInstance());
        case CLEAR:
          bags.remove(id);
          return BeamFnApi.StateResponse.newBuilder().setClear(BeamFnApi.StateClearResponse.getDefaultInstance());
        default:
          return BeamFnApi.StateResponse.newBuilder().setError("harness: unsupported request " + req.getRequestCase());
      }
    }
  }

  static String bagId(byte[] key, String userStateId) {
    return Hex.of(key) + "/" + userStateId;
  }

  /** The elements of one bag ("<key hex>/<user_state_id>"), or an empty list. */
  public List<ByteString> bag(byte[] key, String userStateId) {
    synchronized (bags) {
      return new ArrayList<>(bags.getOrDefault(bagId(key, userStateId), List.of()));
    }
  }

  /** Every bag, by "<key hex>/<user_state_id>". */
  public Map<String, List<ByteString>> bags() {
    synchronized (bags) {
      Map<String, List<ByteString>> m = new LinkedHashMap<>();
      for (Map.Entry<String, List<ByteString>> e : bags.entrySet()) {
        m.put(e.getKey(), new ArrayList<>(e.getValue()));
      }
      return m;
    }
  }

  public List<BeamFnApi.StateRequest> requests() {
    List<BeamFnApi.StateRequest> r = new ArrayList<>();
    for (Recorded x : recorded()) {
      r.add(x.request);
    }
    return r;
  }

  public List<Recorded> recorded() {
    synchronized (requests) {
      return new ArrayList<>(requests);
    }
  }

  /** Clients (State streams) connected so far. */
  public int clientCount() {
    synchronized (streams) {
      return streams.size();
    }
  }

  /** The worker_id header each client connected with, in connection order. */
  public List<String> clientWorkerIds() {
    synchronized (streams) {
      return new ArrayList<>(clientWorkerIds);
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
