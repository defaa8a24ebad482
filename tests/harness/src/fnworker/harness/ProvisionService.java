// ProvisionService as Flink's runner serves it: GetProvisionInfo returns the
// control, logging and artifact endpoints, a retrieval token and the pipeline
// options Struct; records the worker_id header of each call.
package fnworker.harness;

import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.model.fnexecution.v1.ProvisionApi;
import org.apache.beam.model.fnexecution.v1.ProvisionServiceGrpc;

public final class ProvisionService extends ProvisionServiceGrpc.ProvisionServiceImplBase {
  private volatile ProvisionApi.ProvisionInfo info = ProvisionApi.ProvisionInfo.getDefaultInstance();
  private final List<String> callers = new ArrayList<>();

  void setInfo(ProvisionApi.ProvisionInfo info) {
    this.info = info;
  }

  public ProvisionApi.ProvisionInfo info() {
    return info;
  }

  @Override
  public void getProvisionInfo(ProvisionApi.GetProvisionInfoRequest req,
      StreamObserver<ProvisionApi.GetProvisionInfoResponse> out) {
    synchronized (callers) {
      callers.add(Headers.currentWorkerId());
    }
    out.onNext(ProvisionApi.GetProvisionInfoResponse.newBuilder().setInfo(info).build());
    out.onCompleted();
  }

  /** worker_id header of every GetProvisionInfo call ("" when missing). */
  public List<String> callers() {
    synchronized (callers) {
      return new ArrayList<>(callers);
    }
  }
}
