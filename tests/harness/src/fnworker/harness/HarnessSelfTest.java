// Self-test of the harness pieces that need no worker: the descriptor's shape
// and ids, TypeInfo proto conversion, output stream reassembly across
// arbitrary message splits, and metric payload decoding.
//   java -cp $(cat build/harness/classpath) fnworker.harness.HarnessSelfTest
package fnworker.harness;

import com.google.protobuf.ByteString;
import fnworker.harness.types.ByteWriter;
import fnworker.harness.types.CodecSelfTest;
import fnworker.harness.types.Hex;
import fnworker.harness.types.TypeInfo;
import fnworker.harness.types.TypeInfoProtos;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.pipeline.v1.Endpoints;
import org.apache.beam.model.pipeline.v1.MetricsApi;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi;

public final class HarnessSelfTest {
  private int passed;
  private int failed;

  private void check(String name, boolean ok, String detail) {
    if (ok) {
      passed++;
      System.out.println("PASS " + name);
    } else {
      failed++;
      System.out.println("FAIL " + name + ": " + detail);
    }
  }

  public static void main(String[] args) throws Exception {
    HarnessSelfTest t = new HarnessSelfTest();
    t.descriptor();
    t.realFlinkShape();
    t.keyedShape();
    t.typeProtos();
    t.reassembly();
    t.metrics();
    t.flinkView();
    System.out.println(t.passed + " passed, " + t.failed + " failed");
    System.exit(t.failed == 0 ? 0 : 1);
  }

  void descriptor() throws Exception {
    DescriptorBuilder b = new DescriptorBuilder();
    b.id = "1-2";
    b.inputType = TypeInfo.parse("ROW<s:STRING,i:INT>");
    b.outputType = TypeInfo.parse("INT");
    b.functions.add(new DescriptorBuilder.Fn(FlinkFnApi.UserDefinedDataStreamFunction.FunctionType.PROCESS,
        new byte[]{1, 2}));
    b.functions.add(new DescriptorBuilder.Fn(FlinkFnApi.UserDefinedDataStreamFunction.FunctionType.ASYNC_BATCH,
        new byte[]{3}));
    b.sideOutputs.put("late", TypeInfo.parse("STRING"));
    b.dataEndpoint = Endpoints.ApiServiceDescriptor.newBuilder().setUrl("localhost:1").build();
    b.stateEndpoint = Endpoints.ApiServiceDescriptor.newBuilder().setUrl("localhost:2").build();
    BeamFnApi.ProcessBundleDescriptor d = b.build();
    check("descriptor id", d.getId().equals("1-2"), d.getId());
    Set<String> ts = new TreeSet<>(d.getTransformsMap().keySet());
    check("transform ids", ts.equals(new TreeSet<>(List.of("transform-0", "transform-1", "transform-revise",
        "transform-revise-late", "fn/read/input:0", "fn/write/:0", "fn/write/late:0"))), ts.toString());
    RunnerApi.PTransform read = d.getTransformsOrThrow("fn/read/input:0");
    BeamFnApi.RemoteGrpcPort rp = BeamFnApi.RemoteGrpcPort.parseFrom(read.getSpec().getPayload());
    check("read transform", read.getSpec().getUrn().equals("beam:runner:source:v1")
        && read.getOutputsMap().equals(java.util.Map.of("local_output", "input")) && read.getUniqueName().isEmpty()
        && read.getEnvironmentId().isEmpty() && rp.getCoderId().equals("fn/wire/input:0-length_prefix0")
        && rp.getApiServiceDescriptor().getUrl().equals("localhost:1"), read.toString());
    RunnerApi.PTransform write = d.getTransformsOrThrow("fn/write/:0");
    check("write transform", write.getSpec().getUrn().equals("beam:runner:sink:v1")
        && write.getInputsMap().equals(java.util.Map.of("local_input", "")) && write.getUniqueName().isEmpty(),
        write.toString());
    check("main outputs keyed \"\"", d.getTransformsOrThrow("transform-0").getOutputsMap()
        .equals(java.util.Map.of("", "collection-0"))
        && d.getTransformsOrThrow("transform-revise").getOutputsMap().equals(java.util.Map.of("", ""))
        && d.getTransformsOrThrow("transform-revise-late").getOutputsMap().equals(java.util.Map.of("", "late"))
        && d.getPcollectionsOrThrow("late").getCoderId().equals("side_coder-late")
        && d.getEnvironmentsMap().isEmpty(), d.getTransformsMap().toString());
    RunnerApi.Coder wire = d.getCodersOrThrow("fn/wire/input:0-length_prefix0");
    check("wire coder", wire.getSpec().getUrn().equals("beam:coder:param_windowed_value:v1")
        && Arrays.equals(wire.getSpec().getPayload().toByteArray(), Hex.parse("7fdf3b645a1cac09000000010f00"))
        && wire.getComponentCoderIdsList().equals(List.of("input_coder-length_prefix0", "window_coder")),
        wire.toString());
    RunnerApi.Coder lp = d.getCodersOrThrow("input_coder-length_prefix0");
    check("length prefix coder", lp.getSpec().getUrn().equals("beam:coder:length_prefix:v1")
        && lp.getComponentCoderIdsList().equals(List.of("input_coder")), lp.toString());
    FlinkFnApi.CoderInfoDescriptor in = FlinkFnApi.CoderInfoDescriptor.parseFrom(
        d.getCodersOrThrow("input_coder").getSpec().getPayload());
    check("input coder raw type", d.getCodersOrThrow("input_coder").getSpec().getUrn().equals("flink:coder:v1")
        && in.getMode() == FlinkFnApi.CoderInfoDescriptor.Mode.MULTIPLE
        && TypeInfoProtos.fromProto(in.getRawType().getTypeInfo()).toString()
            .equals("ROW<ts:LONG,wm:LONG,data:ROW<s:STRING,i:INT>>"), in.toString());
    FlinkFnApi.CoderInfoDescriptor out = FlinkFnApi.CoderInfoDescriptor.parseFrom(
        d.getCodersOrThrow("output_coder").getSpec().getPayload());
    check("output coder raw type", TypeInfoProtos.fromProto(out.getRawType().getTypeInfo()).toString()
        .equals("ROW<ts:LONG,data:INT>"), out.toString());
    check("input pcollection", d.getPcollectionsOrThrow("input").getCoderId().equals("input_coder-length_prefix0")
        && d.getPcollectionsOrThrow("input").getWindowingStrategyId().equals("windowing_strategy"), "");
    check("windowing strategy", d.getWindowingStrategiesOrThrow("windowing_strategy").equals(
        RunnerApi.WindowingStrategy.newBuilder().setWindowCoderId("window_coder").build()), "");
    RunnerApi.ParDoPayload p1 = RunnerApi.ParDoPayload.parseFrom(d.getTransformsOrThrow("transform-1").getSpec()
        .getPayload());
    FlinkFnApi.UserDefinedDataStreamFunction u1 = FlinkFnApi.UserDefinedDataStreamFunction.parseFrom(
        p1.getDoFn().getPayload());
    check("chained function", p1.getDoFn().getUrn().equals("flink:transform:ds:stateless_function:v1")
        && u1.getFunctionType() == FlinkFnApi.UserDefinedDataStreamFunction.FunctionType.ASYNC_BATCH
        && u1.getPayload().equals(ByteString.copyFrom(new byte[]{3})) && u1.getHasSideOutput()
        && d.getTransformsOrThrow("transform-1").getInputsMap().get("input").equals("collection-0")
        && d.getTransformsOrThrow("transform-1").getOutputsMap().get("late").equals("collection-revise-late"),
        u1.toString());
    FlinkFnApi.UserDefinedDataStreamFunction rev = FlinkFnApi.UserDefinedDataStreamFunction.parseFrom(
        RunnerApi.ParDoPayload.parseFrom(d.getTransformsOrThrow("transform-revise").getSpec().getPayload())
            .getDoFn().getPayload());
    check("revise function", rev.equals(FlinkFnApi.UserDefinedDataStreamFunction.newBuilder()
        .setFunctionType(FlinkFnApi.UserDefinedDataStreamFunction.FunctionType.REVISE_OUTPUT).build()), rev.toString());
    check("state endpoint", d.getStateApiServiceDescriptor().getUrl().equals("localhost:2")
        && !d.hasTimerApiServiceDescriptor(), "");
  }

  /** The harness's descriptor of a three-function chain has the shape a real Flink's has. */
  void realFlinkShape() throws Exception {
    String root = System.getProperty("fnworker.root");
    if (root == null) {
      check("real Flink descriptor shape", false, "run with -Dfnworker.root=<checkout> (tests/integration/run.sh does)");
      return;
    }
    java.nio.file.Path fixture = java.nio.file.Path.of(root, "tests/integration/fixtures/real-flink-descriptor.txt");
    StringBuilder want = new StringBuilder();
    for (String line : java.nio.file.Files.readAllLines(fixture)) {
      if (!line.startsWith("#")) {
        want.append(line).append('\n');
      }
    }
    DescriptorBuilder b = new DescriptorBuilder();
    b.id = "1-2";
    b.inputType = TypeInfo.parse("ROW<id:LONG,name:STRING,score:DOUBLE>");
    b.outputType = TypeInfo.parse("ROW<name:STRING,id:LONG>");
    for (int i = 0; i < 3; i++) {
      b.functions.add(new DescriptorBuilder.Fn(FlinkFnApi.UserDefinedDataStreamFunction.FunctionType.PROCESS,
          new byte[]{(byte) i}));
    }
    b.dataEndpoint = Endpoints.ApiServiceDescriptor.newBuilder().setUrl("localhost:1").build();
    b.stateEndpoint = Endpoints.ApiServiceDescriptor.newBuilder().setUrl("localhost:2").build();
    String got = DescriptorShape.of(b.build());
    check("real Flink descriptor shape (" + fixture + ")", got.equals(want.toString()),
        "\n--- real Flink\n" + want + "--- harness\n" + got);
  }

  /**
   * The harness's keyed operator descriptor (KEYED_PROCESS head) names the transforms, coders and
   * PCollections the keyed descriptor '1-2' of a real Flink 2.3.0 has
   * (tests/integration/fixtures/relay-keyed-trace.txt), timer and state endpoints included.
   */
  void keyedShape() throws Exception {
    String root = System.getProperty("fnworker.root");
    if (root == null) {
      check("keyed descriptor shape", false, "run with -Dfnworker.root=<checkout> (tests/integration/run.sh does)");
      return;
    }
    java.nio.file.Path fixture = java.nio.file.Path.of(root, "tests/integration/fixtures/relay-keyed-trace.txt");
    String text = java.nio.file.Files.readString(fixture);
    int at = text.indexOf("=== descriptor\nid: \"1-2\"");
    check("keyed descriptor in " + fixture, at >= 0, "no descriptor 1-2");
    if (at < 0) {
      return;
    }
    String block = text.substring(at + 1);
    block = block.substring(0, block.indexOf("\n=== "));
    java.util.TreeSet<String> want = new java.util.TreeSet<>();
    String[] lines = block.split("\n");
    for (int i = 0; i < lines.length; i++) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(coders|transforms|pcollections) \\{").matcher(lines[i]);
      if (m.find()) {
        java.util.regex.Matcher k = java.util.regex.Pattern.compile("^  key: \"(.*)\"").matcher(lines[i + 1]);
        want.add(m.group(1) + " '" + (k.find() ? k.group(1) : "") + "'");
      }
    }
    want.add("state_api " + block.contains("\nstate_api_service_descriptor {"));
    want.add("timer_api " + block.contains("\ntimer_api_service_descriptor {"));
    DescriptorBuilder b = new DescriptorBuilder();
    b.id = "1-2";
    b.inputType = TypeInfo.parse("ROW<f0:STRING,f1:LONG>");
    b.outputType = TypeInfo.parse("STRING");
    DescriptorBuilder.Fn fn = new DescriptorBuilder.Fn(FlinkFnApi.UserDefinedDataStreamFunction.FunctionType.KEYED_PROCESS,
        new byte[]{1});
    fn.keyType = TypeInfo.parse("ROW<f0:STRING>");
    b.functions.add(fn);
    b.headUrn = DescriptorBuilder.STATEFUL_URN;
    b.timerKeyType = fn.keyType;
    b.dataEndpoint = Endpoints.ApiServiceDescriptor.newBuilder().setUrl("localhost:1").build();
    b.stateEndpoint = Endpoints.ApiServiceDescriptor.newBuilder().setUrl("localhost:2").build();
    org.apache.beam.model.fnexecution.v1.BeamFnApi.ProcessBundleDescriptor d = b.build();
    java.util.TreeSet<String> got = new java.util.TreeSet<>();
    d.getCodersMap().keySet().forEach(k -> got.add("coders '" + k + "'"));
    d.getTransformsMap().keySet().forEach(k -> got.add("transforms '" + k + "'"));
    d.getPcollectionsMap().keySet().forEach(k -> got.add("pcollections '" + k + "'"));
    got.add("state_api " + d.hasStateApiServiceDescriptor());
    got.add("timer_api " + d.hasTimerApiServiceDescriptor());
    check("keyed descriptor shape (" + fixture + ")", got.equals(want), "\n--- real Flink\n" + want + "\n--- harness\n"
        + got);
    org.apache.beam.model.pipeline.v1.RunnerApi.ParDoPayload head = org.apache.beam.model.pipeline.v1.RunnerApi
        .ParDoPayload.parseFrom(d.getTransformsOrThrow("transform-0").getSpec().getPayload());
    check("keyed head function: stateful URN, timer family 'timer'",
        head.getDoFn().getUrn().equals(DescriptorBuilder.STATEFUL_URN) && head.getTimerFamilySpecsMap()
            .containsKey("timer") && d.containsCoders(head.getTimerFamilySpecsOrThrow("timer").getTimerFamilyCoderId()),
        head.toString());
  }

  void typeProtos() {
    List<String> bad = new ArrayList<>();
    for (String s : CodecSelfTest.ALL_TYPES) {
      TypeInfo t = TypeInfo.parse(s);
      if (!TypeInfoProtos.fromProto(TypeInfoProtos.toProto(t)).equals(t)) {
        bad.add(s);
      }
    }
    check("TypeInfo proto round trip", bad.isEmpty(), bad.toString());
    FlinkFnApi.TypeInfo p = TypeInfoProtos.toProto(TypeInfo.parse("LIST<ROW<a:INT>>"));
    check("TypeInfo proto shape", p.getTypeName() == FlinkFnApi.TypeInfo.TypeName.LIST
        && p.getCollectionElementType().getRowTypeInfo().getFields(0).getFieldName().equals("a")
        && p.getCollectionElementType().getRowTypeInfo().getFields(0).getFieldType().getTypeName()
            == FlinkFnApi.TypeInfo.TypeName.INT, p.toString());
  }

  void reassembly() {
    ByteWriter w = new ByteWriter();
    List<byte[]> recs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      byte[] r = new byte[i * 7 % 300];
      Arrays.fill(r, (byte) i);
      recs.add(r);
      w.varint(r.length).bytes(r);
    }
    byte[] all = w.toByteArray();
    boolean ok = true;
    String detail = "";
    for (int chunk : new int[]{1, 2, 3, 7, 64, 129, all.length}) {
      List<FunctionRunner.Result> got = new ArrayList<>();
      OutputReceiver r = new OutputReceiver("output", "fn/write/output:0", got::add);
      for (int off = 0; off < all.length; off += chunk) {
        r.accept(Arrays.copyOfRange(all, off, Math.min(all.length, off + chunk)));
      }
      r.last();
      boolean same = got.size() == recs.size() && r.problems().isEmpty();
      for (int i = 0; same && i < recs.size(); i++) {
        same = Arrays.equals(got.get(i).bytes, recs.get(i));
      }
      if (!same) {
        ok = false;
        detail += " chunk " + chunk + ": " + got.size() + " records, problems " + r.problems();
      }
    }
    check("output reassembly at every split size", ok, detail);
    OutputReceiver r = new OutputReceiver("output", "fn/write/output:0", x -> { });
    r.accept(new byte[]{5, 1, 2});
    r.last();
    check("incomplete record at is_last is reported", r.problems().size() == 1, r.problems().toString());
  }

  void metrics() {
    MetricsApi.MonitoringInfo sum = MetricsApi.MonitoringInfo.newBuilder().setUrn("beam:metric:user:sum_int64:v1")
        .setType("beam:metrics:sum_int64:v1").setPayload(ByteString.copyFrom(Hex.parse("ac02")))
        .putLabels("NAME", "n").build();
    Metrics.Metric m = Metrics.decode(sum);
    check("sum_int64 300", m.value == 300 && m.name().equals("n"), m.toString());
    MetricsApi.MonitoringInfo dist = MetricsApi.MonitoringInfo.newBuilder()
        .setUrn("beam:metric:user:distribution_int64:v1").setType("beam:metrics:distribution_int64:v1")
        .setPayload(ByteString.copyFrom(Hex.parse("02 05 01 04"))).build();
    Metrics.Metric d = Metrics.decode(dist);
    check("distribution_int64", d.count == 2 && d.sum == 5 && d.min == 1 && d.max == 4, d.toString());
    MetricsApi.MonitoringInfo neg = MetricsApi.MonitoringInfo.newBuilder().setUrn("beam:metric:user:latest_int64:v1")
        .setType("beam:metrics:latest_int64:v1")
        .setPayload(ByteString.copyFrom(new ByteWriter().varint(1000).varint(-1).toByteArray())).build();
    Metrics.Metric l = Metrics.decode(neg);
    check("latest_int64 negative", l.timestamp == 1000 && l.value == -1, l.toString());
  }

  static MetricsApi.MonitoringInfo info(String type, String tid, String ns, String name, byte[] payload) {
    String kind = type.replace("beam:metrics:", "");
    return MetricsApi.MonitoringInfo.newBuilder().setUrn("beam:metric:user:" + kind).setType(type)
        .putLabels("PTRANSFORM", tid).putLabels("NAMESPACE", ns).putLabels("NAME", name)
        .setPayload(ByteString.copyFrom(payload)).build();
  }

  /** FlinkView names and merges like Flink, so the worker's mistakes would show. */
  void flinkView() {
    String shared = "[\"fnworker\", \"MetricGroupType.generic\"]";
    String sum = "beam:metrics:sum_int64:v1";
    Metrics.FlinkView v = new Metrics.FlinkView();
    v.update(List.of(info(sum, "transform-0", shared, "recordsIn", Hex.parse("05")),
        info(sum, "transform-1", shared, "recordsIn", Hex.parse("0a"))));
    check("same namespace and name in two transforms collide", v.collisions().size() == 1
        && v.collisions().get(0).startsWith("fnworker.recordsIn"), v.collisions().toString());
    check("the later one wins in Flink", v.get("fnworker.recordsIn").value == 10, String.valueOf(v.entries()));

    Metrics.FlinkView w = new Metrics.FlinkView();
    String ns0 = "[\"fnworker\", \"echo_0\", \"MetricGroupType.generic\", \"MetricGroupType.generic\"]";
    String ns1 = "[\"fnworker\", \"identity_1\", \"MetricGroupType.generic\", \"MetricGroupType.generic\"]";
    for (int bundle = 0; bundle < 2; bundle++) {
      w.update(List.of(info(sum, "transform-0", ns0, "recordsIn", Hex.parse("05")),
          info(sum, "transform-1", ns1, "recordsIn", Hex.parse("0a"))));
    }
    Metrics.FlinkView.Entry e0 = w.get("fnworker.echo_0.recordsIn");
    check("per-step groups do not collide", w.collisions().isEmpty() && e0 != null && e0.value == 10
        && w.get("fnworker.identity_1.recordsIn").value == 20, String.valueOf(w.entries()));
    check("nested generic groups", e0.groups.equals(List.of("fnworker", "echo_0")) && e0.kind.equals("counter"),
        e0.groups.toString());

    String dist = "beam:metrics:distribution_int64:v1";
    Metrics.FlinkView d = new Metrics.FlinkView();
    d.update(List.of(info(dist, "t", ns0, "ms", Hex.parse("02 28 14 14"))));
    d.update(List.of(info(dist, "t", ns0, "ms", Hex.parse("00 00 00 00"))));
    Metrics.FlinkView.Entry de = d.get("fnworker.echo_0.ms");
    check("an empty distribution drags Flink's min to 0", de.count == 2 && de.value == 40 && de.min == 0
        && de.max == 20, de.toString());

    Metrics.FlinkView p = new Metrics.FlinkView();
    p.update(List.of(info(sum, "t", ns0, "a", new byte[0]), info(sum, "t", ns0, "b", Hex.parse("01"))));
    check("an empty payload hides what follows", p.problems().size() == 1 && p.get("fnworker.echo_0.b") == null,
        p.problems().toString());
  }
}
