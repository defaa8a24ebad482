// Reads the big-endian layouts of ByteWriter back, failing with a message that
// names the offset when the input runs out.
package fnworker.harness.types;

public final class ByteReader {
  private final byte[] buf;
  private final int end;
  private int pos;

  public ByteReader(byte[] buf) {
    this(buf, 0, buf.length);
  }

  public ByteReader(byte[] buf, int off, int len) {
    this.buf = buf;
    this.pos = off;
    this.end = off + len;
  }

  public static final class DecodeException extends RuntimeException {
    public DecodeException(String msg) {
      super(msg);
    }
  }

  private void need(int n, String what) {
    if (n < 0 || end - pos < n) {
      throw new DecodeException("truncated input: need " + n + " byte(s) for " + what + " at offset "
          + pos + ", " + (end - pos) + " left");
    }
  }

  public int u8(String what) {
    need(1, what);
    return buf[pos++] & 0xFF;
  }

  public byte i8(String what) {
    need(1, what);
    return buf[pos++];
  }

  public short i16(String what) {
    need(2, what);
    int v = ((buf[pos] & 0xFF) << 8) | (buf[pos + 1] & 0xFF);
    pos += 2;
    return (short) v;
  }

  public int i32(String what) {
    need(4, what);
    int v = ((buf[pos] & 0xFF) << 24) | ((buf[pos + 1] & 0xFF) << 16) | ((buf[pos + 2] & 0xFF) << 8)
        | (buf[pos + 3] & 0xFF);
    pos += 4;
    return v;
  }

  public long i64(String what) {
    long hi = i32(what) & 0xFFFFFFFFL;
    long lo = i32(what) & 0xFFFFFFFFL;
    return (hi << 32) | lo;
  }

  public byte[] bytes(int n, String what) {
    need(n, what);
    byte[] out = new byte[n];
    System.arraycopy(buf, pos, out, 0, n);
    pos += n;
    return out;
  }

  public long varint(String what) {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      int b = u8(what);
      v |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    throw new DecodeException("varint longer than 10 bytes for " + what + " at offset " + pos);
  }

  public int position() {
    return pos;
  }

  public int remaining() {
    return end - pos;
  }

  /** Non-negative int32 length, checked against what is left. */
  public int length(String what) {
    int n = i32(what + " length");
    if (n < 0) {
      throw new DecodeException("negative length " + n + " for " + what + " at offset " + (pos - 4));
    }
    if (n > remaining()) {
      throw new DecodeException("length " + n + " for " + what + " exceeds the " + remaining()
          + " byte(s) left at offset " + pos);
    }
    return n;
  }

  /** Non-negative int32 element count. */
  public int count(String what) {
    int n = i32(what + " count");
    if (n < 0) {
      throw new DecodeException("negative count " + n + " for " + what + " at offset " + (pos - 4));
    }
    return n;
  }
}
