// JSON <-> values for the command line, type-directed:
//   ROW: object by field name (missing fields are null) or positional array;
//        a "$kind" member ("+U", "DELETE", ...) sets the row kind
//   TUPLE, LIST, *_ARRAY: arrays; PRIMITIVE_ARRAY<BYTE>, PICKLED_BYTES: base64
//   string (or an array of byte values); MAP: object (keys parsed by key type)
//   or an array of [key, value] pairs; BIG_INT, BIG_DEC: number or string;
//   FLOAT/DOUBLE: number or "NaN"/"Infinity"/"-Infinity"; CHAR: one-char
//   string; dates/times: ISO-8601 strings (SQL_DATE/LOCAL_DATE "2024-01-31",
//   SQL_TIME/LOCAL_TIME "12:30:00.5", SQL_TIMESTAMP/LOCAL_DATETIME
//   "2024-01-31T12:30:00", INSTANT "2024-01-31T12:30:00.123456789Z");
//   AVRO: object per the schema (bytes and fixed: base64 strings; enums: the
//   symbol). JSON null is null.
package fnworker.harness.types;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

public final class JsonValues {
  private JsonValues() {}

  public static Object fromJson(TypeInfo t, JsonElement e) {
    return fromJson(t, e, "value");
  }

  private static IllegalArgumentException bad(String path, TypeInfo t, JsonElement e, String why) {
    return new IllegalArgumentException(path + ": cannot read " + e + " as " + t.name + (why.isEmpty() ? "" : ": " + why));
  }

  public static Object fromJson(TypeInfo t, JsonElement e, String path) {
    if (e == null || e.isJsonNull()) {
      return null;
    }
    try {
      return convert(t, e, path);
    } catch (IllegalArgumentException ex) {
      throw ex;
    } catch (RuntimeException ex) {
      throw bad(path, t, e, ex.toString());
    }
  }

  private static Object convert(TypeInfo t, JsonElement e, String path) {
    switch (t.name) {
      case ROW: return row(t, e, path);
      case STRING: return prim(t, e, path).getAsString();
      case BYTE: return (byte) integral(t, e, path, Byte.MIN_VALUE, Byte.MAX_VALUE);
      case SHORT: return (short) integral(t, e, path, Short.MIN_VALUE, Short.MAX_VALUE);
      case INT: return (int) integral(t, e, path, Integer.MIN_VALUE, Integer.MAX_VALUE);
      case LONG: return integral(t, e, path, Long.MIN_VALUE, Long.MAX_VALUE);
      case BOOLEAN: {
        JsonPrimitive p = prim(t, e, path);
        if (!p.isBoolean()) {
          throw bad(path, t, e, "expected true or false");
        }
        return p.getAsBoolean();
      }
      case FLOAT: return (float) floating(t, e, path);
      case DOUBLE: return floating(t, e, path);
      case CHAR: {
        String s = prim(t, e, path).getAsString();
        if (s.length() != 1) {
          throw bad(path, t, e, "expected a one-character string (one UTF-16 unit)");
        }
        return s.charAt(0);
      }
      case BIG_INT: return new BigInteger(prim(t, e, path).getAsString());
      case BIG_DEC: return new BigDecimal(prim(t, e, path).getAsString());
      case SQL_DATE: case LOCAL_DATE: return LocalDate.parse(prim(t, e, path).getAsString());
      case SQL_TIME: case LOCAL_TIME: return LocalTime.parse(prim(t, e, path).getAsString());
      case SQL_TIMESTAMP: case LOCAL_DATETIME: return LocalDateTime.parse(prim(t, e, path).getAsString());
      case INSTANT: return Instant.parse(prim(t, e, path).getAsString());
      case PICKLED_BYTES: return bytes(t, e, path);
      case PRIMITIVE_ARRAY:
        if (t.element().name == TypeName.BYTE) {
          return bytes(t, e, path);
        }
        return list(t, e, path, false);
      case BASIC_ARRAY: case OBJECT_ARRAY: return list(t, e, path, true);
      case LIST: return list(t, e, path, TypeCodec.nullEncodable(t.element().name));
      case TUPLE: {
        JsonArray a = array(t, e, path);
        if (a.size() != t.children.size()) {
          throw bad(path, t, e, "expected " + t.children.size() + " values");
        }
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
          Object v = fromJson(t.children.get(i), a.get(i), path + "." + i);
          out.add(TypeCodec.nullEncodable(t.children.get(i).name) ? v : notNull(v, path + "." + i));
        }
        return out;
      }
      case MAP: return map(t, e, path);
      case AVRO: return avro(t.avroSchema, e, path);
      default:
        throw bad(path, t, e, "type not supported by the harness codec");
    }
  }

  private static Object notNull(Object v, String path) {
    if (v == null) {
      throw new IllegalArgumentException(path + ": null is not allowed here");
    }
    return v;
  }

  private static JsonPrimitive prim(TypeInfo t, JsonElement e, String path) {
    if (!e.isJsonPrimitive()) {
      throw bad(path, t, e, "expected a JSON scalar");
    }
    return e.getAsJsonPrimitive();
  }

  private static JsonArray array(TypeInfo t, JsonElement e, String path) {
    if (!e.isJsonArray()) {
      throw bad(path, t, e, "expected a JSON array");
    }
    return e.getAsJsonArray();
  }

  private static long integral(TypeInfo t, JsonElement e, String path, long min, long max) {
    JsonPrimitive p = prim(t, e, path);
    BigDecimal d;
    try {
      d = new BigDecimal(p.getAsString());
    } catch (NumberFormatException ex) {
      throw bad(path, t, e, "not a number");
    }
    BigInteger i;
    try {
      i = d.toBigIntegerExact();
    } catch (ArithmeticException ex) {
      throw bad(path, t, e, "not an integer");
    }
    if (i.compareTo(BigInteger.valueOf(min)) < 0 || i.compareTo(BigInteger.valueOf(max)) > 0) {
      throw bad(path, t, e, "out of range");
    }
    return i.longValue();
  }

  private static double floating(TypeInfo t, JsonElement e, String path) {
    String s = prim(t, e, path).getAsString();
    switch (s) {
      case "NaN": return Double.NaN;
      case "Infinity": return Double.POSITIVE_INFINITY;
      case "-Infinity": return Double.NEGATIVE_INFINITY;
      default: return Double.parseDouble(s);
    }
  }

  private static byte[] bytes(TypeInfo t, JsonElement e, String path) {
    if (e.isJsonArray()) {
      JsonArray a = e.getAsJsonArray();
      byte[] out = new byte[a.size()];
      for (int i = 0; i < out.length; i++) {
        int v = a.get(i).getAsInt();
        if (v < -128 || v > 255) {
          throw bad(path, t, e, "byte value " + v + " out of range");
        }
        out[i] = (byte) v;
      }
      return out;
    }
    return Base64.getDecoder().decode(prim(t, e, path).getAsString());
  }

  private static Row row(TypeInfo t, JsonElement e, String path) {
    int n = t.children.size();
    Object[] fields = new Object[n];
    byte kind = Row.INSERT;
    if (e.isJsonArray()) {
      JsonArray a = e.getAsJsonArray();
      if (a.size() != n) {
        throw bad(path, t, e, "expected " + n + " fields");
      }
      for (int i = 0; i < n; i++) {
        fields[i] = fromJson(t.children.get(i), a.get(i), path + "." + t.fieldNames.get(i));
      }
      return new Row(kind, fields);
    }
    if (!e.isJsonObject()) {
      throw bad(path, t, e, "expected an object or an array");
    }
    JsonObject o = e.getAsJsonObject();
    for (String k : o.keySet()) {
      if (k.equals("$kind")) {
        kind = Row.kindByName(o.get(k).getAsString());
      } else if (!t.fieldNames.contains(k)) {
        throw bad(path, t, e, "no field named '" + k + "' (fields: " + t.fieldNames + ")");
      }
    }
    for (int i = 0; i < n; i++) {
      String name = t.fieldNames.get(i);
      fields[i] = fromJson(t.children.get(i), o.get(name), path + "." + name);
    }
    return new Row(kind, fields);
  }

  private static List<Object> list(TypeInfo t, JsonElement e, String path, boolean nullsAllowed) {
    JsonArray a = array(t, e, path);
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < a.size(); i++) {
      Object v = fromJson(t.element(), a.get(i), path + "[" + i + "]");
      out.add(nullsAllowed ? v : notNull(v, path + "[" + i + "]"));
    }
    return out;
  }

  private static MapValue map(TypeInfo t, JsonElement e, String path) {
    MapValue m = new MapValue();
    TypeInfo kt = t.children.get(0);
    TypeInfo vt = t.children.get(1);
    if (e.isJsonObject()) {
      for (Map.Entry<String, JsonElement> en : e.getAsJsonObject().entrySet()) {
        Object k = notNull(fromJson(kt, new JsonPrimitive(en.getKey()), path + "{key}"), path + "{key}");
        m.put(k, fromJson(vt, en.getValue(), path + "[" + en.getKey() + "]"));
      }
      return m;
    }
    JsonArray a = array(t, e, path);
    for (int i = 0; i < a.size(); i++) {
      JsonArray pair = array(t, a.get(i), path + "[" + i + "]");
      if (pair.size() != 2) {
        throw bad(path, t, e, "map entries must be [key, value] pairs");
      }
      m.put(notNull(fromJson(kt, pair.get(0), path + "[" + i + "].key"), path + "[" + i + "].key"),
          fromJson(vt, pair.get(1), path + "[" + i + "].value"));
    }
    return m;
  }

  private static Object avro(Avro.Schema s, JsonElement e, String path) {
    if (e == null || e.isJsonNull()) {
      if (s.kind == Avro.Kind.NULL || (s.kind == Avro.Kind.UNION && hasNull(s))) {
        return null;
      }
      throw new IllegalArgumentException(path + ": null not allowed by the Avro schema");
    }
    switch (s.kind) {
      case BOOLEAN: return e.getAsBoolean();
      case INT: return e.getAsInt();
      case LONG: return e.getAsLong();
      case FLOAT: return e.getAsFloat();
      case DOUBLE: return e.getAsDouble();
      case STRING: return e.getAsString();
      case BYTES: return Base64.getDecoder().decode(e.getAsString());
      case FIXED: {
        byte[] b = Base64.getDecoder().decode(e.getAsString());
        if (b.length != s.size) {
          throw new IllegalArgumentException(path + ": Avro fixed " + s.name + " takes " + s.size + " bytes, got "
              + b.length);
        }
        return b;
      }
      case ENUM: {
        if (!s.symbols.contains(e.getAsString())) {
          throw new IllegalArgumentException(path + ": " + e + " is not a symbol of Avro enum " + s.name);
        }
        return new Avro.EnumSymbol(e.getAsString());
      }
      case RECORD: {
        Map<String, Object> rec = new LinkedHashMap<>();
        JsonObject o = e.getAsJsonObject();
        for (int i = 0; i < s.fieldNames.size(); i++) {
          rec.put(s.fieldNames.get(i), avro(s.types.get(i), o.get(s.fieldNames.get(i)), path + "." + s.fieldNames.get(i)));
        }
        return rec;
      }
      case UNION:
        for (Avro.Schema b : s.types) {
          if (b.kind == Avro.Kind.NULL) {
            continue;
          }
          try {
            return avro(b, e, path);
          } catch (RuntimeException ex) {
            // try the next branch
          }
        }
        throw new IllegalArgumentException(path + ": " + e + " fits no branch of the Avro union");
      case ARRAY: {
        List<Object> out = new ArrayList<>();
        for (JsonElement it : e.getAsJsonArray()) {
          out.add(avro(s.types.get(0), it, path + "[]"));
        }
        return out;
      }
      case MAP: {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonElement> en : e.getAsJsonObject().entrySet()) {
          out.put(en.getKey(), avro(s.types.get(0), en.getValue(), path + "[" + en.getKey() + "]"));
        }
        return out;
      }
      default:
        throw new IllegalArgumentException(path + ": unexpected " + e + " for Avro null");
    }
  }

  private static boolean hasNull(Avro.Schema union) {
    for (Avro.Schema b : union.types) {
      if (b.kind == Avro.Kind.NULL) {
        return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------ to JSON

  public static JsonElement toJson(TypeInfo t, Object v) {
    if (v == null) {
      return JsonNull.INSTANCE;
    }
    switch (t.name) {
      case ROW: {
        Row r = (Row) v;
        JsonObject o = new JsonObject();
        if (r.kind != Row.INSERT) {
          o.addProperty("$kind", Row.kindName(r.kind));
        }
        for (int i = 0; i < r.arity(); i++) {
          o.add(t.fieldNames.get(i), toJson(t.children.get(i), r.get(i)));
        }
        return o;
      }
      case STRING: return new JsonPrimitive((String) v);
      case BYTE: case SHORT: case INT: case LONG: return new JsonPrimitive((Number) v);
      case BOOLEAN: return new JsonPrimitive((Boolean) v);
      case FLOAT: case DOUBLE: {
        double d = ((Number) v).doubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d)) {
          return new JsonPrimitive(Double.toString(d));
        }
        return new JsonPrimitive((Number) v);
      }
      case CHAR: return new JsonPrimitive(String.valueOf((char) (Character) v));
      case BIG_INT: return new JsonPrimitive(v.toString());
      case BIG_DEC: return new JsonPrimitive(v.toString());
      case SQL_DATE: case LOCAL_DATE: case SQL_TIME: case LOCAL_TIME: case SQL_TIMESTAMP:
      case LOCAL_DATETIME: case INSTANT:
        return new JsonPrimitive(v.toString());
      case PICKLED_BYTES: return new JsonPrimitive(Base64.getEncoder().encodeToString((byte[]) v));
      case PRIMITIVE_ARRAY:
        if (t.element().name == TypeName.BYTE) {
          return new JsonPrimitive(Base64.getEncoder().encodeToString((byte[]) v));
        }
        return jsonList(t.element(), (List<?>) v);
      case BASIC_ARRAY: case OBJECT_ARRAY: case LIST: return jsonList(t.element(), (List<?>) v);
      case TUPLE: {
        JsonArray a = new JsonArray();
        List<?> l = (List<?>) v;
        for (int i = 0; i < l.size(); i++) {
          a.add(toJson(t.children.get(i), l.get(i)));
        }
        return a;
      }
      case MAP: {
        MapValue m = (MapValue) v;
        TypeInfo kt = t.children.get(0);
        Set<String> seen = new HashSet<>();
        boolean asObject = kt.name == TypeName.STRING;
        for (int i = 0; asObject && i < m.size(); i++) {
          asObject = seen.add((String) m.keys.get(i));
        }
        if (asObject) {
          JsonObject o = new JsonObject();
          for (int i = 0; i < m.size(); i++) {
            o.add((String) m.keys.get(i), toJson(t.children.get(1), m.values.get(i)));
          }
          return o;
        }
        JsonArray a = new JsonArray();
        for (int i = 0; i < m.size(); i++) {
          JsonArray pair = new JsonArray();
          pair.add(toJson(kt, m.keys.get(i)));
          pair.add(toJson(t.children.get(1), m.values.get(i)));
          a.add(pair);
        }
        return a;
      }
      case AVRO: return avroJson(v);
      default:
        throw new IllegalArgumentException("no JSON form for " + t.name);
    }
  }

  private static JsonArray jsonList(TypeInfo el, List<?> l) {
    JsonArray a = new JsonArray();
    for (Object o : l) {
      a.add(toJson(el, o));
    }
    return a;
  }

  private static JsonElement avroJson(Object v) {
    if (v == null) {
      return JsonNull.INSTANCE;
    }
    if (v instanceof Map) {
      JsonObject o = new JsonObject();
      for (Map.Entry<?, ?> en : ((Map<?, ?>) v).entrySet()) {
        o.add(String.valueOf(en.getKey()), avroJson(en.getValue()));
      }
      return o;
    }
    if (v instanceof List) {
      JsonArray a = new JsonArray();
      for (Object o : (List<?>) v) {
        a.add(avroJson(o));
      }
      return a;
    }
    if (v instanceof byte[]) {
      return new JsonPrimitive(Base64.getEncoder().encodeToString((byte[]) v));
    }
    if (v instanceof Boolean) {
      return new JsonPrimitive((Boolean) v);
    }
    if (v instanceof Number) {
      return new JsonPrimitive((Number) v);
    }
    return new JsonPrimitive(v.toString());
  }
}
