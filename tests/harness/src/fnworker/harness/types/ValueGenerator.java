// Deterministic pseudo-random values of any TypeInfo for tests, the demo and
// --generate: edge values (empty strings and containers, extremes, non-ASCII
// text, nulls wherever the format allows them) mixed with ordinary ones.
package fnworker.harness.types;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public final class ValueGenerator {
  private final Random rnd;
  private final double nullRate;
  private final int maxLen;

  private static final String[] WORDS = {"", "a", "ab", "hello world", "é", "日本語", "emoji 😀", "tab\tnew\nline",
      "quote\"back\\slash", "\u0000nul"};

  public ValueGenerator(long seed, double nullRate, int maxLen) {
    this.rnd = new Random(seed);
    this.nullRate = nullRate;
    this.maxLen = maxLen;
  }

  public ValueGenerator(long seed) {
    this(seed, 0.15, 4);
  }

  /** A value where null is allowed when {@code nullable} (ROW fields, array elements, MAP values). */
  public Object value(TypeInfo t, boolean nullable) {
    if ((nullable || TypeCodec.nullEncodable(t.name)) && rnd.nextDouble() < nullRate) {
      return null;
    }
    return nonNull(t);
  }

  private int len() {
    int r = rnd.nextInt(10);
    return r < 2 ? 0 : 1 + rnd.nextInt(Math.max(1, maxLen));
  }

  private <T> T pick(T[] a) {
    return a[rnd.nextInt(a.length)];
  }

  public Object nonNull(TypeInfo t) {
    switch (t.name) {
      case ROW: {
        Object[] f = new Object[t.children.size()];
        for (int i = 0; i < f.length; i++) {
          f[i] = value(t.children.get(i), true);
        }
        byte kind = rnd.nextInt(8) == 0 ? (byte) rnd.nextInt(4) : Row.INSERT;
        return new Row(kind, f);
      }
      case STRING: return rnd.nextInt(3) == 0 ? pick(WORDS) : "s" + rnd.nextInt(100000);
      case BYTE: return pick(new Byte[]{Byte.MIN_VALUE, -1, 0, 1, Byte.MAX_VALUE, (byte) rnd.nextInt()});
      case BOOLEAN: return rnd.nextBoolean();
      case SHORT: return pick(new Short[]{Short.MIN_VALUE, 0, Short.MAX_VALUE, (short) rnd.nextInt()});
      case INT: return pick(new Integer[]{Integer.MIN_VALUE, -1, 0, Integer.MAX_VALUE, rnd.nextInt(), rnd.nextInt(1000)});
      case LONG: return pick(new Long[]{Long.MIN_VALUE, 0L, Long.MAX_VALUE, rnd.nextLong(), (long) rnd.nextInt(1000)});
      case FLOAT: return pick(new Float[]{0f, -0f, 1.5f, Float.NaN, Float.NEGATIVE_INFINITY, Float.MAX_VALUE,
          Float.MIN_VALUE, rnd.nextFloat() * 1000});
      case DOUBLE: return pick(new Double[]{0d, -0d, Math.PI, Double.NaN, Double.POSITIVE_INFINITY, -Double.MAX_VALUE,
          Double.MIN_VALUE, rnd.nextGaussian() * 1e6});
      case CHAR: return pick(new Character[]{'a', 'Z', '\u00e9', '\u65e5', '\u0000', '\uffff', (char) (32 + rnd.nextInt(90))});
      case BIG_INT: return pick(new BigInteger[]{BigInteger.ZERO, BigInteger.ONE, BigInteger.TEN, BigInteger.valueOf(-1),
          BigInteger.valueOf(255), BigInteger.valueOf(-129), new BigInteger("123456789012345678901234567890"),
          new BigInteger(70, rnd).negate(), BigInteger.valueOf(rnd.nextLong())});
      case BIG_DEC: return pick(new BigDecimal[]{BigDecimal.ZERO, new BigDecimal("-1.50"), new BigDecimal("1E+3"),
          new BigDecimal("3.14159265358979323846264338327950288"), new BigDecimal("0.000001"),
          BigDecimal.valueOf(rnd.nextInt(100000), 2)});
      case SQL_DATE: case LOCAL_DATE: return LocalDate.ofEpochDay(rnd.nextInt(80000) - 30000);
      case SQL_TIME: return LocalTime.ofNanoOfDay(rnd.nextInt(86_400_000) * 1_000_000L);
      case LOCAL_TIME: return LocalTime.ofNanoOfDay((long) (rnd.nextDouble() * 86_400e9));
      case SQL_TIMESTAMP: return LocalDateTime.of(LocalDate.ofEpochDay(rnd.nextInt(40000) - 10000),
          LocalTime.ofNanoOfDay(rnd.nextInt(86_400_000) * 1_000_000L));
      case LOCAL_DATETIME: return LocalDateTime.of(LocalDate.ofEpochDay(rnd.nextInt(40000) - 10000),
          LocalTime.ofNanoOfDay((long) (rnd.nextDouble() * 86_400e9)));
      case INSTANT: return Instant.ofEpochSecond(rnd.nextInt() * 10L, rnd.nextInt(1_000_000_000));
      case PICKLED_BYTES: return randomBytes();
      case PRIMITIVE_ARRAY: {
        if (t.element().name == TypeName.BYTE) {
          return randomBytes();
        }
        List<Object> l = new ArrayList<>();
        for (int i = len(); i > 0; i--) {
          l.add(nonNull(t.element()));
        }
        return l;
      }
      case BASIC_ARRAY: case OBJECT_ARRAY: {
        List<Object> l = new ArrayList<>();
        for (int i = len(); i > 0; i--) {
          l.add(value(t.element(), true));
        }
        return l;
      }
      case LIST: {
        List<Object> l = new ArrayList<>();
        for (int i = len(); i > 0; i--) {
          l.add(nonNull(t.element()));
        }
        return l;
      }
      case TUPLE: {
        List<Object> l = new ArrayList<>();
        for (TypeInfo c : t.children) {
          l.add(nonNull(c));
        }
        return l;
      }
      case MAP: {
        MapValue m = new MapValue();
        for (int i = len(); i > 0; i--) {
          m.put(nonNull(t.children.get(0)), value(t.children.get(1), true));
        }
        return m;
      }
      case AVRO: return avro(t.avroSchema, 0);
      default:
        throw new IllegalArgumentException("cannot generate " + t.name);
    }
  }

  private byte[] randomBytes() {
    byte[] b = new byte[len() * 3];
    rnd.nextBytes(b);
    return b;
  }

  /** Past this depth a union takes its null branch when it has one (recursive schemas end). */
  private static final int AVRO_DEEP = 6;

  private Object avro(Avro.Schema s, int depth) {
    switch (s.kind) {
      case NULL: return null;
      case BOOLEAN: return rnd.nextBoolean();
      case INT: return rnd.nextInt();
      case LONG: return rnd.nextLong();
      case FLOAT: return rnd.nextFloat();
      case DOUBLE: return rnd.nextDouble();
      case BYTES: return randomBytes();
      case FIXED: {
        byte[] b = new byte[s.size];
        rnd.nextBytes(b);
        return b;
      }
      case ENUM: return new Avro.EnumSymbol(s.symbols.get(rnd.nextInt(s.symbols.size())));
      case STRING: return pick(WORDS);
      case RECORD: {
        Map<String, Object> rec = new LinkedHashMap<>();
        for (int i = 0; i < s.fieldNames.size(); i++) {
          rec.put(s.fieldNames.get(i), avro(s.types.get(i), depth + 1));
        }
        return rec;
      }
      case UNION: {
        if (depth > AVRO_DEEP) {
          for (Avro.Schema b : s.types) {
            if (b.kind == Avro.Kind.NULL) {
              return null;
            }
          }
        }
        return avro(s.types.get(rnd.nextInt(s.types.size())), depth + 1);
      }
      case ARRAY: {
        List<Object> l = new ArrayList<>();
        for (int i = depth > AVRO_DEEP ? 0 : len(); i > 0; i--) {
          l.add(avro(s.types.get(0), depth + 1));
        }
        return l;
      }
      case MAP: {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = depth > AVRO_DEEP ? 0 : len(); i > 0; i--) {
          m.put("k" + rnd.nextInt(1000), avro(s.types.get(0), depth + 1));
        }
        return m;
      }
      default:
        throw new IllegalStateException();
    }
  }
}
