// Flink's Java serializer byte formats for DataStream types (the layouts of
// Flink's TypeSerializers, e.g. RowSerializer, StringSerializer): encode a value of a TypeInfo to bytes and decode it back. Values
// are plain Java objects: Row, String, Byte, Boolean, Short, Integer, Long,
// Float, Double, Character, BigInteger, BigDecimal, LocalDate (SQL_DATE and
// LOCAL_DATE), LocalTime (SQL_TIME, LOCAL_TIME), LocalDateTime (SQL_TIMESTAMP,
// LOCAL_DATETIME), Instant, byte[] (PRIMITIVE_ARRAY<BYTE>, PICKLED_BYTES),
// List (other arrays, LIST, TUPLE), MapValue (MAP), Map (AVRO record).
package fnworker.harness.types;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

public final class TypeCodec {
  private TypeCodec() {}

  public static final class EncodeException extends RuntimeException {
    public EncodeException(String msg) {
      super(msg);
    }
  }

  // ------------------------------------------------------------ encode

  public static byte[] encode(TypeInfo t, Object v) {
    ByteWriter w = new ByteWriter();
    encode(t, v, w);
    return w.toByteArray();
  }

  public static void encode(TypeInfo t, Object v, ByteWriter w) {
    if (v == null && !nullEncodable(t.name)) {
      throw new EncodeException("null " + t.name + " has no encoding here (only ROW fields, "
          + "BASIC_ARRAY/OBJECT_ARRAY elements and MAP values may be null)");
    }
    try {
      encodeValue(t, v, w);
    } catch (ClassCastException e) {
      throw new EncodeException("value " + v + " (" + v.getClass().getSimpleName() + ") is not a " + t);
    }
  }

  /** Types whose serializer can write null itself. */
  public static boolean nullEncodable(TypeName n) {
    return n == TypeName.BIG_INT || n == TypeName.INSTANT;
  }

  private static void encodeValue(TypeInfo t, Object v, ByteWriter w) {
    switch (t.name) {
      case ROW: encodeRow(t, (Row) v, w); return;
      case STRING: {
        byte[] b = ((String) v).getBytes(StandardCharsets.UTF_8);
        w.i32(b.length).bytes(b);
        return;
      }
      case BYTE: w.u8((Byte) v); return;
      case BOOLEAN: w.u8(((Boolean) v) ? 1 : 0); return;
      case SHORT: w.i16((Short) v); return;
      case INT: w.i32((Integer) v); return;
      case LONG: w.i64((Long) v); return;
      case FLOAT: w.i32(Float.floatToRawIntBits((Float) v)); return;
      case DOUBLE: w.i64(Double.doubleToRawLongBits((Double) v)); return;
      case CHAR: w.i16((Character) v); return;
      case BIG_INT: encodeBigInt((BigInteger) v, w); return;
      case BIG_DEC: {
        byte[] b = ((BigDecimal) v).toString().getBytes(StandardCharsets.UTF_8);
        w.i32(b.length).bytes(b);
        return;
      }
      case SQL_DATE: w.i32((int) ((LocalDate) v).toEpochDay()); return;
      case SQL_TIME: w.i32((int) (((LocalTime) v).toNanoOfDay() / 1_000_000L)); return;
      case SQL_TIMESTAMP: w.i64(((LocalDateTime) v).toInstant(ZoneOffset.UTC).toEpochMilli()); return;
      case INSTANT:
        if (v == null) {
          w.i64(Long.MIN_VALUE).i32(Integer.MIN_VALUE);
        } else {
          w.i64(((Instant) v).getEpochSecond()).i32(((Instant) v).getNano());
        }
        return;
      case LOCAL_DATE: localDate((LocalDate) v, w); return;
      case LOCAL_TIME: localTime((LocalTime) v, w); return;
      case LOCAL_DATETIME:
        localDate(((LocalDateTime) v).toLocalDate(), w);
        localTime(((LocalDateTime) v).toLocalTime(), w);
        return;
      case PRIMITIVE_ARRAY:
        if (t.element().name == TypeName.BYTE) {
          byte[] b = (byte[]) v;
          w.i32(b.length).bytes(b);
        } else {
          List<?> l = (List<?>) v;
          w.i32(l.size());
          for (int i = 0; i < l.size(); i++) {
            if (l.get(i) == null) {
              throw new EncodeException("PRIMITIVE_ARRAY element " + i + " is null");
            }
            encodeValue(t.element(), l.get(i), w);
          }
        }
        return;
      case BASIC_ARRAY: case OBJECT_ARRAY: {
        List<?> l = (List<?>) v;
        w.i32(l.size());
        for (Object e : l) {
          if (e == null) {
            w.u8(0);
          } else {
            w.u8(1);
            encode(t.element(), e, w);
          }
        }
        return;
      }
      case LIST: {
        List<?> l = (List<?>) v;
        w.i32(l.size());
        for (Object e : l) {
          encode(t.element(), e, w);  // null only where the element type encodes it
        }
        return;
      }
      case MAP: {
        MapValue m = (MapValue) v;
        w.i32(m.size());
        for (int i = 0; i < m.size(); i++) {
          encode(t.children.get(0), m.keys.get(i), w);
          Object val = m.values.get(i);
          if (val == null) {
            w.u8(1);
          } else {
            w.u8(0);
            encode(t.children.get(1), val, w);
          }
        }
        return;
      }
      case TUPLE: {
        List<?> l = (List<?>) v;
        if (l.size() != t.children.size()) {
          throw new EncodeException("TUPLE of " + t.children.size() + " fields got " + l.size() + " values");
        }
        for (int i = 0; i < l.size(); i++) {
          encode(t.children.get(i), l.get(i), w);  // tuples have no null mask
        }
        return;
      }
      case PICKLED_BYTES: {
        byte[] b = (byte[]) v;
        w.i32(b.length).bytes(b);
        return;
      }
      case AVRO: Avro.write(t.avroSchema, v, w); return;
      default:
        throw new EncodeException("no codec for " + t.name);
    }
  }

  private static void encodeRow(TypeInfo t, Row r, ByteWriter w) {
    int n = t.children.size();
    if (r.arity() != n) {
      throw new EncodeException("ROW of " + n + " fields got " + r.arity() + " values");
    }
    byte[] mask = new byte[(n + 2 + 7) / 8];
    if ((r.kind & 1) != 0) {
      mask[0] |= (byte) 0x80;
    }
    if ((r.kind & 2) != 0) {
      mask[0] |= 0x40;
    }
    for (int i = 0; i < n; i++) {
      if (r.get(i) == null) {
        mask[(i + 2) / 8] |= (byte) (0x80 >>> ((i + 2) % 8));
      }
    }
    w.bytes(mask);
    for (int i = 0; i < n; i++) {
      if (r.get(i) != null) {
        encode(t.children.get(i), r.get(i), w);
      }
    }
  }

  private static void encodeBigInt(BigInteger v, ByteWriter w) {
    if (v == null) {
      w.i32(0);
    } else if (v.equals(BigInteger.ZERO)) {
      w.i32(1);
    } else if (v.equals(BigInteger.ONE)) {
      w.i32(2);
    } else if (v.equals(BigInteger.TEN)) {
      w.i32(3);
    } else {
      byte[] b = v.toByteArray();
      w.i32(b.length + 4).bytes(b);
    }
  }

  private static void localDate(LocalDate d, ByteWriter w) {
    w.i32(d.getYear()).u8(d.getMonthValue()).u8(d.getDayOfMonth());
  }

  private static void localTime(LocalTime t, ByteWriter w) {
    w.u8(t.getHour()).u8(t.getMinute()).u8(t.getSecond()).i32(t.getNano());
  }

  // ------------------------------------------------------------ decode

  public static Object decode(TypeInfo t, byte[] b) {
    ByteReader r = new ByteReader(b);
    Object v = decode(t, r);
    if (r.remaining() != 0) {
      throw new ByteReader.DecodeException(r.remaining() + " trailing byte(s) after a " + t.name
          + " at offset " + r.position());
    }
    return v;
  }

  public static Object decode(TypeInfo t, ByteReader r) {
    switch (t.name) {
      case ROW: return decodeRow(t, r);
      case STRING: return utf8(r.bytes(r.length("STRING"), "STRING"));
      case BYTE: return r.i8("BYTE");
      case BOOLEAN: {
        int b = r.u8("BOOLEAN");
        if (b > 1) {
          throw new ByteReader.DecodeException("BOOLEAN byte " + b + " is neither 0 nor 1");
        }
        return b == 1;
      }
      case SHORT: return r.i16("SHORT");
      case INT: return r.i32("INT");
      case LONG: return r.i64("LONG");
      case FLOAT: return Float.intBitsToFloat(r.i32("FLOAT"));
      case DOUBLE: return Double.longBitsToDouble(r.i64("DOUBLE"));
      case CHAR: return (char) r.i16("CHAR");
      case BIG_INT: {
        int l = r.i32("BIG_INT length");
        switch (l) {
          case 0: return null;
          case 1: return BigInteger.ZERO;
          case 2: return BigInteger.ONE;
          case 3: return BigInteger.TEN;
          default:
            if (l < 4 || l - 4 > r.remaining()) {
              throw new ByteReader.DecodeException("bad BIG_INT length " + l);
            }
            if (l == 4) {
              throw new ByteReader.DecodeException("BIG_INT with zero magnitude bytes");
            }
            return new BigInteger(r.bytes(l - 4, "BIG_INT"));
        }
      }
      case BIG_DEC: {
        String s = utf8(r.bytes(r.length("BIG_DEC"), "BIG_DEC"));
        try {
          return new BigDecimal(s);
        } catch (NumberFormatException e) {
          throw new ByteReader.DecodeException("BIG_DEC text '" + s + "' is not a decimal");
        }
      }
      case SQL_DATE: return LocalDate.ofEpochDay(r.i32("SQL_DATE"));
      case SQL_TIME: {
        int ms = r.i32("SQL_TIME");
        if (ms < 0 || ms >= 86_400_000) {
          throw new ByteReader.DecodeException("SQL_TIME " + ms + " ms is outside a day");
        }
        return LocalTime.ofNanoOfDay(ms * 1_000_000L);
      }
      case SQL_TIMESTAMP:
        return LocalDateTime.ofInstant(Instant.ofEpochMilli(r.i64("SQL_TIMESTAMP")), ZoneOffset.UTC);
      case INSTANT: {
        long s = r.i64("INSTANT seconds");
        int ns = r.i32("INSTANT nanos");
        if (s == Long.MIN_VALUE && ns == Integer.MIN_VALUE) {
          return null;
        }
        return Instant.ofEpochSecond(s, ns);
      }
      case LOCAL_DATE: return readLocalDate(r);
      case LOCAL_TIME: return readLocalTime(r);
      case LOCAL_DATETIME: return LocalDateTime.of(readLocalDate(r), readLocalTime(r));
      case PRIMITIVE_ARRAY: {
        if (t.element().name == TypeName.BYTE) {
          return r.bytes(r.length("PRIMITIVE_ARRAY<BYTE>"), "PRIMITIVE_ARRAY<BYTE>");
        }
        int n = r.count("PRIMITIVE_ARRAY");
        List<Object> out = new ArrayList<>(Math.min(n, 1024));
        for (int i = 0; i < n; i++) {
          out.add(decode(t.element(), r));
        }
        return out;
      }
      case BASIC_ARRAY: case OBJECT_ARRAY: {
        int n = r.count(t.name.toString());
        List<Object> out = new ArrayList<>(Math.min(n, 1024));
        for (int i = 0; i < n; i++) {
          int flag = r.u8("array element presence");
          if (flag > 1) {
            throw new ByteReader.DecodeException("array element presence byte " + flag);
          }
          out.add(flag == 1 ? decode(t.element(), r) : null);
        }
        return out;
      }
      case LIST: {
        int n = r.count("LIST");
        List<Object> out = new ArrayList<>(Math.min(n, 1024));
        for (int i = 0; i < n; i++) {
          out.add(decode(t.element(), r));
        }
        return out;
      }
      case MAP: {
        int n = r.count("MAP");
        MapValue m = new MapValue();
        for (int i = 0; i < n; i++) {
          Object k = decode(t.children.get(0), r);
          int isNull = r.u8("MAP value null flag");
          if (isNull > 1) {
            throw new ByteReader.DecodeException("MAP value null flag " + isNull);
          }
          m.put(k, isNull == 1 ? null : decode(t.children.get(1), r));
        }
        return m;
      }
      case TUPLE: {
        List<Object> out = new ArrayList<>();
        for (TypeInfo c : t.children) {
          out.add(decode(c, r));
        }
        return out;
      }
      case PICKLED_BYTES: return r.bytes(r.length("PICKLED_BYTES"), "PICKLED_BYTES");
      case AVRO: return Avro.read(t.avroSchema, r);
      default:
        throw new ByteReader.DecodeException("no codec for " + t.name);
    }
  }

  private static Row decodeRow(TypeInfo t, ByteReader r) {
    int n = t.children.size();
    int maskLen = (n + 2 + 7) / 8;
    byte[] mask = r.bytes(maskLen, "ROW null mask");
    int usedBits = n + 2;
    int padBits = maskLen * 8 - usedBits;
    if (padBits > 0 && (mask[maskLen - 1] & ((1 << padBits) - 1)) != 0) {
      throw new ByteReader.DecodeException("ROW null mask has padding bits set: " + Hex.of(mask));
    }
    byte kind = (byte) (((mask[0] & 0x80) != 0 ? 1 : 0) | ((mask[0] & 0x40) != 0 ? 2 : 0));
    Object[] fields = new Object[n];
    for (int i = 0; i < n; i++) {
      boolean isNull = (mask[(i + 2) / 8] & (0x80 >>> ((i + 2) % 8))) != 0;
      fields[i] = isNull ? null : decode(t.children.get(i), r);
    }
    return new Row(kind, fields);
  }

  private static LocalDate readLocalDate(ByteReader r) {
    int y = r.i32("LOCAL_DATE year");
    int m = r.i8("LOCAL_DATE month");
    int d = r.i8("LOCAL_DATE day");
    try {
      return LocalDate.of(y, m, d);
    } catch (RuntimeException e) {
      throw new ByteReader.DecodeException("bad LOCAL_DATE " + y + "-" + m + "-" + d);
    }
  }

  private static LocalTime readLocalTime(ByteReader r) {
    int h = r.i8("LOCAL_TIME hour");
    int m = r.i8("LOCAL_TIME minute");
    int s = r.i8("LOCAL_TIME second");
    int ns = r.i32("LOCAL_TIME nano");
    try {
      return LocalTime.of(h, m, s, ns);
    } catch (RuntimeException e) {
      throw new ByteReader.DecodeException("bad LOCAL_TIME " + h + ":" + m + ":" + s + "." + ns);
    }
  }

  private static String utf8(byte[] b) {
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
    } catch (CharacterCodingException e) {
      throw new ByteReader.DecodeException("invalid UTF-8 in " + Hex.of(b));
    }
  }
}
