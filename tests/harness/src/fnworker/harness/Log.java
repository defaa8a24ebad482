// The harness's own diagnostics on stderr, with a fixed prefix; quiet unless
// verbose, except warnings.
package fnworker.harness;

public final class Log {
  private static volatile boolean verbose;

  private Log() {}

  public static void setVerbose(boolean v) {
    verbose = v;
  }

  public static boolean verbose() {
    return verbose;
  }

  public static void info(String msg) {
    if (verbose) {
      System.err.println("[harness] " + msg);
    }
  }

  public static void warn(String msg) {
    if (verbose) {
      System.err.println("[harness] WARN " + msg);
    }
  }
}
