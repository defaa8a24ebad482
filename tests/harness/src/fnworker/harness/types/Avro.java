// The harness's own AVRO codec: schema parsing (gson) and the bytes Flink's
// AvroSerializer writes for a GenericRecord field (through its
// DataOutputEncoder), which is not Avro binary. There is no length prefix
// around the value and no zigzag varint anywhere:
//   null: nothing; boolean: 1 byte; int: 4 bytes big-endian; long: 8 bytes;
//   float/double: IEEE 754 big-endian; enum and union: the index as a 4-byte
//   int; bytes and string: 4-byte length, then the bytes; fixed: raw bytes;
//   record: the fields in order; array and map: the item count as an unsigned
//   base-128 varint (low 7 bits first), the items (map: string key, value),
//   then a single 0 byte; an empty one is just the 0. Readers accept several
//   counted blocks before the 0.
// Values: LinkedHashMap<String,Object> for records, List for arrays, Map for
// maps, EnumSymbol for enums, byte[] for bytes and fixed. Named types can be
// referenced by name (also recursively); a full name defined twice is refused.
package fnworker.harness.types;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Avro {
  private Avro() {}

  /** Most zero-width items (null, empty record) one block may claim when reading. */
  static final long MAX_EMPTY_ITEMS = 1L << 20;

  public enum Kind { NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, RECORD, ENUM, FIXED, UNION, ARRAY, MAP }

  public static final class Schema {
    public final Kind kind;
    public final String name;                 // RECORD, ENUM, FIXED: the full name
    public final List<String> fieldNames;     // RECORD
    public final List<Schema> types;          // RECORD fields, UNION branches, ARRAY/MAP item
    public final List<String> symbols;        // ENUM
    public final int size;                    // FIXED

    Schema(Kind kind, String name, List<String> fieldNames, List<Schema> types, List<String> symbols, int size) {
      this.kind = kind;
      this.name = name;
      this.fieldNames = fieldNames;
      this.types = types;
      this.symbols = symbols;
      this.size = size;
    }

    Schema(Kind kind, List<Schema> types) {
      this(kind, null, List.of(), types, List.of(), 0);
    }
  }

  /** An enum value. */
  public static final class EnumSymbol {
    public final String symbol;

    public EnumSymbol(String symbol) {
      this.symbol = symbol;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof EnumSymbol && ((EnumSymbol) o).symbol.equals(symbol);
    }

    @Override
    public int hashCode() {
      return symbol.hashCode();
    }

    @Override
    public String toString() {
      return symbol;
    }
  }

  public static Schema parseSchema(String json) {
    try {
      return new Parser().schema(JsonParser.parseString(json), "");
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("bad Avro schema " + json + ": " + e.getMessage(), e);
    }
  }

  /** Named types seen so far, by full name. */
  private static final class Parser {
    private final Map<String, Schema> named = new HashMap<>();

    Schema schema(JsonElement e, String ns) {
      if (e == null || e.isJsonNull()) {
        throw new IllegalArgumentException("missing schema");
      }
      if (e.isJsonArray()) {
        List<Schema> branches = new ArrayList<>();
        for (JsonElement b : e.getAsJsonArray()) {
          branches.add(schema(b, ns));
        }
        return new Schema(Kind.UNION, branches);
      }
      if (e.isJsonPrimitive()) {
        return reference(e.getAsString(), ns);
      }
      JsonObject o = e.getAsJsonObject();
      JsonElement t = o.get("type");
      if (t == null || !t.isJsonPrimitive()) {
        return schema(t, ns);
      }
      String type = t.getAsString();
      switch (type) {
        case "record":
        case "error":
          return record(o, ns);
        case "enum": {
          List<String> symbols = new ArrayList<>();
          for (JsonElement s : o.getAsJsonArray("symbols")) {
            symbols.add(s.getAsString());
          }
          return define(new Schema(Kind.ENUM, fullName(o, ns), List.of(), List.of(), symbols, 0));
        }
        case "fixed":
          return define(new Schema(Kind.FIXED, fullName(o, ns), List.of(), List.of(), List.of(),
              o.get("size").getAsInt()));
        case "array":
          return new Schema(Kind.ARRAY, List.of(schema(o.get("items"), ns)));
        case "map":
          return new Schema(Kind.MAP, List.of(schema(o.get("values"), ns)));
        default:
          return reference(type, ns);
      }
    }

    /** Registered before its fields are read, so a field may refer to it. */
    private Schema record(JsonObject o, String ns) {
      String full = fullName(o, ns);
      List<String> names = new ArrayList<>();
      List<Schema> types = new ArrayList<>();
      Schema rec = define(new Schema(Kind.RECORD, full, names, types, List.of(), 0));
      String inner = full.contains(".") ? full.substring(0, full.lastIndexOf('.')) : "";
      for (JsonElement f : o.getAsJsonArray("fields")) {
        names.add(f.getAsJsonObject().get("name").getAsString());
        types.add(schema(f.getAsJsonObject().get("type"), inner));
      }
      return rec;
    }

    private Schema define(Schema s) {
      if (named.putIfAbsent(s.name, s) != null) {
        throw new IllegalArgumentException("the name '" + s.name + "' is defined twice");
      }
      return s;
    }

    private static String fullName(JsonObject o, String ns) {
      String name = o.get("name").getAsString();
      if (name.contains(".")) {
        return name;
      }
      String space = o.has("namespace") ? o.get("namespace").getAsString() : ns;
      return space.isEmpty() ? name : space + "." + name;
    }

    private Schema reference(String t, String ns) {
      Schema p = primitive(t);
      if (p != null) {
        return p;
      }
      Schema s = named.get(!t.contains(".") && !ns.isEmpty() ? ns + "." + t : t);
      if (s == null) {
        s = named.get(t);
      }
      if (s == null) {
        throw new IllegalArgumentException("unknown Avro type '" + t + "'");
      }
      return s;
    }
  }

  private static Schema primitive(String t) {
    switch (t) {
      case "null": return new Schema(Kind.NULL, List.of());
      case "boolean": return new Schema(Kind.BOOLEAN, List.of());
      case "int": return new Schema(Kind.INT, List.of());
      case "long": return new Schema(Kind.LONG, List.of());
      case "float": return new Schema(Kind.FLOAT, List.of());
      case "double": return new Schema(Kind.DOUBLE, List.of());
      case "bytes": return new Schema(Kind.BYTES, List.of());
      case "string": return new Schema(Kind.STRING, List.of());
      default: return null;
    }
  }

  // ------------------------------------------------------------ writing

  private static void sized(ByteWriter w, byte[] b) {
    w.i32(b.length);
    w.bytes(b);
  }

  public static void write(Schema s, Object v, ByteWriter w) {
    switch (s.kind) {
      case NULL:
        if (v != null) {
          throw new IllegalArgumentException("Avro null expected, got " + v);
        }
        return;
      case BOOLEAN: w.u8(((Boolean) v) ? 1 : 0); return;
      case INT: w.i32((Integer) v); return;
      case LONG: w.i64(((Number) v).longValue()); return;
      case FLOAT: w.i32(Float.floatToRawIntBits((Float) v)); return;
      case DOUBLE: w.i64(Double.doubleToRawLongBits((Double) v)); return;
      case BYTES: sized(w, (byte[]) v); return;
      case STRING: sized(w, ((String) v).getBytes(StandardCharsets.UTF_8)); return;
      case FIXED: {
        byte[] b = (byte[]) v;
        if (b.length != s.size) {
          throw new IllegalArgumentException("Avro fixed " + s.name + " takes " + s.size + " bytes, got " + b.length);
        }
        w.bytes(b);
        return;
      }
      case ENUM: w.i32(symbolIndex(s, v)); return;
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
        w.i32(b);
        write(s.types.get(b), v, w);
        return;
      }
      case ARRAY: {
        List<?> items = (List<?>) v;
        if (!items.isEmpty()) {
          w.varint(items.size());
          for (Object it : items) {
            write(s.types.get(0), it, w);
          }
        }
        w.u8(0);
        return;
      }
      case MAP: {
        Map<?, ?> m = (Map<?, ?>) v;
        if (!m.isEmpty()) {
          w.varint(m.size());
          for (Map.Entry<?, ?> en : m.entrySet()) {
            sized(w, ((String) en.getKey()).getBytes(StandardCharsets.UTF_8));
            write(s.types.get(0), en.getValue(), w);
          }
        }
        w.u8(0);
        return;
      }
      default:
        throw new IllegalStateException();
    }
  }

  private static int symbolIndex(Schema e, Object v) {
    int i = v instanceof EnumSymbol ? e.symbols.indexOf(((EnumSymbol) v).symbol) : -1;
    if (i < 0) {
      throw new IllegalArgumentException("Avro enum " + e.name + " has no symbol " + v);
    }
    return i;
  }

  /** The union branch a Java value belongs to (the first that fits). */
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
      case FIXED: return v instanceof byte[] && ((byte[]) v).length == s.size;
      case ENUM: return v instanceof EnumSymbol && s.symbols.contains(((EnumSymbol) v).symbol);
      case STRING: return v instanceof String;
      case RECORD: return v instanceof Map;
      case ARRAY: return v instanceof List;
      case MAP: return v instanceof Map;
      default: return false;
    }
  }

  // ------------------------------------------------------------ reading

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
      case INT: return r.i32("avro int");
      case LONG: return r.i64("avro long");
      case FLOAT: return Float.intBitsToFloat(r.i32("avro float"));
      case DOUBLE: return Double.longBitsToDouble(r.i64("avro double"));
      case BYTES: return r.bytes(r.length("avro bytes"), "avro bytes");
      case STRING: return new String(r.bytes(r.length("avro string"), "avro string"), StandardCharsets.UTF_8);
      case FIXED: return r.bytes(s.size, "avro fixed " + s.name);
      case ENUM: return new EnumSymbol(s.symbols.get(index(r, s.symbols.size(), "avro enum " + s.name)));
      case RECORD: {
        Map<String, Object> rec = new LinkedHashMap<>();
        for (int i = 0; i < s.fieldNames.size(); i++) {
          rec.put(s.fieldNames.get(i), read(s.types.get(i), r));
        }
        return rec;
      }
      case UNION: return read(s.types.get(index(r, s.types.size(), "avro union")), r);
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
            String k = new String(r.bytes(r.length("avro map key"), "avro map key"), StandardCharsets.UTF_8);
            out.put(k, read(s.types.get(0), r));
          }
        }
        return out;
      }
      default:
        throw new IllegalStateException();
    }
  }

  private static int index(ByteReader r, int n, String what) {
    int i = r.i32(what + " index");
    if (i < 0 || i >= n) {
      throw new ByteReader.DecodeException(what + " index " + i + " not in [0, " + n + ") at offset "
          + (r.position() - 4));
    }
    return i;
  }

  /** An unsigned varint count; items take at least 0 bytes, so it is bounded by what is left. */
  private static long blockCount(ByteReader r) {
    int at = r.position();
    long n = r.varint("avro item count");
    if (n < 0 || n > r.remaining() + MAX_EMPTY_ITEMS) {
      throw new ByteReader.DecodeException("avro item count " + Long.toUnsignedString(n) + " at offset " + at
          + " exceeds what the " + r.remaining() + " byte(s) left can hold");
    }
    return n;
  }
}
