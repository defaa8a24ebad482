// A growable big-endian byte buffer (Java DataOutput conventions) plus Beam's
// unsigned LEB128 varint, used by the codec and the data plane.
package fnworker.harness.types;

import java.util.Arrays;

public final class ByteWriter {
  private byte[] buf;
  private int len;

  public ByteWriter() {
    this(64);
  }

  public ByteWriter(int capacity) {
    buf = new byte[Math.max(16, capacity)];
  }

  private void ensure(int extra) {
    if (len + extra > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + extra));
    }
  }

  public ByteWriter u8(int v) {
    ensure(1);
    buf[len++] = (byte) v;
    return this;
  }

  public ByteWriter i16(int v) {
    ensure(2);
    buf[len++] = (byte) (v >>> 8);
    buf[len++] = (byte) v;
    return this;
  }

  public ByteWriter i32(int v) {
    ensure(4);
    buf[len++] = (byte) (v >>> 24);
    buf[len++] = (byte) (v >>> 16);
    buf[len++] = (byte) (v >>> 8);
    buf[len++] = (byte) v;
    return this;
  }

  public ByteWriter i64(long v) {
    i32((int) (v >>> 32));
    return i32((int) v);
  }

  public ByteWriter bytes(byte[] b) {
    return bytes(b, 0, b.length);
  }

  public ByteWriter bytes(byte[] b, int off, int n) {
    ensure(n);
    System.arraycopy(b, off, buf, len, n);
    len += n;
    return this;
  }

  /** Beam varint: unsigned LEB128 of the 64-bit two's-complement value. */
  public ByteWriter varint(long v) {
    while ((v & ~0x7FL) != 0) {
      u8((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    return u8((int) v);
  }

  public int size() {
    return len;
  }

  public void reset() {
    len = 0;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, len);
  }

  public byte[] array() {
    return buf;
  }

  public static byte[] varintBytes(long v) {
    return new ByteWriter(10).varint(v).toByteArray();
  }
}
