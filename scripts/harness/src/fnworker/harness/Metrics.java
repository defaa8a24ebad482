// Decoded MonitoringInfos of a ProcessBundleResponse: the beam:metric:user:*
// payloads Flink reads (sum_int64, distribution_int64, latest_int64; Beam
// varints, beam-fnapi.md §5). Other types keep their raw payload.
package fnworker.harness;

import fnworker.harness.types.ByteReader;
import fnworker.harness.types.Hex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.model.pipeline.v1.MetricsApi;

public final class Metrics {
  public static final class Metric {
    public final String urn;
    public final String type;
    public final Map<String, String> labels;
    public final byte[] payload;
    /** sum_int64: the value; latest_int64: the value; distribution: the sum. */
    public Long value;
    public Long count;
    public Long sum;
    public Long min;
    public Long max;
    public Long timestamp;
    public String decodeError;

    Metric(MetricsApi.MonitoringInfo m) {
      urn = m.getUrn();
      type = m.getType();
      labels = m.getLabelsMap();
      payload = m.getPayload().toByteArray();
    }

    public String name() {
      return labels.getOrDefault("NAME", "");
    }

    public String namespace() {
      return labels.getOrDefault("NAMESPACE", "");
    }

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder(urn).append(' ').append(labels);
      if (decodeError != null) {
        sb.append(" undecodable: ").append(decodeError);
      } else if (count != null) {
        sb.append(" count=").append(count).append(" sum=").append(sum).append(" min=").append(min)
            .append(" max=").append(max);
      } else if (value != null) {
        sb.append(" value=").append(value);
        if (timestamp != null) {
          sb.append(" at ").append(timestamp);
        }
      } else {
        sb.append(" payload ").append(Hex.of(payload));
      }
      return sb.toString();
    }
  }

  private Metrics() {}

  public static List<Metric> decode(List<MetricsApi.MonitoringInfo> infos) {
    List<Metric> out = new ArrayList<>();
    for (MetricsApi.MonitoringInfo m : infos) {
      out.add(decode(m));
    }
    return out;
  }

  public static Metric decode(MetricsApi.MonitoringInfo m) {
    Metric r = new Metric(m);
    ByteReader in = new ByteReader(r.payload);
    try {
      switch (m.getType()) {
        case "beam:metrics:sum_int64:v1":
          r.value = in.varint("sum_int64");
          break;
        case "beam:metrics:distribution_int64:v1":
          r.count = in.varint("distribution count");
          if (r.count != 0 || in.remaining() > 0) {
            r.sum = in.varint("distribution sum");
            r.min = in.varint("distribution min");
            r.max = in.varint("distribution max");
          }
          r.value = r.sum;
          break;
        case "beam:metrics:latest_int64:v1":
          r.timestamp = in.varint("latest timestamp");
          r.value = in.varint("latest value");
          break;
        default:
          return r;
      }
      if (in.remaining() != 0) {
        r.decodeError = in.remaining() + " trailing byte(s)";
      }
    } catch (ByteReader.DecodeException e) {
      r.decodeError = e.getMessage();
    }
    return r;
  }
}
