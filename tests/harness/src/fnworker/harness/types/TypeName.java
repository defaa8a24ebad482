// The DataStream type names of Flink's TypeInfo proto, with their enum numbers
// (flink-fn-execution.proto TypeInfo.TypeName). Owned here so the codec and
// the text form work without the generated protos.
package fnworker.harness.types;

public enum TypeName {
  ROW(0), STRING(1), BYTE(2), BOOLEAN(3), SHORT(4), INT(5), LONG(6), FLOAT(7), DOUBLE(8),
  CHAR(9), BIG_INT(10), BIG_DEC(11), SQL_DATE(12), SQL_TIME(13), SQL_TIMESTAMP(14),
  BASIC_ARRAY(15), PRIMITIVE_ARRAY(16), TUPLE(17), LIST(18), MAP(19), PICKLED_BYTES(20),
  OBJECT_ARRAY(21), INSTANT(22), AVRO(23), LOCAL_DATE(24), LOCAL_TIME(25), LOCAL_DATETIME(26),
  LOCAL_ZONED_TIMESTAMP(27);

  public final int number;

  TypeName(int number) {
    this.number = number;
  }

  /** Types without type parameters. */
  public boolean isAtomic() {
    switch (this) {
      case ROW: case BASIC_ARRAY: case PRIMITIVE_ARRAY: case TUPLE: case LIST: case MAP:
      case OBJECT_ARRAY: case AVRO:
        return false;
      default:
        return true;
    }
  }

  /** Element types a PRIMITIVE_ARRAY may have (Java primitive arrays). */
  public boolean isPrimitiveArrayElement() {
    switch (this) {
      case BOOLEAN: case BYTE: case SHORT: case INT: case LONG: case FLOAT: case DOUBLE: case CHAR:
        return true;
      default:
        return false;
    }
  }

  public static TypeName byNumber(int n) {
    for (TypeName t : values()) {
      if (t.number == n) {
        return t;
      }
    }
    throw new IllegalArgumentException("unknown TypeInfo.TypeName number " + n);
  }
}
