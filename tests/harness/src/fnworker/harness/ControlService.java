// BeamFnControl as the runner serves it: Control connections are filed under
// their worker_id header (Beam's FnApiControlClientPoolService +
// MapControlClientPool); descriptors are pulled by the worker with
// GetProcessBundleDescriptor (NOT_FOUND for unknown ids).
package fnworker.harness;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.fnexecution.v1.BeamFnControlGrpc;

public final class ControlService extends BeamFnControlGrpc.BeamFnControlImplBase {
  private final Map<String, BeamFnApi.ProcessBundleDescriptor> descriptors = new ConcurrentHashMap<>();
  private final Map<String, LinkedBlockingQueue<ControlClient>> pool = new ConcurrentHashMap<>();
  private final List<ControlClient> clients = new ArrayList<>();
  private final List<String> descriptorRequests = new ArrayList<>();
  private final List<Runnable> heldAnswers = new ArrayList<>();
  private boolean holdDescriptors;

  @Override
  public StreamObserver<BeamFnApi.InstructionResponse> control(StreamObserver<BeamFnApi.InstructionRequest> out) {
    String id = Headers.currentWorkerId();
    if (id.isEmpty()) {
      Log.warn("No worker_id header provided in control request");
    }
    Log.info("Beam Fn Control client connected with id " + id);
    ControlClient c = new ControlClient(id, out);
    synchronized (clients) {
      clients.add(c);
    }
    queue(id).add(c);
    return c.inbound();
  }

  private LinkedBlockingQueue<ControlClient> queue(String workerId) {
    return pool.computeIfAbsent(workerId, k -> new LinkedBlockingQueue<>());
  }

  /** Next Control connection with this worker id, or null after the timeout. */
  public ControlClient take(String workerId, long timeoutMs) throws InterruptedException {
    return queue(workerId).poll(timeoutMs, TimeUnit.MILLISECONDS);
  }

  @Override
  public void getProcessBundleDescriptor(BeamFnApi.GetProcessBundleDescriptorRequest req,
      StreamObserver<BeamFnApi.ProcessBundleDescriptor> out) {
    String id = req.getProcessBundleDescriptorId();
    synchronized (descriptorRequests) {
      descriptorRequests.add(id);
    }
    Runnable answer = () -> {
      BeamFnApi.ProcessBundleDescriptor d = descriptors.get(id);
      if (d == null) {
        out.onError(Status.NOT_FOUND
            .withDescription(String.format("ProcessBundleDescriptor with id %s not found", id)).asException());
        return;
      }
      out.onNext(d);
      out.onCompleted();
    };
    synchronized (heldAnswers) {
      if (holdDescriptors) {
        heldAnswers.add(answer);
        return;
      }
    }
    answer.run();
  }

  /** Test hook: GetProcessBundleDescriptor calls wait unanswered until releaseDescriptors(). */
  public void holdDescriptors() {
    synchronized (heldAnswers) {
      holdDescriptors = true;
    }
  }

  /** Answers the held GetProcessBundleDescriptor calls, in arrival order, and stops holding. */
  public void releaseDescriptors() {
    List<Runnable> copy;
    synchronized (heldAnswers) {
      holdDescriptors = false;
      copy = new ArrayList<>(heldAnswers);
      heldAnswers.clear();
    }
    for (Runnable r : copy) {
      r.run();
    }
  }

  /** GetProcessBundleDescriptor calls waiting for releaseDescriptors(). */
  public int heldDescriptorRequests() {
    synchronized (heldAnswers) {
      return heldAnswers.size();
    }
  }

  /** Makes a descriptor available to GetProcessBundleDescriptor (sends nothing). */
  public void registerDescriptor(BeamFnApi.ProcessBundleDescriptor d) {
    descriptors.put(d.getId(), d);
  }

  /** Descriptor ids the worker asked for, in order. */
  public List<String> descriptorRequests() {
    synchronized (descriptorRequests) {
      return new ArrayList<>(descriptorRequests);
    }
  }

  /** Closes every Control stream from the runner side. */
  public void close() {
    List<ControlClient> copy;
    synchronized (clients) {
      copy = new ArrayList<>(clients);
    }
    for (ControlClient c : copy) {
      c.close();
    }
  }
}
