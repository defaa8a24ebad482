// The six gRPC servers of Flink's DefaultJobBundleFactory.createServerInfo,
// each its own grpc-java Netty server on an ephemeral loopback port with
// unlimited inbound message size: control, logging, artifact (empty),
// provisioning, data and state. Closed in Flink's order, or abruptly.
package fnworker.harness;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.model.fnexecution.v1.ProvisionApi;
import org.apache.beam.model.pipeline.v1.Endpoints;

public final class Servers {
  public final Headers headers = new Headers();
  public final ControlService control = new ControlService();
  public final DataService data = new DataService();
  public final StateService state = new StateService();
  public final LoggingService logging;
  public final ProvisionService provision = new ProvisionService();
  private final Server loggingServer;
  private final Server controlServer;
  private final Server artifactServer;
  private final Server provisionServer;
  private final Server dataServer;
  private final Server stateServer;

  public Servers(String logPrefix, boolean printLogs, List<String> experiments, Map<String, String> extraOptions)
      throws IOException {
    logging = new LoggingService(logPrefix, printLogs);
    controlServer = start(control);
    loggingServer = start(logging);
    artifactServer = start(null);
    provisionServer = start(provision);
    dataServer = start(data);
    stateServer = start(state);
    Struct.Builder opts = Struct.newBuilder();
    ListValue.Builder ex = ListValue.newBuilder();
    for (String e : experiments) {
      ex.addValues(Value.newBuilder().setStringValue(e));
    }
    opts.putFields("beam:option:experiments:v1", Value.newBuilder().setListValue(ex).build());
    opts.putFields("beam:option:job_name:v1", Value.newBuilder().setStringValue("fnworker-harness").build());
    for (Map.Entry<String, String> e : extraOptions.entrySet()) {
      opts.putFields(e.getKey(), Value.newBuilder().setStringValue(e.getValue()).build());
    }
    provision.setInfo(ProvisionApi.ProvisionInfo.newBuilder()
        .setPipelineOptions(opts)
        .setRetrievalToken("/tmp/fnworker-harness-retrieval-token.json")
        .setLoggingEndpoint(endpoint(loggingServer))
        .setArtifactEndpoint(endpoint(artifactServer))
        .setControlEndpoint(endpoint(controlServer))
        .addRunnerCapabilities("beam:protocol:control_response_elements_embedding:v1")
        .build());
  }

  private Server start(BindableService service) throws IOException {
    NettyServerBuilder b = NettyServerBuilder
        .forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
        .maxInboundMessageSize(Integer.MAX_VALUE)
        .permitKeepAliveTime(19, TimeUnit.SECONDS);
    if (service != null) {
      b.addService(ServerInterceptors.intercept(service, headers));
    }
    return b.build().start();
  }

  private static Endpoints.ApiServiceDescriptor endpoint(Server s) {
    return Endpoints.ApiServiceDescriptor.newBuilder().setUrl(url(s)).build();
  }

  private static String url(Server s) {
    return "localhost:" + s.getPort();
  }

  public String provisionUrl() {
    return url(provisionServer);
  }

  public String controlUrl() {
    return url(controlServer);
  }

  public String loggingUrl() {
    return url(loggingServer);
  }

  public Endpoints.ApiServiceDescriptor dataEndpoint() {
    return endpoint(dataServer);
  }

  public Endpoints.ApiServiceDescriptor stateEndpoint() {
    return endpoint(stateServer);
  }

  /** Flink's order: logging, control, data, state, artifact, provisioning. */
  public void close() {
    logging.close();
    stop(loggingServer);
    control.close();
    stop(controlServer);
    data.close();
    stop(dataServer);
    state.close();
    stop(stateServer);
    stop(artifactServer);
    stop(provisionServer);
  }

  private static void stop(Server s) {
    s.shutdown();
    try {
      if (!s.awaitTermination(2, TimeUnit.SECONDS)) {
        s.shutdownNow();
        s.awaitTermination(2, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      s.shutdownNow();
    }
  }

  /** Everything gone at once, no stream completed: a runner that vanished. */
  public void abort() {
    for (Server s : new Server[]{loggingServer, controlServer, dataServer, stateServer, artifactServer,
        provisionServer}) {
      s.shutdownNow();
    }
  }
}
