// BeamFnLogging as the runner serves it: collects every LogEntry the worker
// sends (tests wait for and assert on them) and prints them with a prefix
// when verbose. Never sends LogControl.
package fnworker.harness;

import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.beam.model.fnexecution.v1.BeamFnLoggingGrpc;

public final class LoggingService extends BeamFnLoggingGrpc.BeamFnLoggingImplBase {
  private final List<BeamFnApi.LogEntry> entries = new ArrayList<>();
  private final List<StreamObserver<BeamFnApi.LogControl>> streams = new ArrayList<>();
  private final String prefix;
  private volatile boolean print;
  private int connections;

  public LoggingService(String prefix, boolean print) {
    this.prefix = prefix;
    this.print = print;
  }

  @Override
  public StreamObserver<BeamFnApi.LogEntry.List> logging(StreamObserver<BeamFnApi.LogControl> out) {
    synchronized (entries) {
      streams.add(out);
      connections++;
    }
    return new StreamObserver<>() {
      @Override
      public void onNext(BeamFnApi.LogEntry.List list) {
        synchronized (entries) {
          entries.addAll(list.getLogEntriesList());
          entries.notifyAll();
        }
        if (print) {
          for (BeamFnApi.LogEntry e : list.getLogEntriesList()) {
            System.err.println(prefix + format(e));
          }
        }
      }

      @Override
      public void onError(Throwable t) {
        Log.info("Logging client failed: " + t);
      }

      @Override
      public void onCompleted() {
        Log.info("Logging client hanged up.");
        synchronized (out) {
          try {
            out.onCompleted();
          } catch (RuntimeException e) {
            // already closed
          }
        }
      }
    };
  }

  public static String format(BeamFnApi.LogEntry e) {
    StringBuilder sb = new StringBuilder();
    sb.append(e.getSeverity()).append(' ');
    if (!e.getLogLocation().isEmpty()) {
      sb.append(e.getLogLocation()).append(' ');
    }
    if (!e.getInstructionId().isEmpty()) {
      sb.append("[instr ").append(e.getInstructionId()).append("] ");
    }
    sb.append(e.getMessage());
    if (!e.getTrace().isEmpty()) {
      sb.append('\n').append(e.getTrace());
    }
    return sb.toString();
  }

  public void setPrint(boolean p) {
    print = p;
  }

  public int connections() {
    synchronized (entries) {
      return connections;
    }
  }

  public List<BeamFnApi.LogEntry> entries() {
    synchronized (entries) {
      return new ArrayList<>(entries);
    }
  }

  /** Waits for an entry matching p; null after timeoutMs. */
  public BeamFnApi.LogEntry await(Predicate<BeamFnApi.LogEntry> p, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    synchronized (entries) {
      while (true) {
        for (BeamFnApi.LogEntry e : entries) {
          if (p.test(e)) {
            return e;
          }
        }
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
          return null;
        }
        entries.wait(left);
      }
    }
  }

  public void close() {
    List<StreamObserver<BeamFnApi.LogControl>> copy;
    synchronized (entries) {
      copy = new ArrayList<>(streams);
    }
    for (StreamObserver<BeamFnApi.LogControl> s : copy) {
      synchronized (s) {
        try {
          s.onCompleted();
        } catch (RuntimeException e) {
          // already closed
        }
      }
    }
  }
}
