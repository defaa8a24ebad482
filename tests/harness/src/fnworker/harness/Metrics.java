// Decoded MonitoringInfos of a ProcessBundleResponse: the beam:metric:user:*
// payloads Flink reads (sum_int64, distribution_int64, latest_int64; Beam
// varints). Other types keep their raw payload.
//
// FlinkView plays what Flink does with them, bundle after bundle: Beam's
// metrics container merges each MonitoringInfo into a cell keyed by its URN
// and all its labels (counters add, distributions combine, gauges keep the
// newest timestamp; it stops reading a response at the first empty payload),
// then Flink names each user metric by its NAMESPACE group names and NAME
// only, joined with ".", and registers it under the groups the NAMESPACE
// types describe. Two cells that get one Flink name overwrite each other in
// Flink; FlinkView reports that as a collision.
package fnworker.harness;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import fnworker.harness.types.ByteReader;
import fnworker.harness.types.Hex;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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

  /** Flink's metrics for one operator, fed with the MonitoringInfos of each bundle in turn. */
  public static final class FlinkView {
    /** One metric as Flink exposes it. */
    public static final class Entry {
      public String identifier;
      /** The metric groups it is registered under, outermost first. */
      public List<String> groups;
      /** counter, meter, distribution or gauge. */
      public String kind;
      /** counter/meter/gauge value; distribution sum. */
      public long value;
      public long count;
      public long min;
      public long max;

      @Override
      public String toString() {
        return identifier + " " + kind + (kind.equals("distribution")
            ? " count=" + count + " sum=" + value + " min=" + min + " max=" + max : "=" + value);
      }
    }

    /** A Beam container cell: URN + labels -> merged value. */
    private static final class Cell {
      final Metric first;
      long value;
      long count;
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      long timestamp = Long.MIN_VALUE;

      Cell(Metric m) {
        first = m;
      }
    }

    private final Map<String, Cell> cells = new LinkedHashMap<>();
    private final Map<String, String> owners = new LinkedHashMap<>();
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private final Set<String> collisions = new LinkedHashSet<>();
    private final List<String> problems = new ArrayList<>();

    /** Merges one bundle's response, then refreshes Flink's metrics from every cell. */
    public void update(List<MetricsApi.MonitoringInfo> infos) {
      for (MetricsApi.MonitoringInfo mi : infos) {
        if (mi.getPayload().isEmpty()) {
          problems.add("empty payload in " + mi.getUrn() + " " + mi.getLabelsMap() + ": Beam's container ignores it"
              + " and every MonitoringInfo after it");
          break;
        }
        merge(decode(mi));
      }
      for (Map.Entry<String, Cell> e : cells.entrySet()) {
        expose(e.getKey(), e.getValue());
      }
    }

    private void merge(Metric m) {
      if (m.decodeError != null) {
        problems.add("undecodable " + m);
        return;
      }
      String key = m.urn + " " + new TreeMap<>(m.labels);
      Cell c = cells.computeIfAbsent(key, k -> new Cell(m));
      switch (m.type) {
        case "beam:metrics:sum_int64:v1":
          c.value += m.value;
          break;
        case "beam:metrics:distribution_int64:v1":
          c.count += m.count;
          c.value += m.sum == null ? 0 : m.sum;
          if (m.count != 0 || m.min != null) {
            c.min = Math.min(c.min, m.min);
            c.max = Math.max(c.max, m.max);
          }
          break;
        case "beam:metrics:latest_int64:v1":
          if (m.timestamp >= c.timestamp) {
            c.timestamp = m.timestamp;
            c.value = m.value;
          }
          break;
        default:
          problems.add("unsupported metric type " + m.type + " (Beam logs a warning and skips it)");
      }
    }

    private void expose(String key, Cell c) {
      Metric m = c.first;
      if (!m.urn.startsWith("beam:metric:user")) {
        return;
      }
      List<String> ns = new ArrayList<>();
      try {
        JsonElement parsed = JsonParser.parseString(m.namespace());
        JsonArray arr = parsed.getAsJsonArray();
        for (JsonElement x : arr) {
          ns.add(x.getAsString());
        }
      } catch (RuntimeException e) {
        problems.add("NAMESPACE " + m.namespace() + " of " + m.name() + " is not a JSON array of strings: Flink fails "
            + "with 'Parse namespace[...] error'");
        return;
      }
      List<String> names = ns.subList(0, ns.size() / 2);
      List<String> types = ns.subList(ns.size() / 2, ns.size());
      String id = String.join(".", names) + "." + m.name();
      String owner = owners.putIfAbsent(id, key);
      if (owner != null && !owner.equals(key)) {
        collisions.add(id + ": " + owner + " and " + key);
      }
      Entry e = entries.computeIfAbsent(id, k -> new Entry());
      e.identifier = id;
      e.groups = groups(names, types);
      switch (m.type) {
        case "beam:metrics:sum_int64:v1":
          e.kind = ns.size() % 2 != 0 ? "meter" : "counter";
          e.value = c.value;
          break;
        case "beam:metrics:distribution_int64:v1":
          e.kind = "distribution";
          e.value = c.value;
          e.count = c.count;
          e.min = c.min;
          e.max = c.max;
          break;
        default:
          e.kind = "gauge";
          e.value = c.value;
      }
    }

    /** The groups Flink adds: generic -> one group, key -> a key group and its value group, others skipped. */
    private static List<String> groups(List<String> names, List<String> types) {
      List<String> g = new ArrayList<>();
      for (int i = 0; i < names.size(); i++) {
        String t = types.get(i);
        if (t.equals("MetricGroupType.generic")) {
          g.add(names.get(i));
        } else if (t.equals("MetricGroupType.key") && i + 1 < names.size()) {
          g.add(names.get(i));
          g.add(names.get(++i));
        }
      }
      return g;
    }

    /** Flink identifier (names joined with ".") -> metric. */
    public Map<String, Entry> entries() {
      return entries;
    }

    public Entry get(String identifier) {
      return entries.get(identifier);
    }

    /** Flink identifiers that more than one Beam cell maps to (they overwrite each other). */
    public List<String> collisions() {
      return new ArrayList<>(collisions);
    }

    /** What Flink or Beam would reject, skip or misread. */
    public List<String> problems() {
      return new ArrayList<>(problems);
    }
  }

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
