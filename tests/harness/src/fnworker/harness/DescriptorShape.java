// The shape of a ProcessBundleDescriptor as text, one sorted line per
// transform (id, URN, inputs and outputs by key, the gRPC port's coder),
// PCollection (its coder), coder (URN and components) and service: the ids
// and keys a worker navigates by, without payload bytes or ports. It lets a
// descriptor captured from a real Flink be compared with the harness's
// (HarnessSelfTest, tests/integration/fixtures/real-flink-descriptor.txt):
//   java -cp harness.jar:... fnworker.harness.DescriptorShape DESCRIPTOR.bin
package fnworker.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.pipeline.v1.RunnerApi;

public final class DescriptorShape {
  private DescriptorShape() { }

  private static String map(Map<String, String> m) {
    return new TreeMap<>(m).toString();
  }

  public static String of(BeamFnApi.ProcessBundleDescriptor d) throws Exception {
    List<String> lines = new ArrayList<>();
    for (Map.Entry<String, RunnerApi.PTransform> e : new TreeMap<>(d.getTransformsMap()).entrySet()) {
      RunnerApi.PTransform t = e.getValue();
      String urn = t.getSpec().getUrn();
      String extra = "";
      if (urn.equals(DescriptorBuilder.SOURCE_URN) || urn.equals(DescriptorBuilder.SINK_URN)) {
        extra = " port_coder=" + BeamFnApi.RemoteGrpcPort.parseFrom(t.getSpec().getPayload()).getCoderId();
      } else if (urn.equals(DescriptorBuilder.PARDO_URN)) {
        extra = " do_fn=" + RunnerApi.ParDoPayload.parseFrom(t.getSpec().getPayload()).getDoFn().getUrn();
      }
      lines.add("transform '" + e.getKey() + "' urn=" + urn + " name='" + t.getUniqueName() + "' inputs="
          + map(t.getInputsMap()) + " outputs=" + map(t.getOutputsMap()) + " env='" + t.getEnvironmentId() + "'"
          + extra);
    }
    for (Map.Entry<String, RunnerApi.PCollection> e : new TreeMap<>(d.getPcollectionsMap()).entrySet()) {
      lines.add("pcollection '" + e.getKey() + "' coder='" + e.getValue().getCoderId() + "' windowing='"
          + e.getValue().getWindowingStrategyId() + "'");
    }
    for (Map.Entry<String, RunnerApi.Coder> e : new TreeMap<>(d.getCodersMap()).entrySet()) {
      lines.add("coder '" + e.getKey() + "' urn=" + e.getValue().getSpec().getUrn() + " components="
          + e.getValue().getComponentCoderIdsList());
    }
    for (String w : new TreeMap<>(d.getWindowingStrategiesMap()).keySet()) {
      lines.add("windowing_strategy '" + w + "' window_coder='"
          + d.getWindowingStrategiesOrThrow(w).getWindowCoderId() + "'");
    }
    lines.add("environments " + new TreeMap<>(d.getEnvironmentsMap()).keySet());
    lines.add("state_api " + d.hasStateApiServiceDescriptor() + " timer_api " + d.hasTimerApiServiceDescriptor());
    return String.join("\n", lines) + "\n";
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: DescriptorShape DESCRIPTOR.bin (a serialized ProcessBundleDescriptor)");
      System.exit(2);
    }
    System.out.print(of(BeamFnApi.ProcessBundleDescriptor.parseFrom(Files.readAllBytes(Path.of(args[0])))));
  }
}
