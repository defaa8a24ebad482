// Hex dumps for messages and the self-test ("00 1c ab").
package fnworker.harness.types;

public final class Hex {
  private Hex() {}

  public static String of(byte[] b) {
    return of(b, 0, b.length);
  }

  public static String of(byte[] b, int off, int len) {
    StringBuilder sb = new StringBuilder();
    int shown = Math.min(len, 256);
    for (int i = 0; i < shown; i++) {
      if (i > 0) {
        sb.append(' ');
      }
      sb.append(String.format("%02x", b[off + i] & 0xFF));
    }
    if (shown < len) {
      sb.append(" ... (").append(len).append(" bytes)");
    }
    return sb.toString();
  }

  public static byte[] parse(String s) {
    String h = s.replaceAll("[\\s|]", "");
    if (h.length() % 2 != 0) {
      throw new IllegalArgumentException("odd hex string " + s);
    }
    byte[] out = new byte[h.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }
}
