// Protobuf wire bytes written by hand, for scenarios that send what Java
// protobuf would not build or parse: TypeInfo nested thousands of levels
// deep (Java protobuf refuses to parse past 100 levels, and its builders
// recurse once per level). Field numbers are flink-fn-execution.proto's.
package fnworker.harness;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

public final class WireBytes {
  private WireBytes() {}

  static final int TYPE_NAME_INT = 5;
  static final int TYPE_NAME_LONG = 6;
  static final int TYPE_NAME_LIST = 18;

  static int varintSize(long v) {
    int n = 1;
    while ((v >>>= 7) != 0) {
      n++;
    }
    return n;
  }

  static void varint(ByteArrayOutputStream out, long v) {
    while ((v & ~0x7fL) != 0) {
      out.write((int) (v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write((int) v);
  }

  /** Field number n, length-delimited, holding the parts one after another. */
  public static byte[] field(int n, byte[]... parts) {
    int len = 0;
    for (byte[] p : parts) {
      len += p.length;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(len + 16);
    varint(out, (long) n << 3 | 2);
    varint(out, len);
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** Field number n as a varint. */
  public static byte[] varintField(int n, long v) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(16);
    varint(out, (long) n << 3);
    varint(out, v);
    return out.toByteArray();
  }

  /** TypeInfo LIST<LIST<...<INT>>> of `levels` TypeInfo messages, written front to back in one pass. */
  public static byte[] deepListTypeInfo(int levels) {
    long[] size = new long[levels];   // size[k]: bytes of the TypeInfo k levels from the bottom
    size[0] = 2;                      // type_name INT
    for (int k = 1; k < levels; k++) {
      size[k] = 2 + 1 + varintSize(size[k - 1]) + size[k - 1];
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) size[levels - 1]);
    for (int k = levels - 1; k > 0; k--) {
      out.write(1 << 3);
      out.write(TYPE_NAME_LIST);
      out.write(2 << 3 | 2);          // collection_element_type
      varint(out, size[k - 1]);
    }
    out.write(1 << 3);
    out.write(TYPE_NAME_INT);
    return out.toByteArray();
  }

  /** RowTypeInfo.Field { field_name, field_type }. */
  static byte[] rowField(String name, byte[] typeInfo) {
    return concat(field(1, name.getBytes(StandardCharsets.UTF_8)), field(2, typeInfo));
  }

  /** CoderInfoDescriptor { raw_type { ROW(ts LONG, wm LONG, data) }, mode MULTIPLE }: the runner's input coder. */
  public static byte[] runnerInputCoder(byte[] dataTypeInfo) {
    byte[] longType = varintField(1, TYPE_NAME_LONG);
    byte[] rowTypeInfo = concat(field(1, rowField("ts", longType)), field(1, rowField("wm", longType)),
        field(1, rowField("data", dataTypeInfo)));
    byte[] row = field(3, rowTypeInfo);  // type_name ROW is 0: not written
    return concat(field(5, field(1, row)), varintField(6, 1));
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }
}
