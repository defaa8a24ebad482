// A Flink Row value: a RowKind plus positional fields (null allowed).
package fnworker.harness.types;

import java.util.Arrays;

public final class Row {
  public static final byte INSERT = 0;
  public static final byte UPDATE_BEFORE = 1;
  public static final byte UPDATE_AFTER = 2;
  public static final byte DELETE = 3;
  private static final String[] KIND_NAMES = {"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"};

  public final byte kind;
  public final Object[] fields;

  public Row(byte kind, Object... fields) {
    if (kind < 0 || kind > 3) {
      throw new IllegalArgumentException("row kind must be 0..3, got " + kind);
    }
    this.kind = kind;
    this.fields = fields;
  }

  public static Row of(Object... fields) {
    return new Row(INSERT, fields);
  }

  public Object get(int i) {
    return fields[i];
  }

  public int arity() {
    return fields.length;
  }

  public static String kindName(byte kind) {
    return KIND_NAMES[kind];
  }

  public static byte kindByName(String name) {
    switch (name.toUpperCase()) {
      case "INSERT": case "+I": return INSERT;
      case "UPDATE_BEFORE": case "-U": return UPDATE_BEFORE;
      case "UPDATE_AFTER": case "+U": return UPDATE_AFTER;
      case "DELETE": case "-D": return DELETE;
      default: throw new IllegalArgumentException("unknown row kind " + name);
    }
  }

  @Override
  public String toString() {
    return (kind == INSERT ? "" : kindName(kind)) + "Row" + Arrays.deepToString(fields);
  }
}
