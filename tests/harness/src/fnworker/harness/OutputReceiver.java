// One output stream of one bundle (instruction, sink transform): the bytes of
// all its Data messages form one stream of varint-length-prefixed records
// (records may span messages); each complete record becomes a Result.
package fnworker.harness;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

final class OutputReceiver implements DataService.Receiver {
  final String tag;
  final String transformId;
  final CompletableFuture<Void> done = new CompletableFuture<>();
  private final Consumer<FunctionRunner.Result> sink;
  private final List<String> problems = new ArrayList<>();
  private byte[] buf = new byte[4096];
  private int len;
  private long records;
  private long bytes;
  private long messages;

  OutputReceiver(String tag, String transformId, Consumer<FunctionRunner.Result> sink) {
    this.tag = tag;
    this.transformId = transformId;
    this.sink = sink;
  }

  @Override
  public synchronized void accept(byte[] data) {
    messages++;
    bytes += data.length;
    if (len + data.length > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + data.length));
    }
    System.arraycopy(data, 0, buf, len, data.length);
    len += data.length;
    int pos = 0;
    while (pos < len) {
      long n = 0;
      int p = pos;
      int shift = 0;
      boolean complete = false;
      while (p < len && shift < 64) {
        int b = buf[p++] & 0xFF;
        n |= (long) (b & 0x7F) << shift;
        shift += 7;
        if ((b & 0x80) == 0) {
          complete = true;
          break;
        }
      }
      if (!complete) {
        if (shift >= 64) {
          problems.add("record length varint longer than 10 bytes");
          len = 0;
          return;
        }
        break;
      }
      if (n < 0 || n > Integer.MAX_VALUE) {
        problems.add("record length " + n + " out of range");
        len = 0;
        return;
      }
      if (len - p < n) {
        break;
      }
      byte[] rec = Arrays.copyOfRange(buf, p, p + (int) n);
      pos = p + (int) n;
      records++;
      sink.accept(new FunctionRunner.Result(tag, rec));
    }
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, len - pos);
      len -= pos;
    }
  }

  @Override
  public synchronized void last() {
    if (len > 0) {
      problems.add("is_last on " + transformId + " with " + len + " byte(s) of an incomplete record pending");
    }
    done.complete(null);
  }

  synchronized List<String> problems() {
    return new ArrayList<>(problems);
  }

  synchronized long records() {
    return records;
  }

  synchronized long messages() {
    return messages;
  }

  synchronized long bytes() {
    return bytes;
  }
}
