// The worker_id request header: a server interceptor that puts it into the
// gRPC Context (as Beam's GrpcContextHeaderAccessorProvider does) and records,
// per method, which worker ids called it, so tests can assert the header.
package fnworker.harness;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Headers implements ServerInterceptor {
  public static final Metadata.Key<String> WORKER_ID =
      Metadata.Key.of("worker_id", Metadata.ASCII_STRING_MARSHALLER);
  public static final Context.Key<String> CONTEXT_WORKER_ID = Context.key("worker_id");

  private final Map<String, List<String>> seen = new LinkedHashMap<>();

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
      ServerCallHandler<ReqT, RespT> next) {
    String id = headers.get(WORKER_ID);
    String value = id == null ? "" : id;
    synchronized (seen) {
      seen.computeIfAbsent(call.getMethodDescriptor().getFullMethodName(), k -> new ArrayList<>()).add(value);
    }
    return Contexts.interceptCall(Context.current().withValue(CONTEXT_WORKER_ID, value), call, headers, next);
  }

  /** worker_id header of the current call ("" when absent). */
  public static String currentWorkerId() {
    String v = CONTEXT_WORKER_ID.get();
    return v == null ? "" : v;
  }

  /** The worker_id values seen for a method, e.g. "org.apache.beam.model.fn_execution.v1.BeamFnData/Data". */
  public List<String> seen(String fullMethod) {
    synchronized (seen) {
      return new ArrayList<>(seen.getOrDefault(fullMethod, List.of()));
    }
  }

  /** Every method called so far with the worker ids seen. */
  public Map<String, List<String>> all() {
    synchronized (seen) {
      Map<String, List<String>> copy = new LinkedHashMap<>();
      seen.forEach((k, v) -> copy.put(k, new ArrayList<>(v)));
      return copy;
    }
  }
}
