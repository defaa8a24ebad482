// Builds the ProcessBundleDescriptor for one DataStream operator with the
// shape and ids Flink's BeamDataStreamPythonFunctionRunner + Beam's
// ProcessBundleDescriptors produce: chained (fused) pardo transforms
// transform-0..N-1, transform-revise (+ one per side output), the gRPC read
// fn/read/input:0 and writes fn/write/<pcoll>:0, flink:coder:v1 coders
// wrapped in length_prefix and param_windowed_value. As in Flink, only the
// operator's input and output types are described: every collection between
// fused functions gets the input coder, so a function that changes the type
// must say so in its OperationSpec (output_type).
//
// The ids and keys are those of a descriptor captured from a real Flink 1.20.5
// and 2.3.0 (tests/integration/fixtures/real-flink-descriptor.txt, checked by
// HarnessSelfTest): flink-python's Constants.MAIN_OUTPUT_NAME and
// OUTPUT_COLLECTION_ID are "" there, so every function's main output is keyed
// "", the operator's output PCollection is "" and its sink fn/write/:0; side
// output coders are side_coder-<tag>; Beam adds the plain (not length-prefixed)
// wire coders fn/wire/input:0 and fn/wire/:0; there is no environment.
package fnworker.harness;

import com.google.protobuf.ByteString;
import fnworker.harness.types.Hex;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.TypeInfoProtos;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.pipeline.v1.Endpoints;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

public final class DescriptorBuilder {
  public static final String STATELESS_URN = "flink:transform:ds:stateless_function:v1";
  /** The head function's URN in a keyed operator (ExternalPythonKeyedProcessOperator). */
  public static final String STATEFUL_URN = "flink:transform:ds:stateful_function:v1";
  /** flink-python's Constants.TIMER_ID: the head function's one timer family. */
  public static final String TIMER_FAMILY = "timer";
  public static final String TIMER_CODER = "timer_coder";
  public static final String FLINK_CODER_URN = "flink:coder:v1";
  public static final String PARDO_URN = "beam:transform:pardo:v1";
  public static final String SOURCE_URN = "beam:runner:source:v1";
  public static final String SINK_URN = "beam:runner:sink:v1";
  public static final String WINDOWING = "windowing_strategy";
  public static final String WINDOW_CODER = "window_coder";
  public static final String INPUT_CODER = "input_coder";
  public static final String OUTPUT_CODER = "output_coder";
  public static final String SIDE_OUTPUT_CODER_PREFIX = "side_coder-";
  /** flink-python's MAIN_OUTPUT_NAME and OUTPUT_COLLECTION_ID (1.20 and 2.x): the empty string. */
  public static final String MAIN_OUTPUT = "";
  public static final String READ_ID = "fn/read/input:0";
  /** Windowed-value encoding of an empty byte[] at MIN timestamp in the global window, NO_FIRING. */
  public static final byte[] PARAM_WINDOWED_VALUE_PAYLOAD = Hex.parse("7f df 3b 64 5a 1c ac 09 00 00 00 01 0f 00");

  /** One chained function: its type and payload (an OperationSpec for fnworker). */
  public static final class Fn {
    public final FunctionType type;
    public final byte[] payload;
    /** Test hook: TypeInfo wire bytes sent as key_type_info, appended as given (see WireBytes). */
    public byte[] keyTypeInfo;
    /** A keyed function's key type (Flink: a one-field Row of the key), sent as key_type_info. */
    public TypeInfo keyType;

    public Fn(FunctionType type, byte[] payload) {
      this.type = type;
      this.payload = payload;
    }
  }

  public String id;
  public TypeInfo inputType;
  public TypeInfo outputType;
  public final List<Fn> functions = new ArrayList<>();
  /** Side output tag id -> its data type. */
  public final Map<String, TypeInfo> sideOutputs = new LinkedHashMap<>();
  public Endpoints.ApiServiceDescriptor dataEndpoint;
  public Endpoints.ApiServiceDescriptor stateEndpoint;
  /** Set only to send one (a real Flink's descriptor has none), under ENVIRONMENT_ID. */
  public RunnerApi.Environment environment;
  public static final String ENVIRONMENT_ID = "python_env";
  public String taskName = "harness operator";
  public boolean metricEnabled = true;
  public final Map<String, String> jobParameters = new LinkedHashMap<>();
  /** Test hook: the input coder's CoderInfoDescriptor bytes, sent as given instead of built from inputType. */
  public byte[] inputCoderPayload;
  /** The head function's URN: STATEFUL_URN for a keyed operator (then set timerKeyType too). */
  public String headUrn = STATELESS_URN;
  /**
   * A keyed operator's key row type (ROW<f0:K>): adds Flink's timer coders, the head
   * function's timer family "timer" and the timer API descriptor (= the data endpoint),
   * as BeamDataStreamPythonFunctionRunner and Beam's ProcessBundleDescriptors do.
   */
  public TypeInfo timerKeyType;

  /** TimerUtils.createTimerDataTypeInfo: [type/operation, watermark, timestamp, key, namespace]. */
  public static TypeInfo timerDataType(TypeInfo keyRow) {
    return TypeInfo.parse("ROW<f0:BYTE,f1:LONG,f2:LONG,f3:" + keyRow + ",f4:PRIMITIVE_ARRAY<BYTE>>");
  }

  /** Sink transform id for a PCollection (MAIN_OUTPUT or a side output tag). */
  public static String sinkId(String pcollection) {
    return "fn/write/" + pcollection + ":0";
  }

  private static RunnerApi.Coder flinkCoder(TypeInfo rawType) {
    return flinkCoder(rawType, FlinkFnApi.CoderInfoDescriptor.Mode.MULTIPLE);
  }

  private static RunnerApi.Coder flinkCoder(TypeInfo rawType, FlinkFnApi.CoderInfoDescriptor.Mode mode) {
    FlinkFnApi.CoderInfoDescriptor d = FlinkFnApi.CoderInfoDescriptor.newBuilder()
        .setRawType(FlinkFnApi.CoderInfoDescriptor.RawType.newBuilder().setTypeInfo(TypeInfoProtos.toProto(rawType)))
        .setMode(mode)
        .setSeparatedWithEndMessage(false)
        .build();
    return RunnerApi.Coder.newBuilder()
        .setSpec(RunnerApi.FunctionSpec.newBuilder().setUrn(FLINK_CODER_URN).setPayload(d.toByteString()))
        .build();
  }

  private static RunnerApi.Coder coder(String urn, byte[] payload, String... components) {
    RunnerApi.FunctionSpec.Builder spec = RunnerApi.FunctionSpec.newBuilder().setUrn(urn);
    if (payload != null) {
      spec.setPayload(ByteString.copyFrom(payload));
    }
    RunnerApi.Coder.Builder c = RunnerApi.Coder.newBuilder().setSpec(spec);
    for (String comp : components) {
      c.addComponentCoderIds(comp);
    }
    return c.build();
  }

  private FlinkFnApi.UserDefinedDataStreamFunction udf(Fn f, boolean last) {
    FlinkFnApi.UserDefinedDataStreamFunction.RuntimeContext.Builder rc =
        FlinkFnApi.UserDefinedDataStreamFunction.RuntimeContext.newBuilder()
            .setTaskName(taskName)
            .setTaskNameWithSubtasks(taskName + " (1/1)#0")
            .setNumberOfParallelSubtasks(1)
            .setMaxNumberOfParallelSubtasks(128)
            .setIndexOfThisSubtask(0)
            .setAttemptNumber(0)
            .setInBatchExecutionMode(false);
    for (Map.Entry<String, String> e : jobParameters.entrySet()) {
      rc.addJobParameters(FlinkFnApi.JobParameter.newBuilder().setKey(e.getKey()).setValue(e.getValue()));
    }
    FlinkFnApi.UserDefinedDataStreamFunction.Builder u = FlinkFnApi.UserDefinedDataStreamFunction.newBuilder();
    if (f.keyType != null) {
      u.setKeyTypeInfo(TypeInfoProtos.toProto(f.keyType));
    }
    return u
        .setFunctionType(f.type)
        .setRuntimeContext(rc)
        .setPayload(ByteString.copyFrom(f.payload))
        .setMetricEnabled(metricEnabled)
        .setProfileEnabled(false)
        .setHasSideOutput(last && !sideOutputs.isEmpty())
        .setStateCacheSize(1000)
        .setMapStateReadCacheSize(1000)
        .setMapStateWriteCacheSize(1000)
        .build();
  }

  private static RunnerApi.PTransform pardo(String id, ByteString udfPayload, Map<String, String> inputs,
      Map<String, String> outputs) {
    return pardo(id, STATELESS_URN, false, udfPayload, inputs, outputs);
  }

  private static RunnerApi.PTransform pardo(String id, String urn, boolean timer, ByteString udfPayload,
      Map<String, String> inputs, Map<String, String> outputs) {
    RunnerApi.ParDoPayload.Builder pb = RunnerApi.ParDoPayload.newBuilder()
        .setDoFn(RunnerApi.FunctionSpec.newBuilder().setUrn(urn).setPayload(udfPayload));
    if (timer) {
      // Flink sets timer_coder_wrapper; Beam's ProcessBundleDescriptors swaps in the SDK's wire coder.
      pb.putTimerFamilySpecs(TIMER_FAMILY, RunnerApi.TimerFamilySpec.newBuilder()
          .setTimeDomain(RunnerApi.TimeDomain.Enum.EVENT_TIME)
          .setTimerFamilyCoderId(TIMER_CODER + "_wrapper-length_prefix0").build());
    }
    RunnerApi.ParDoPayload p = pb.build();
    return RunnerApi.PTransform.newBuilder()
        .setUniqueName(id)
        .setSpec(RunnerApi.FunctionSpec.newBuilder().setUrn(PARDO_URN).setPayload(p.toByteString()))
        .putAllInputs(inputs)
        .putAllOutputs(outputs)
        .build();
  }

  private static RunnerApi.PCollection pcoll(String coderId) {
    return RunnerApi.PCollection.newBuilder().setCoderId(coderId).setWindowingStrategyId(WINDOWING).build();
  }

  private RunnerApi.PTransform port(String urn, String wireCoder, boolean read, String pcollection) {
    BeamFnApi.RemoteGrpcPort port = BeamFnApi.RemoteGrpcPort.newBuilder()
        .setApiServiceDescriptor(dataEndpoint).setCoderId(wireCoder).build();
    RunnerApi.PTransform.Builder t = RunnerApi.PTransform.newBuilder()
        .setSpec(RunnerApi.FunctionSpec.newBuilder().setUrn(urn).setPayload(port.toByteString()));
    if (read) {
      t.putOutputs("local_output", pcollection);
    } else {
      t.putInputs("local_input", pcollection);
    }
    return t.build();
  }

  public BeamFnApi.ProcessBundleDescriptor build() {
    if (functions.isEmpty()) {
      throw new IllegalStateException("no functions");
    }
    BeamFnApi.ProcessBundleDescriptor.Builder d = BeamFnApi.ProcessBundleDescriptor.newBuilder().setId(id);
    TypeInfo inRaw = TypeInfo.runnerInput(inputType);
    RunnerApi.Coder inputCoder = inputCoderPayload != null
        ? coder(FLINK_CODER_URN, inputCoderPayload) : flinkCoder(inRaw);
    d.putCoders(INPUT_CODER, inputCoder);
    d.putCoders(OUTPUT_CODER, flinkCoder(TypeInfo.runnerOutput(outputType)));
    d.putCoders(WINDOW_CODER, coder("beam:coder:global_window:v1", null));
    d.putWindowingStrategies(WINDOWING, RunnerApi.WindowingStrategy.newBuilder().setWindowCoderId(WINDOW_CODER).build());

    // Beam: the unknown flink coders get length-prefixed, the wire coders wrap them.
    d.putCoders(INPUT_CODER + "-length_prefix0", coder("beam:coder:length_prefix:v1", null, INPUT_CODER));
    d.putCoders("fn/wire/input:0-length_prefix0", coder("beam:coder:param_windowed_value:v1",
        PARAM_WINDOWED_VALUE_PAYLOAD, INPUT_CODER + "-length_prefix0", WINDOW_CODER));
    d.putCoders("fn/wire/input:0", coder("beam:coder:param_windowed_value:v1",
        PARAM_WINDOWED_VALUE_PAYLOAD, INPUT_CODER, WINDOW_CODER));
    d.putCoders("byte_array0", coder("beam:coder:bytes:v1", null));
    d.putCoders("length_prefix_byte_array0", coder("beam:coder:length_prefix:v1", null, "byte_array0"));

    d.putPcollections("input", pcoll(INPUT_CODER + "-length_prefix0"));
    d.putPcollections(MAIN_OUTPUT, pcoll(OUTPUT_CODER));
    d.putTransforms(READ_ID, port(SOURCE_URN, "fn/wire/input:0-length_prefix0", true, "input"));
    addSink(MAIN_OUTPUT, OUTPUT_CODER, d);

    int n = functions.size();
    for (int i = 0; i < n; i++) {
      boolean last = i == n - 1;
      Map<String, String> outs = new LinkedHashMap<>();
      outs.put(MAIN_OUTPUT, "collection-" + i);
      if (last) {
        for (String tag : sideOutputs.keySet()) {
          outs.put(tag, "collection-revise-" + tag);
        }
      }
      String id = "transform-" + i;
      Fn fn = functions.get(i);
      ByteString udf = udf(fn, last).toByteString();
      if (fn.keyTypeInfo != null) {
        udf = udf.concat(ByteString.copyFrom(WireBytes.field(5, fn.keyTypeInfo)));
      }
      d.putTransforms(id, pardo(id, i == 0 ? headUrn : STATELESS_URN, i == 0 && timerKeyType != null, udf,
          Map.of("input", i == 0 ? "input" : "collection-" + (i - 1)), outs));
      d.putCoders("coder-" + i, inputCoder);
      d.putPcollections("collection-" + i, pcoll("coder-" + i));
    }
    ByteString revise = FlinkFnApi.UserDefinedDataStreamFunction.newBuilder()
        .setFunctionType(FunctionType.REVISE_OUTPUT).build().toByteString();
    d.putTransforms("transform-revise", pardo("transform-revise", revise,
        Map.of("input", "collection-" + (n - 1)), Map.of(MAIN_OUTPUT, MAIN_OUTPUT)));
    for (Map.Entry<String, TypeInfo> e : sideOutputs.entrySet()) {
      String tag = e.getKey();
      String coderId = SIDE_OUTPUT_CODER_PREFIX + tag;
      d.putCoders(coderId, flinkCoder(TypeInfo.runnerOutput(e.getValue())));
      d.putCoders("coder-revise-" + tag, inputCoder);
      d.putPcollections("collection-revise-" + tag, pcoll("coder-revise-" + tag));
      d.putPcollections(tag, pcoll(coderId));
      d.putTransforms("transform-revise-" + tag, pardo("transform-revise-" + tag, revise,
          Map.of("input", "collection-revise-" + tag), Map.of(MAIN_OUTPUT, tag)));
      addSink(tag, coderId, d);
    }
    if (environment != null) {
      d.putEnvironments(ENVIRONMENT_ID, environment);
    }
    d.setStateApiServiceDescriptor(stateEndpoint);
    if (timerKeyType != null) {
      String w = TIMER_CODER + "_wrapper";
      d.putCoders(TIMER_CODER, flinkCoder(timerDataType(timerKeyType), FlinkFnApi.CoderInfoDescriptor.Mode.SINGLE));
      d.putCoders(TIMER_CODER + "-length_prefix0", coder("beam:coder:length_prefix:v1", null, TIMER_CODER));
      d.putCoders(w, coder("beam:coder:timer:v1", null, TIMER_CODER, WINDOW_CODER));
      d.putCoders(w + "-length_prefix0", coder("beam:coder:timer:v1", null, TIMER_CODER + "-length_prefix0",
          WINDOW_CODER));
      d.putCoders(w + "-length_prefix1", coder("beam:coder:timer:v1", null, "length_prefix_byte_array0",
          WINDOW_CODER));
      d.setTimerApiServiceDescriptor(dataEndpoint);
    }
    return d.build();
  }

  private void addSink(String pcollection, String coderId, BeamFnApi.ProcessBundleDescriptor.Builder d) {
    String lp = coderId + "-length_prefix0";
    String wire = "fn/wire/" + pcollection + ":0-length_prefix0";
    d.putCoders(lp, coder("beam:coder:length_prefix:v1", null, coderId));
    d.putCoders(wire, coder("beam:coder:param_windowed_value:v1", PARAM_WINDOWED_VALUE_PAYLOAD, lp, WINDOW_CODER));
    d.putCoders("fn/wire/" + pcollection + ":0", coder("beam:coder:param_windowed_value:v1",
        PARAM_WINDOWED_VALUE_PAYLOAD, coderId, WINDOW_CODER));
    d.putTransforms(sinkId(pcollection), port(SINK_URN, wire, false, pcollection));
  }
}
