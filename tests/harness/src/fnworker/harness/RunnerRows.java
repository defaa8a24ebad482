// The rows that cross the data plane: input Row(LONG ts, LONG watermark, data)
// and output Row(LONG ts, data), plus fnworker OperationSpec payloads.
package fnworker.harness;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeCodec;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.TypeInfoProtos;
import fnworker.proto.v1.OperationProto;
import java.util.Map;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

public final class RunnerRows {
  private RunnerRows() {}

  /** A decoded output row. */
  public static final class Output {
    public final long ts;
    public final Object value;

    Output(long ts, Object value) {
      this.ts = ts;
      this.value = value;
    }
  }

  public static byte[] input(TypeInfo dataType, long ts, long watermark, Object value) {
    return TypeCodec.encode(TypeInfo.runnerInput(dataType), Row.of(ts, watermark, value));
  }

  /** The bytes an identity-like operation should send back for (ts, value). */
  public static byte[] expectedOutput(TypeInfo dataType, long ts, Object value) {
    return TypeCodec.encode(TypeInfo.runnerOutput(dataType), Row.of(ts, value));
  }

  public static Output output(TypeInfo dataType, byte[] bytes) {
    Row r = (Row) TypeCodec.decode(TypeInfo.runnerOutput(dataType), bytes);
    if (r.kind != Row.INSERT) {
      throw new IllegalArgumentException("output row has row kind " + Row.kindName(r.kind));
    }
    if (r.get(0) == null) {
      throw new IllegalArgumentException("output row has a null timestamp");
    }
    return new Output((Long) r.get(0), r.get(1));
  }

  /** An OperationSpec: JSON fields first (proto3 JSON names), then operation and options on top. */
  public static OperationProto.OperationSpec spec(String operation, Map<String, String> options, String json) {
    OperationProto.OperationSpec.Builder b = OperationProto.OperationSpec.newBuilder();
    if (json != null && !json.isBlank()) {
      try {
        JsonFormat.parser().merge(json, b);
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalArgumentException("bad --spec-json: " + e.getMessage(), e);
      }
    }
    if (operation != null) {
      b.setOperation(operation);
    }
    if (options != null) {
      b.putAllOptions(options);
    }
    return b.build();
  }

  public static DescriptorBuilder.Fn fn(FunctionType type, OperationProto.OperationSpec spec) {
    return new DescriptorBuilder.Fn(type, spec.toByteArray());
  }

  /** A PROCESS function, what every released Flink can send; batch mode comes from the spec. */
  public static DescriptorBuilder.Fn fn(OperationProto.OperationSpec spec) {
    return fn(FunctionType.PROCESS, spec);
  }

  /** spec in batch mode (mode BATCH), the way to batch under function type PROCESS. */
  public static OperationProto.OperationSpec batchMode(OperationProto.OperationSpec spec) {
    return spec.toBuilder().setMode(OperationProto.OperationSpec.Mode.BATCH).build();
  }

  /** spec declaring the type of its outputs (needed on a type-changing function that is not the last). */
  public static OperationProto.OperationSpec withOutputType(OperationProto.OperationSpec spec, TypeInfo t) {
    return spec.toBuilder().setOutputType(TypeInfoProtos.toProto(t)).build();
  }

  public static FunctionType functionType(String name) {
    try {
      return FunctionType.valueOf(name.toUpperCase());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("unknown function type " + name + " (PROCESS, or ASYNC_BATCH which "
          + "only an unreleased PyFlink sends; batch with PROCESS and \"mode\":\"BATCH\" in --spec-json)");
    }
  }
}
