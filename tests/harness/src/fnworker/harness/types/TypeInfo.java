// A DataStream type as the harness sees it: the model behind Flink's TypeInfo
// proto, parsed from (and printed as) a compact text form such as
//   ROW<id:LONG,tags:LIST<STRING>,m:MAP<STRING,INT>,t:TUPLE<INT,DOUBLE>,
//       raw:PRIMITIVE_ARRAY<BYTE>,objs:OBJECT_ARRAY<ROW<a:INT>>>
// and AVRO<{"type":"record",...}>. Unnamed ROW fields get the names f0, f1, ...
package fnworker.harness.types;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

public final class TypeInfo {
  public final TypeName name;
  /** ROW: field names (same length as children). Empty otherwise. */
  public final List<String> fieldNames;
  /**
   * ROW/TUPLE: field types; LIST/BASIC_ARRAY/PRIMITIVE_ARRAY/OBJECT_ARRAY: the element;
   * MAP: key, value. Empty for atomic types and AVRO.
   */
  public final List<TypeInfo> children;
  /** AVRO: the schema JSON text, else null. */
  public final String avroSchemaJson;
  /** AVRO: the parsed schema, else null. */
  public final Avro.Schema avroSchema;

  private TypeInfo(TypeName name, List<String> fieldNames, List<TypeInfo> children, String avroJson) {
    this.name = name;
    this.fieldNames = Collections.unmodifiableList(new ArrayList<>(fieldNames));
    this.children = Collections.unmodifiableList(new ArrayList<>(children));
    this.avroSchemaJson = avroJson;
    this.avroSchema = avroJson == null ? null : Avro.parseSchema(avroJson);
    validate();
  }

  // ------------------------------------------------------------ factories

  public static TypeInfo atomic(TypeName n) {
    if (!n.isAtomic()) {
      throw new IllegalArgumentException(n + " needs type parameters");
    }
    return new TypeInfo(n, List.of(), List.of(), null);
  }

  public static TypeInfo row(List<String> names, List<TypeInfo> types) {
    return new TypeInfo(TypeName.ROW, names, types, null);
  }

  /** ROW with fields f0..fn-1. */
  public static TypeInfo row(TypeInfo... types) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < types.length; i++) {
      names.add("f" + i);
    }
    return row(names, List.of(types));
  }

  public static TypeInfo tuple(TypeInfo... types) {
    return new TypeInfo(TypeName.TUPLE, List.of(), List.of(types), null);
  }

  public static TypeInfo container(TypeName n, TypeInfo element) {
    return new TypeInfo(n, List.of(), List.of(element), null);
  }

  public static TypeInfo map(TypeInfo key, TypeInfo value) {
    return new TypeInfo(TypeName.MAP, List.of(), List.of(key, value), null);
  }

  public static TypeInfo avro(String schemaJson) {
    return new TypeInfo(TypeName.AVRO, List.of(), List.of(), schemaJson);
  }

  /** The runner input row Flink sends: ROW(LONG timestamp, LONG watermark, data). */
  public static TypeInfo runnerInput(TypeInfo data) {
    return row(List.of("ts", "wm", "data"), List.of(atomic(TypeName.LONG), atomic(TypeName.LONG), data));
  }

  /** The runner output row the worker sends back: ROW(LONG timestamp, data). */
  public static TypeInfo runnerOutput(TypeInfo data) {
    return row(List.of("ts", "data"), List.of(atomic(TypeName.LONG), data));
  }

  public TypeInfo element() {
    return children.get(0);
  }

  private void validate() {
    switch (name) {
      case ROW:
        if (fieldNames.size() != children.size()) {
          throw new IllegalArgumentException("ROW field names and types differ in count");
        }
        break;
      case TUPLE:
        break;
      case LIST: case BASIC_ARRAY: case OBJECT_ARRAY:
        need(1);
        break;
      case PRIMITIVE_ARRAY:
        need(1);
        if (!element().name.isPrimitiveArrayElement()) {
          throw new IllegalArgumentException("PRIMITIVE_ARRAY element must be one of BOOLEAN, BYTE, "
              + "SHORT, INT, LONG, FLOAT, DOUBLE, CHAR, not " + element());
        }
        break;
      case MAP:
        need(2);
        break;
      case AVRO:
        if (avroSchemaJson == null) {
          throw new IllegalArgumentException("AVRO needs a schema");
        }
        break;
      default:
        need(0);
    }
  }

  private void need(int n) {
    if (children.size() != n) {
      throw new IllegalArgumentException(name + " takes " + n + " type parameter(s), got " + children.size());
    }
  }

  // ------------------------------------------------------------ text form

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    print(sb);
    return sb.toString();
  }

  private void print(StringBuilder sb) {
    sb.append(name);
    if (name == TypeName.AVRO) {
      sb.append('<').append(avroSchemaJson).append('>');
      return;
    }
    if (name.isAtomic()) {
      return;
    }
    sb.append('<');
    for (int i = 0; i < children.size(); i++) {
      if (i > 0) {
        sb.append(',');
      }
      if (name == TypeName.ROW) {
        sb.append(fieldNames.get(i)).append(':');
      }
      children.get(i).print(sb);
    }
    sb.append('>');
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TypeInfo && o.toString().equals(toString());
  }

  @Override
  public int hashCode() {
    return toString().hashCode();
  }

  public static TypeInfo parse(String text) {
    Parser p = new Parser(text);
    TypeInfo t = p.type();
    p.skipWs();
    if (p.pos != text.length()) {
      throw p.error("unexpected text after the type");
    }
    return t;
  }

  private static final class Parser {
    final String s;
    int pos;

    Parser(String s) {
      this.s = s;
    }

    IllegalArgumentException error(String msg) {
      return new IllegalArgumentException("bad type '" + s + "' at offset " + pos + ": " + msg);
    }

    void skipWs() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
    }

    boolean peek(char c) {
      skipWs();
      return pos < s.length() && s.charAt(pos) == c;
    }

    void expect(char c) {
      if (!peek(c)) {
        throw error("expected '" + c + "'");
      }
      pos++;
    }

    String ident() {
      skipWs();
      int start = pos;
      while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_'
          || s.charAt(pos) == '$')) {
        pos++;
      }
      if (start == pos) {
        throw error("expected a name");
      }
      return s.substring(start, pos);
    }

    TypeInfo type() {
      String word = ident().toUpperCase();
      TypeName n = alias(word);
      if (n == TypeName.AVRO) {
        expect('<');
        return avro(avroJson());
      }
      if (n.isAtomic()) {
        return atomic(n);
      }
      expect('<');
      List<String> names = new ArrayList<>();
      List<TypeInfo> types = new ArrayList<>();
      if (!peek('>')) {
        do {
          if (n == TypeName.ROW) {
            names.add(fieldName(types.size()));
          }
          types.add(type());
        } while (consume(','));
      }
      expect('>');
      switch (n) {
        case ROW:
          return row(names, types);
        case TUPLE:
          return new TypeInfo(TypeName.TUPLE, List.of(), types, null);
        default:
          return new TypeInfo(n, List.of(), types, null);
      }
    }

    boolean consume(char c) {
      if (peek(c)) {
        pos++;
        return true;
      }
      return false;
    }

    /** `name:` if present (a name followed by ':'), else f<index>. */
    String fieldName(int index) {
      skipWs();
      int save = pos;
      if (peek('`')) {
        pos++;
        int end = s.indexOf('`', pos);
        if (end < 0) {
          throw error("unterminated `field name`");
        }
        String name = s.substring(pos, end);
        pos = end + 1;
        expect(':');
        return name;
      }
      try {
        String name = ident();
        if (consume(':')) {
          return name;
        }
      } catch (IllegalArgumentException e) {
        // not a name: fall through
      }
      pos = save;
      return "f" + index;
    }

    /** The JSON text up to the matching '>' (skipping JSON strings and nesting). */
    String avroJson() {
      skipWs();
      int start = pos;
      int depth = 0;
      boolean inString = false;
      for (; pos < s.length(); pos++) {
        char c = s.charAt(pos);
        if (inString) {
          if (c == '\\') {
            pos++;
          } else if (c == '"') {
            inString = false;
          }
          continue;
        }
        if (c == '"') {
          inString = true;
        } else if (c == '{' || c == '[') {
          depth++;
        } else if (c == '}' || c == ']') {
          depth--;
        } else if (c == '>' && depth == 0) {
          String json = s.substring(start, pos).trim();
          pos++;
          return json;
        }
      }
      throw error("unterminated AVRO<schema>");
    }

    TypeName alias(String w) {
      switch (w) {
        case "BOOL": return TypeName.BOOLEAN;
        case "INTEGER": return TypeName.INT;
        case "DECIMAL": case "BIGDECIMAL": return TypeName.BIG_DEC;
        case "PICKLED_BYTE_ARRAY": return TypeName.PICKLED_BYTES;
        default:
          try {
            return TypeName.valueOf(w);
          } catch (IllegalArgumentException e) {
            throw error("unknown type name " + w);
          }
      }
    }
  }
}
