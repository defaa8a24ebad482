// A tiny Avro: schema parsing (gson) and the binary encoding for records of
// null/boolean/int/long/float/double/bytes/string, unions, arrays and maps.
// Enough to feed AVRO-typed records through the worker in tests; values are
// LinkedHashMap<String,Object> for records, List for arrays, Map for maps.
package fnworker.harness.types;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Avro {
  private Avro() {}

  public enum Kind { NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, RECORD, UNION, ARRAY, MAP }

  public static final class Schema {
    public final Kind kind;
    public final String name;                 // RECORD
    public final List<String> fieldNames;     // RECORD
    public final List<Schema> types;          // RECORD fields, UNION branches, ARRAY/MAP item

    Schema(Kind kind, String name, List<String> fieldNames, List<Schema> types) {
      this.kind = kind;
      this.name = name;
      this.fieldNames = fieldNames;
      this.types = types;
    }
  }

  public static Schema parseSchema(String json) {
    try {
      return schema(JsonParser.parseString(json));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("bad Avro schema " + json + ": " + e.getMessage(), e);
    }
  }

  private static Schema schema(JsonElement e) {
    if (e.isJsonArray()) {
      List<Schema> branches = new ArrayList<>();
      for (JsonElement b : e.getAsJsonArray()) {
        branches.add(schema(b));
      }
      return new Schema(Kind.UNION, null, List.of(), branches);
    }
    if (e.isJsonPrimitive()) {
      return primitive(e.getAsString());
    }
    JsonObject o = e.getAsJsonObject();
    String type = o.get("type").isJsonPrimitive() ? o.get("type").getAsString() : null;
    if (type == null) {
      return schema(o.get("type"));
    }
    switch (type) {
      case "record": {
        List<String> names = new ArrayList<>();
        List<Schema> types = new ArrayList<>();
        JsonArray fields = o.getAsJsonArray("fields");
        for (JsonElement f : fields) {
          names.add(f.getAsJsonObject().get("name").getAsString());
          types.add(schema(f.getAsJsonObject().get("type")));
        }
        return new Schema(Kind.RECORD, o.get("name").getAsString(), names, types);
      }
      case "array":
        return new Schema(Kind.ARRAY, null, List.of(), List.of(schema(o.get("items"))));
      case "map":
        return new Schema(Kind.MAP, null, List.of(), List.of(schema(o.get("values"))));
      default:
        return primitive(type);
    }
  }

  private static Schema primitive(String t) {
    switch (t) {
      case "null": return new Schema(Kind.NULL, null, List.of(), List.of());
      case "boolean": return new Schema(Kind.BOOLEAN, null, List.of(), List.of());
      case "int": return new Schema(Kind.INT, null, List.of(), List.of());
      case "long": return new Schema(Kind.LONG, null, List.of(), List.of());
      case "float": return new Schema(Kind.FLOAT, null, List.of(), List.of());
      case "double": return new Schema(Kind.DOUBLE, null, List.of(), List.of());
      case "bytes": return new Schema(Kind.BYTES, null, List.of(), List.of());
      case "string": return new Schema(Kind.STRING, null, List.of(), List.of());
      default: throw new IllegalArgumentException("unsupported Avro type '" + t + "'");
    }
  }

  // ------------------------------------------------------------ binary

  private static void zigzag(ByteWriter w, long v) {
    w.varint((v << 1) ^ (v >> 63));
  }

  private static long unzigzag(ByteReader r, String what) {
    long u = r.varint(what);
    return (u >>> 1) ^ -(u & 1);
  }

  public static void write(Schema s, Object v, ByteWriter w) {
    switch (s.kind) {
      case NULL:
        if (v != null) {
          throw new IllegalArgumentException("Avro null expected, got " + v);
        }
        return;
      case BOOLEAN: w.u8(((Boolean) v) ? 1 : 0); return;
      case INT: zigzag(w, (Integer) v); return;
      case LONG: zigzag(w, ((Number) v).longValue()); return;
      case FLOAT: {
        int b = Float.floatToRawIntBits((Float) v);
        w.u8(b).u8(b >>> 8).u8(b >>> 16).u8(b >>> 24);
        return;
      }
      case DOUBLE: {
        long b = Double.doubleToRawLongBits((Double) v);
        for (int i = 0; i < 8; i++) {
          w.u8((int) (b >>> (8 * i)));
        }
        return;
      }
      case BYTES: {
        byte[] b = (byte[]) v;
        zigzag(w, b.length);
        w.bytes(b);
        return;
      }
      case STRING: {
        byte[] b = ((String) v).getBytes(StandardCharsets.UTF_8);
        zigzag(w, b.length);
        w.bytes(b);
        return;
      }
      case RECORD: {
        @SuppressWarnings("unchecked")
        Map<String, Object> rec = (Map<String, Object>) v;
        for (int i = 0; i < s.fieldNames.size(); i++) {
          write(s.types.get(i), rec.get(s.fieldNames.get(i)), w);
        }
        return;
      }
      case UNION: {
        int b = branchFor(s, v);
        zigzag(w, b);
        write(s.types.get(b), v, w);
        return;
      }
      case ARRAY: {
        List<?> items = (List<?>) v;
        if (!items.isEmpty()) {
          zigzag(w, items.size());
          for (Object it : items) {
            write(s.types.get(0), it, w);
          }
        }
        zigzag(w, 0);
        return;
      }
      case MAP: {
        Map<?, ?> m = (Map<?, ?>) v;
        if (!m.isEmpty()) {
          zigzag(w, m.size());
          for (Map.Entry<?, ?> en : m.entrySet()) {
            write(primitive("string"), en.getKey(), w);
            write(s.types.get(0), en.getValue(), w);
          }
        }
        zigzag(w, 0);
        return;
      }
      default:
        throw new IllegalStateException();
    }
  }

  /** The union branch a Java value belongs to. */
  public static int branchFor(Schema union, Object v) {
    for (int i = 0; i < union.types.size(); i++) {
      if (matches(union.types.get(i), v)) {
        return i;
      }
    }
    throw new IllegalArgumentException("value " + v + " fits no branch of the Avro union");
  }

  static boolean matches(Schema s, Object v) {
    switch (s.kind) {
      case NULL: return v == null;
      case BOOLEAN: return v instanceof Boolean;
      case INT: return v instanceof Integer;
      case LONG: return v instanceof Long;
      case FLOAT: return v instanceof Float;
      case DOUBLE: return v instanceof Double;
      case BYTES: return v instanceof byte[];
      case STRING: return v instanceof String;
      case RECORD: return v instanceof Map;
      case ARRAY: return v instanceof List;
      case MAP: return v instanceof Map;
      default: return false;
    }
  }

  public static Object read(Schema s, ByteReader r) {
    switch (s.kind) {
      case NULL: return null;
      case BOOLEAN: {
        int b = r.u8("avro boolean");
        if (b > 1) {
          throw new ByteReader.DecodeException("avro boolean byte " + b);
        }
        return b == 1;
      }
      case INT: return (int) unzigzag(r, "avro int");
      case LONG: return unzigzag(r, "avro long");
      case FLOAT: {
        int b = 0;
        for (int i = 0; i < 4; i++) {
          b |= r.u8("avro float") << (8 * i);
        }
        return Float.intBitsToFloat(b);
      }
      case DOUBLE: {
        long b = 0;
        for (int i = 0; i < 8; i++) {
          b |= (long) r.u8("avro double") << (8 * i);
        }
        return Double.longBitsToDouble(b);
      }
      case BYTES: return r.bytes(avroLen(r), "avro bytes");
      case STRING: return new String(r.bytes(avroLen(r), "avro string"), StandardCharsets.UTF_8);
      case RECORD: {
        Map<String, Object> rec = new LinkedHashMap<>();
        for (int i = 0; i < s.fieldNames.size(); i++) {
          rec.put(s.fieldNames.get(i), read(s.types.get(i), r));
        }
        return rec;
      }
      case UNION: {
        long b = unzigzag(r, "avro union index");
        if (b < 0 || b >= s.types.size()) {
          throw new ByteReader.DecodeException("avro union index " + b + " out of range");
        }
        return read(s.types.get((int) b), r);
      }
      case ARRAY: {
        List<Object> out = new ArrayList<>();
        for (long n = blockCount(r); n != 0; n = blockCount(r)) {
          for (long i = 0; i < n; i++) {
            out.add(read(s.types.get(0), r));
          }
        }
        return out;
      }
      case MAP: {
        Map<String, Object> out = new LinkedHashMap<>();
        for (long n = blockCount(r); n != 0; n = blockCount(r)) {
          for (long i = 0; i < n; i++) {
            String k = (String) read(primitive("string"), r);
            out.put(k, read(s.types.get(0), r));
          }
        }
        return out;
      }
      default:
        throw new IllegalStateException();
    }
  }

  private static long blockCount(ByteReader r) {
    long n = unzigzag(r, "avro block count");
    if (n < 0) {
      unzigzag(r, "avro block size");
      n = -n;
    }
    return n;
  }

  private static int avroLen(ByteReader r) {
    long n = unzigzag(r, "avro length");
    if (n < 0 || n > r.remaining()) {
      throw new ByteReader.DecodeException("avro length " + n + " out of range");
    }
    return (int) n;
  }
}
