// A stand-in *worker* in Java, only for checking the harness itself before
// (or without) the C worker: speaks the same Fn API subset and implements the
// `identity` operation with the harness's own codec. It is NOT the contract;
// the C worker is tested against IntegrationTests, not against this.
//   build/harness/fake-fnworker --id=1-1 --provision_endpoint=localhost:NNNN
package fnworker.harness.fake;

import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import fnworker.harness.types.ByteReader;
import fnworker.harness.types.ByteWriter;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeCodec;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.TypeInfoProtos;
import fnworker.proto.v1.OperationProto;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.fnexecution.v1.BeamFnControlGrpc;
import org.apache.beam.model.fnexecution.v1.BeamFnDataGrpc;
import org.apache.beam.model.fnexecution.v1.BeamFnLoggingGrpc;
import org.apache.beam.model.fnexecution.v1.ProvisionApi;
import org.apache.beam.model.fnexecution.v1.ProvisionServiceGrpc;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi;

public final class FakeWorker {
  private final String id;
  /** Deliberate misbehaviour, to prove the integration tests catch it (comma list). */
  private static final String BUGS = System.getenv().getOrDefault("FNW_FAKE_BUG", "");

  private static boolean bug(String b) {
    return (',' + BUGS + ',').contains(',' + b + ',');
  }
  private final Map<String, ManagedChannel> channels = new HashMap<>();
  private final Map<String, BeamFnApi.ProcessBundleDescriptor> descriptors = new ConcurrentHashMap<>();
  private final Map<String, LinkedBlockingQueue<BeamFnApi.Elements.Data>> inbound = new ConcurrentHashMap<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private StreamObserver<BeamFnApi.InstructionResponse> control;
  private StreamObserver<BeamFnApi.LogEntry.List> logging;
  private StreamObserver<BeamFnApi.Elements> data;
  private BeamFnControlGrpc.BeamFnControlBlockingStub controlStub;
  private String controlUrl;

  FakeWorker(String id) {
    this.id = id;
  }

  public static void main(String[] args) throws Exception {
    String id = null;
    String provision = null;
    for (String a : args) {
      if (a.startsWith("--id=")) {
        id = a.substring(5);
      } else if (a.startsWith("--provision_endpoint=")) {
        provision = a.substring(21);
      }
    }
    if (id == null || provision == null) {
      System.err.println("fake worker: need --id and --provision_endpoint");
      System.exit(2);
    }
    new FakeWorker(id).run(provision);
  }

  private ManagedChannel channel(String url) {
    synchronized (channels) {
      return channels.computeIfAbsent(url, u -> NettyChannelBuilder.forTarget(u).usePlaintext()
          .maxInboundMessageSize(Integer.MAX_VALUE).intercept(new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> m, CallOptions o, Channel next) {
              return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(m, o)) {
                @Override
                public void start(Listener<R> l, Metadata h) {
                  h.put(Metadata.Key.of("worker_id", Metadata.ASCII_STRING_MARSHALLER), id);
                  super.start(l, h);
                }
              };
            }
          }).build());
    }
  }

  void run(String provisionUrl) throws Exception {
    ProvisionApi.ProvisionInfo info = ProvisionServiceGrpc.newBlockingStub(channel(provisionUrl))
        .getProvisionInfo(ProvisionApi.GetProvisionInfoRequest.getDefaultInstance()).getInfo();
    controlUrl = info.getControlEndpoint().getUrl();
    controlStub = BeamFnControlGrpc.newBlockingStub(channel(controlUrl));
    logging = BeamFnLoggingGrpc.newStub(channel(info.getLoggingEndpoint().getUrl())).logging(new StreamObserver<>() {
      public void onNext(BeamFnApi.LogControl c) { }
      public void onError(Throwable t) { }
      public void onCompleted() { }
    });
    control = BeamFnControlGrpc.newStub(channel(controlUrl)).control(new StreamObserver<>() {
      public void onNext(BeamFnApi.InstructionRequest r) {
        handle(r);
      }

      public void onError(Throwable t) {
        System.err.println("fake worker " + id + ": lost the Control stream: " + t);
        System.exit(3);
      }

      public void onCompleted() {
        System.err.println("fake worker " + id + ": Control stream ended by the runner; exiting");
        System.exit(bug("exit1") ? 1 : 0);
      }
    });
    log(BeamFnApi.LogEntry.Severity.Enum.INFO, "fake worker " + id + " started", null);
    Thread.currentThread().join();
  }

  private synchronized void log(BeamFnApi.LogEntry.Severity.Enum sev, String msg, String instr) {
    long now = System.currentTimeMillis();
    BeamFnApi.LogEntry.Builder e = BeamFnApi.LogEntry.newBuilder().setSeverity(sev).setMessage(msg)
        .setLogLocation("FakeWorker.java").setThread(Thread.currentThread().getName())
        .setTimestamp(Timestamp.newBuilder().setSeconds(now / 1000).setNanos((int) (now % 1000) * 1_000_000));
    if (instr != null) {
      e.setInstructionId(instr);
    }
    logging.onNext(BeamFnApi.LogEntry.List.newBuilder().addLogEntries(e).build());
  }

  private void respond(BeamFnApi.InstructionResponse r) {
    synchronized (this) {
      control.onNext(r);
    }
  }

  private void handle(BeamFnApi.InstructionRequest r) {
    BeamFnApi.InstructionResponse.Builder resp = BeamFnApi.InstructionResponse.newBuilder()
        .setInstructionId(r.getInstructionId());
    switch (r.getRequestCase()) {
      case REGISTER:
        for (BeamFnApi.ProcessBundleDescriptor d : r.getRegister().getProcessBundleDescriptorList()) {
          descriptors.put(d.getId(), d);
        }
        respond(resp.setRegister(BeamFnApi.RegisterResponse.getDefaultInstance()).build());
        return;
      case PROCESS_BUNDLE:
        pool.submit(() -> bundle(r));
        return;
      case PROCESS_BUNDLE_SPLIT:
        if (bug("split_ok")) {
          respond(resp.setProcessBundleSplit(BeamFnApi.ProcessBundleSplitResponse.getDefaultInstance()).build());
          return;
        }
        // fall through
      default:
        respond(resp.setError("unsupported request " + r.getRequestCase().name().toLowerCase()).build());
    }
  }

  private synchronized void ensureData(String url) {
    if (data != null) {
      return;
    }
    data = BeamFnDataGrpc.newStub(channel(url)).data(new StreamObserver<>() {
      public void onNext(BeamFnApi.Elements e) {
        for (BeamFnApi.Elements.Data d : e.getDataList()) {
          queue(d.getInstructionId()).add(d);
        }
      }

      public void onError(Throwable t) {
        System.err.println("fake worker " + id + ": lost the Data stream: " + t);
        System.exit(4);
      }

      public void onCompleted() { }
    });
  }

  private LinkedBlockingQueue<BeamFnApi.Elements.Data> queue(String instr) {
    return inbound.computeIfAbsent(instr, k -> new LinkedBlockingQueue<>());
  }

  private void send(BeamFnApi.Elements e) {
    synchronized (this) {
      data.onNext(e);
    }
  }

  private void bundle(BeamFnApi.InstructionRequest r) {
    String instr = r.getInstructionId();
    BeamFnApi.InstructionResponse.Builder resp = BeamFnApi.InstructionResponse.newBuilder().setInstructionId(instr);
    try {
      String pbd = r.getProcessBundle().getProcessBundleDescriptorId();
      BeamFnApi.ProcessBundleDescriptor d = descriptors.computeIfAbsent(pbd, k -> controlStub.getProcessBundleDescriptor(
          BeamFnApi.GetProcessBundleDescriptorRequest.newBuilder().setProcessBundleDescriptorId(k).build()));
      String readId = null;
      String readUrl = null;
      String sinkId = null;
      for (Map.Entry<String, RunnerApi.PTransform> t : d.getTransformsMap().entrySet()) {
        String urn = t.getValue().getSpec().getUrn();
        if (urn.equals("beam:runner:source:v1")) {
          readId = t.getKey();
          readUrl = BeamFnApi.RemoteGrpcPort.parseFrom(t.getValue().getSpec().getPayload()).getApiServiceDescriptor().getUrl();
        } else if (urn.equals("beam:runner:sink:v1") && t.getValue().getInputsMap().containsValue(fnworker.harness.DescriptorBuilder.MAIN_OUTPUT)) {
          sinkId = t.getKey();
        }
      }
      ensureData(readUrl);
      RunnerApi.ParDoPayload pardo = RunnerApi.ParDoPayload.parseFrom(d.getTransformsOrThrow("transform-0").getSpec().getPayload());
      FlinkFnApi.UserDefinedDataStreamFunction udf = FlinkFnApi.UserDefinedDataStreamFunction.parseFrom(pardo.getDoFn().getPayload());
      byte[] payload = udf.getPayload().toByteArray();
      String error = null;
      if (payload.length > 0 && (payload[0] & 0xFF) == 0x80) {
        error = "transform-0: the function payload is a pickled Python function; fnworker runs native operations only (see docs/pyflink.md, \"Also not supported\")";
      }
      TypeInfo in = raw(d, "input_coder");
      TypeInfo out = raw(d, "output_coder");
      if (error == null) {
        OperationProto.OperationSpec spec = OperationProto.OperationSpec.parseFrom(payload);
        if (!spec.getOperation().equals("identity")) {
          error = "unknown operation " + spec.getOperation();
        } else if (!in.children.get(2).equals(out.children.get(1))) {
          error = "transform-0: identity needs the output type to equal the input type, got input type "
              + in.children.get(2) + " and output type " + out.children.get(1);
        }
      }
      ByteWriter pending = new ByteWriter();
      ByteWriter outBuf = new ByteWriter();
      long index = 0;
      LinkedBlockingQueue<BeamFnApi.Elements.Data> q = queue(instr);
      while (true) {
        BeamFnApi.Elements.Data chunk = q.take();
        pending.bytes(chunk.getData().toByteArray());
        ByteReader rd = new ByteReader(pending.toByteArray());
        int consumed = 0;
        while (rd.remaining() > 0) {
          long len;
          try {
            len = rd.varint("len");
          } catch (ByteReader.DecodeException e) {
            break;
          }
          if (rd.remaining() < len) {
            break;
          }
          byte[] rec = rd.bytes((int) len, "record");
          consumed = rd.position();
          if (error != null) {
            index++;
            continue;
          }
          try {
            Row row = (Row) TypeCodec.decode(in, rec);
            long ts = (Long) row.get(0) + (bug("ts") ? 1 : 0);
            byte[] o = TypeCodec.encode(out, Row.of(ts, row.get(2)));
            outBuf.varint(o.length).bytes(o);
          } catch (RuntimeException e) {
            if (bug("swallow_decode")) {
              index++;
              continue;
            }
            error = readId + ": cannot decode element " + index + " of bundle " + instr + ": " + e.getMessage();
          }
          index++;
        }
        byte[] rest = java.util.Arrays.copyOfRange(pending.toByteArray(), consumed, pending.size());
        pending.reset();
        pending.bytes(rest);
        if (error == null && outBuf.size() > 1_000_000) {
          send(BeamFnApi.Elements.newBuilder().addData(BeamFnApi.Elements.Data.newBuilder().setInstructionId(instr)
              .setTransformId(sinkId).setData(ByteString.copyFrom(outBuf.toByteArray()))).build());
          outBuf.reset();
        }
        if (chunk.getIsLast()) {
          break;
        }
      }
      inbound.remove(instr);
      if (error != null) {
        log(BeamFnApi.LogEntry.Severity.Enum.ERROR, error, instr);
        respond(resp.setError(error).build());
        return;
      }
      BeamFnApi.Elements.Builder last = BeamFnApi.Elements.newBuilder();
      if (outBuf.size() > 0) {
        last.addData(BeamFnApi.Elements.Data.newBuilder().setInstructionId(instr).setTransformId(sinkId)
            .setData(ByteString.copyFrom(outBuf.toByteArray())));
      }
      if (!bug("nolast")) {
        last.addData(BeamFnApi.Elements.Data.newBuilder().setInstructionId(instr).setTransformId(sinkId).setIsLast(true));
      }
      send(last.build());
      if (bug("after_last")) {
        send(BeamFnApi.Elements.newBuilder().addData(BeamFnApi.Elements.Data.newBuilder().setInstructionId(instr)
            .setTransformId(sinkId).setData(ByteString.copyFrom(new byte[]{1, 0}))).build());
      }
      respond(resp.setProcessBundle(BeamFnApi.ProcessBundleResponse.getDefaultInstance()).build());
    } catch (Exception e) {
      log(BeamFnApi.LogEntry.Severity.Enum.ERROR, "bundle failed: " + e, instr);
      respond(resp.setError("bundle failed: " + e).build());
    }
  }

  private static TypeInfo raw(BeamFnApi.ProcessBundleDescriptor d, String coder) throws Exception {
    FlinkFnApi.CoderInfoDescriptor c = FlinkFnApi.CoderInfoDescriptor.parseFrom(
        d.getCodersOrThrow(coder).getSpec().getPayload());
    return TypeInfoProtos.fromProto(c.getRawType().getTypeInfo());
  }
}
