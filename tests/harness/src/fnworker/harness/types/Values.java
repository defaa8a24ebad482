// Typed value equality (floats by bit pattern, byte[] by content, MAP in
// order) and a short printable form for failure messages.
package fnworker.harness.types;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

public final class Values {
  private Values() {}

  public static boolean equal(TypeInfo t, Object a, Object b) {
    return firstDifference(t, a, b, "") == null;
  }

  /** Path and description of the first difference, or null when equal. */
  public static String firstDifference(TypeInfo t, Object a, Object b, String path) {
    if (a == null || b == null) {
      return a == b ? null : at(path, a, b);
    }
    switch (t.name) {
      case ROW: {
        Row ra = (Row) a;
        Row rb = (Row) b;
        if (ra.kind != rb.kind) {
          return path + ": row kind " + Row.kindName(ra.kind) + " vs " + Row.kindName(rb.kind);
        }
        if (ra.arity() != rb.arity()) {
          return path + ": arity " + ra.arity() + " vs " + rb.arity();
        }
        for (int i = 0; i < ra.arity(); i++) {
          String d = firstDifference(t.children.get(i), ra.get(i), rb.get(i),
              path + "." + t.fieldNames.get(i));
          if (d != null) {
            return d;
          }
        }
        return null;
      }
      case FLOAT:
        return Float.floatToRawIntBits((Float) a) == Float.floatToRawIntBits((Float) b) ? null : at(path, a, b);
      case DOUBLE:
        return Double.doubleToRawLongBits((Double) a) == Double.doubleToRawLongBits((Double) b)
            ? null : at(path, a, b);
      case PICKLED_BYTES:
        return Arrays.equals((byte[]) a, (byte[]) b) ? null : at(path, a, b);
      case PRIMITIVE_ARRAY:
        if (t.element().name == TypeName.BYTE) {
          return Arrays.equals((byte[]) a, (byte[]) b) ? null : at(path, a, b);
        }
        return listDifference(t.element(), (List<?>) a, (List<?>) b, path);
      case BASIC_ARRAY: case OBJECT_ARRAY: case LIST:
        return listDifference(t.element(), (List<?>) a, (List<?>) b, path);
      case TUPLE: {
        List<?> la = (List<?>) a;
        List<?> lb = (List<?>) b;
        if (la.size() != lb.size()) {
          return path + ": tuple size " + la.size() + " vs " + lb.size();
        }
        for (int i = 0; i < la.size(); i++) {
          String d = firstDifference(t.children.get(i), la.get(i), lb.get(i), path + "." + i);
          if (d != null) {
            return d;
          }
        }
        return null;
      }
      case MAP: {
        MapValue ma = (MapValue) a;
        MapValue mb = (MapValue) b;
        if (ma.size() != mb.size()) {
          return path + ": map size " + ma.size() + " vs " + mb.size();
        }
        for (int i = 0; i < ma.size(); i++) {
          String d = firstDifference(t.children.get(0), ma.keys.get(i), mb.keys.get(i), path + "{key " + i + "}");
          if (d == null) {
            d = firstDifference(t.children.get(1), ma.values.get(i), mb.values.get(i), path + "{value " + i + "}");
          }
          if (d != null) {
            return d;
          }
        }
        return null;
      }
      case AVRO:
        return avroEqual(a, b) ? null : at(path, a, b);
      default:
        return Objects.equals(a, b) ? null : at(path, a, b);
    }
  }

  private static String listDifference(TypeInfo el, List<?> a, List<?> b, String path) {
    if (a.size() != b.size()) {
      return path + ": length " + a.size() + " vs " + b.size();
    }
    for (int i = 0; i < a.size(); i++) {
      String d = firstDifference(el, a.get(i), b.get(i), path + "[" + i + "]");
      if (d != null) {
        return d;
      }
    }
    return null;
  }

  private static boolean avroEqual(Object a, Object b) {
    if (a instanceof byte[] && b instanceof byte[]) {
      return Arrays.equals((byte[]) a, (byte[]) b);
    }
    if (a instanceof Map && b instanceof Map) {
      Map<?, ?> ma = (Map<?, ?>) a;
      Map<?, ?> mb = (Map<?, ?>) b;
      if (!ma.keySet().equals(mb.keySet())) {
        return false;
      }
      for (Object k : ma.keySet()) {
        if (!avroEqual(ma.get(k), mb.get(k))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof List && b instanceof List) {
      List<?> la = (List<?>) a;
      List<?> lb = (List<?>) b;
      if (la.size() != lb.size()) {
        return false;
      }
      for (int i = 0; i < la.size(); i++) {
        if (!avroEqual(la.get(i), lb.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof Double && b instanceof Double) {
      return Double.doubleToRawLongBits((Double) a) == Double.doubleToRawLongBits((Double) b);
    }
    if (a instanceof Float && b instanceof Float) {
      return Float.floatToRawIntBits((Float) a) == Float.floatToRawIntBits((Float) b);
    }
    return Objects.equals(a, b);
  }

  private static String at(String path, Object a, Object b) {
    return (path.isEmpty() ? "value" : path) + ": " + show(a) + " vs " + show(b);
  }

  public static String show(Object v) {
    if (v instanceof byte[]) {
      return "bytes[" + Hex.of((byte[]) v) + "]";
    }
    if (v instanceof String) {
      StringBuilder sb = new StringBuilder("\"");
      for (char c : ((String) v).toCharArray()) {
        sb.append(c < 0x20 || c == 0x7f ? String.format("\\u%04x", (int) c) : String.valueOf(c));
      }
      return sb.append('"').toString();
    }
    return String.valueOf(v);
  }
}
