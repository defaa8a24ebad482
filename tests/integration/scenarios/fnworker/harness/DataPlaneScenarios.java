// Data-plane scenarios with hostile or unusual input on the shared Data
// stream: data for bundles that failed before reading it, data for
// instruction ids that never start, messages whose bytes are mostly unknown
// fields, floods of is_last-only entries, bundles queued behind a slow
// descriptor. Each asserts that the worker keeps serving healthy bundles on
// the same stream and that its memory stays bounded (VmRSS, skipped where the
// figure means nothing: valgrind, AddressSanitizer). Names start with dataplane_.
package fnworker.harness;

import static fnworker.harness.Scenario.Ctx.check;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import fnworker.harness.Scenario.Ctx;
import fnworker.harness.Scenario.In;
import fnworker.harness.types.TypeInfo;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.beam.model.fnexecution.v1.BeamFnApi;
import org.apache.flink.fnexecution.v1.FlinkFnApi.UserDefinedDataStreamFunction.FunctionType;

final class DataPlaneScenarios {
  private DataPlaneScenarios() {}

  static final TypeInfo STR = TypeInfo.parse("STRING");
  static final byte[] PICKLE = {(byte) 0x80, 0x04, (byte) 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, (byte) 0x8c, 0x08, 'b',
      'u', 'i', 'l', 't', 'i', 'n', 's', (byte) 0x94, '.'};

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("dataplane_failed_bundle_data_dropped", DataPlaneScenarios::failedBundleData));
    s.add(new Scenario("dataplane_ghost_data_bounded", DataPlaneScenarios::ghostData));
    s.add(new Scenario("dataplane_early_data_over_bound_fails_bundle", DataPlaneScenarios::earlyOverBound));
    s.add(new Scenario("dataplane_pinned_messages", DataPlaneScenarios::pinnedMessages));
    s.add(new Scenario("dataplane_many_unknown_is_last", DataPlaneScenarios::manyUnknownIsLast));
    s.add(new Scenario("dataplane_pending_bundles_fifo", DataPlaneScenarios::pendingFifo));
    return s;
  }

  // ------------------------------------------------------------ helpers

  /** Runs body on its own thread; fails naming what did not finish within ms. */
  static <T> T within(Ctx c, long ms, String what, Callable<T> body) throws Exception {
    CompletableFuture<T> f = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        f.complete(body.call());
      } catch (Throwable e) {
        f.completeExceptionally(e);
      }
    }, "within");
    t.setDaemon(true);
    t.start();
    try {
      return f.get(c.ms(ms), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      t.interrupt();
      throw new Scenario.Failure(what + " did not complete within " + c.ms(ms) / 1000 + " s");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception) {
        throw (Exception) e.getCause();
      }
      throw e;
    }
  }

  /** One identity bundle of 50 strings on r, byte-identical back, within 60 s. */
  static void healthy(Ctx c, FunctionRunner r, long seed, String when) throws Exception {
    List<In> in = IntegrationTests.values(STR, 50, seed);
    within(c, 60_000, "a healthy bundle " + when, () -> {
      Ctx.expectSame(STR, in, Ctx.bundle(r, STR, in));
      return null;
    });
  }

  static BeamFnApi.Elements.Data.Builder data(String instruction) {
    return BeamFnApi.Elements.Data.newBuilder().setInstructionId(instruction)
        .setTransformId(DescriptorBuilder.READ_ID);
  }

  /** varint(len) + record, as the input stream carries it. */
  static byte[] framed(byte[] record) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    long n = record.length;
    while (n >= 0x80) {
      o.write((int) (n & 0x7F) | 0x80);
      n >>>= 7;
    }
    o.write((int) n);
    o.writeBytes(record);
    return o.toByteArray();
  }

  static UnknownFieldSet unknownBytes(int field, int size) {
    return UnknownFieldSet.newBuilder().addField(field, UnknownFieldSet.Field.newBuilder()
        .addLengthDelimited(ByteString.copyFrom(new byte[size])).build()).build();
  }

  /** The highest VmRSS (KiB) seen over ms. */
  static long peakRssKb(Worker w, long ms) throws InterruptedException {
    long peak = w.rssKb();
    for (long end = System.currentTimeMillis() + ms; System.currentTimeMillis() < end; ) {
      Thread.sleep(25);
      peak = Math.max(peak, w.rssKb());
    }
    return peak;
  }

  /** Checks growth (KiB) against limitMb, or notes why RSS is not checked here. */
  static void checkRss(Ctx c, Worker w, String what, long beforeKb, long peakKb, long limitMb) {
    String why = w.rssUnreliable();
    String fig = what + ": VmRSS " + beforeKb / 1024 + " -> " + peakKb / 1024 + " MB";
    if (why != null || beforeKb < 0 || peakKb < 0) {
      c.note(fig + " (not checked: " + (why != null ? why : "VmRSS unreadable") + ")");
      return;
    }
    c.note(fig);
    check(peakKb - beforeKb < limitMb * 1024, what + ": the worker's RSS grew by " + (peakKb - beforeKb) / 1024
        + " MB (from " + beforeKb / 1024 + " MB), more than " + limitMb + " MB");
  }

  static BeamFnApi.LogEntry awaitWarn(Ctx c, Worker w, String instruction, String bytes, long ms)
      throws InterruptedException {
    return w.servers.logging.await(e -> e.getSeverity().getNumber() >= BeamFnApi.LogEntry.Severity.Enum.WARN_VALUE
        && e.getMessage().contains(instruction) && e.getMessage().matches("(?s).*\\b" + bytes + " bytes.*"),
        c.ms(ms));
  }

  // ------------------------------------------------------------ scenarios

  /**
   * A bundle that fails before it reads its input (a descriptor error: a pickled
   * payload; a processor creation failure: identity with different types), each
   * followed by 10 MB of input for it: the data is dropped as it arrives, so a
   * healthy bundle on the same Data stream still completes.
   */
  static void failedBundleData(Ctx c) throws Exception {
    Worker w = c.worker(o -> o.env.put("FNW_RELAY", "off")); // the pickle is refused, not relayed
    FunctionRunner ok = c.runner(w, STR, STR, Ctx.spec("identity"));
    healthy(c, ok, 1, "before any failure");
    FunctionRunner pickled = c.runner(w, STR, STR, FunctionType.PROCESS, PICKLE, cfg -> { });
    FunctionRunner mismatch = c.runner(w, STR, TypeInfo.parse("INT"), Ctx.spec("identity"));
    byte[] record = RunnerRows.input(STR, 1, Long.MIN_VALUE, "x".repeat(10_000));
    long before = w.rssKb();
    long peak = before;
    int seed = 2;
    for (FunctionRunner bad : List.of(pickled, mismatch)) {
      String what = bad == pickled ? "descriptor error" : "processor creation failure";
      String err = within(c, 60_000, "a bundle failing with a " + what + " followed by 10 MB of its input", () -> {
        for (int i = 0; i < 1000; i++) {
          bad.process(record);
        }
        return Ctx.expectBundleError(bad);
      });
      check(bad == pickled ? err.contains("native") : err.contains("type"), what + ": unexpected error " + err);
      peak = Math.max(peak, w.rssKb());
      healthy(c, ok, seed++, "after a " + what + " and 10 MB of its input");
    }
    checkRss(c, w, "2 x 10 MB for failed bundles", before, peak, 64);
  }

  /**
   * 100 x 64 KiB for an instruction that never starts: kept only up to the
   * per-instruction early-data bound, then dropped with a WARN naming it and the
   * bytes; the shared stream is never paused for it. Early data below the bound
   * expires after --early-data-ttl, again with a WARN.
   */
  static void ghostData(Ctx c) throws Exception {
    Worker w = c.worker(o -> o.extraArgs.add("--early-data-ttl=1"));
    FunctionRunner ok = c.runner(w, STR, STR, Ctx.spec("identity"));
    healthy(c, ok, 1, "before the ghost data");
    byte[] chunk = new byte[64 << 10];
    within(c, 60_000, "sending 100 x 64 KiB for an instruction that never starts", () -> {
      for (int i = 0; i < 100; i++) {
        w.servers.data.inject(BeamFnApi.Elements.newBuilder()
            .addData(data("ghost-big").setData(ByteString.copyFrom(chunk))).build());
      }
      return null;
    });
    healthy(c, ok, 2, "after 6.4 MB for an instruction that never starts");
    check(awaitWarn(c, w, "ghost-big", "\\d+", 5000) != null,
        "no WARN log entry names instruction ghost-big and the bytes dropped");
    w.servers.data.inject(BeamFnApi.Elements.newBuilder()
        .addData(data("ghost-small").setData(ByteString.copyFrom(new byte[10240]))).build());
    long t0 = System.nanoTime();
    BeamFnApi.LogEntry expired = awaitWarn(c, w, "ghost-small", "10240", 10_000);
    check(expired != null, "10 KiB of early data for ghost-small did not expire with a WARN naming it and "
        + "10240 bytes within 10 s (--early-data-ttl=1)");
    c.note("ghost-small expired after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + expired.getMessage());
    healthy(c, ok, 3, "after early data expired");
  }

  /**
   * A runner that sends more than the early-data bound before the process_bundle
   * request: the data is dropped (the stream keeps flowing) and the bundle, when
   * it starts, fails saying so instead of running on partial input.
   */
  static void earlyOverBound(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner ok = c.runner(w, STR, STR, Ctx.spec("identity"));
    healthy(c, ok, 1, "before");
    FunctionRunner late = c.runner(w, STR, STR, FunctionType.PROCESS, Ctx.spec("identity").toByteArray(),
        cfg -> cfg.requestAfterData = true);
    byte[] record = RunnerRows.input(STR, 1, Long.MIN_VALUE, "y".repeat(10_000));
    String err = within(c, 60_000, "6 MB of input before its process_bundle request", () -> {
      for (int i = 0; i < 600; i++) {
        late.process(record);
      }
      return Ctx.expectBundleError(late);
    });
    check(err.contains("before its process_bundle") && err.matches("(?s).*\\d+ bytes.*"),
        "the error should say that the input that came before the request was dropped, and how much: " + err);
    c.note("bundle error: " + err);
    healthy(c, ok, 2, "after");
    List<In> in = IntegrationTests.values(STR, 40, 3);
    Ctx.expectSame(STR, in, Ctx.bundle(late, STR, in));   // small early data still works
  }

  /**
   * 200 Data messages of ~1 MiB, each carrying one tiny record plus 1 MiB of
   * unknown fields, for a bundle waiting for its descriptor: the worker must not
   * keep every message alive for its one record (before: +200 MB RSS).
   */
  static void pinnedMessages(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner ok = c.runner(w, STR, STR, Ctx.spec("identity"));
    healthy(c, ok, 1, "to warm up");
    long before = w.rssKb();
    w.servers.control.holdDescriptors();
    FunctionRunner r = c.runner(w, STR, STR, Ctx.spec("identity"));
    String iid = r.startBundle();
    for (long end = System.currentTimeMillis() + c.ms(10_000); w.servers.control.heldDescriptorRequests() == 0; ) {
      check(System.currentTimeMillis() < end, "the worker did not ask for the new descriptor within 10 s");
      Thread.sleep(10);
    }
    List<In> in = IntegrationTests.values(STR, 200, 7);
    CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
      for (int i = 0; i < in.size(); i++) {
        In x = in.get(i);
        BeamFnApi.Elements.Data.Builder d = data(iid)
            .setData(ByteString.copyFrom(framed(RunnerRows.input(STR, x.ts, x.watermark, x.value))));
        BeamFnApi.Elements.Builder e = BeamFnApi.Elements.newBuilder();
        if (i % 2 == 0) {
          d.setUnknownFields(unknownBytes(1000, 1 << 20));
        } else {
          e.setUnknownFields(unknownBytes(1000, 1 << 20));
        }
        w.servers.data.inject(e.addData(d).build());
      }
    });
    try {
      sent.get(c.ms(30_000), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      c.note("the 200 messages were still being sent after 30 s (the stream paused)");
    }
    long peak = peakRssKb(w, 1000);
    w.servers.control.releaseDescriptors();
    within(c, 60_000, "the bundle that received the 200 messages", () -> {
      sent.get();
      r.flush();
      return null;
    });
    Ctx.expectSame(STR, in, Ctx.drain(r));
    checkRss(c, w, "200 x 1 MiB messages holding one record each", before, peak, 64);
    healthy(c, ok, 2, "afterwards");
  }

  /**
   * 200,000 is_last-only entries for distinct instruction ids that never start:
   * constant work per entry, bounded memory, and a healthy bundle afterwards
   * (before: minutes of loop CPU, +31 MB that never went away).
   */
  static void manyUnknownIsLast(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner ok = c.runner(w, STR, STR, Ctx.spec("identity"));
    healthy(c, ok, 1, "to warm up");
    long before = w.rssKb();
    long t0 = System.nanoTime();
    long[] peak = {before};
    within(c, 60_000, "200,000 is_last-only entries for unknown instructions and a healthy bundle", () -> {
      for (int m = 0; m < 200; m++) {
        BeamFnApi.Elements.Builder e = BeamFnApi.Elements.newBuilder();
        for (int k = 0; k < 1000; k++) {
          e.addData(data("lost-" + (m * 1000 + k)).setIsLast(true));
        }
        w.servers.data.inject(e.build());
        if (m % 20 == 0) {
          peak[0] = Math.max(peak[0], w.rssKb());
        }
      }
      healthy(c, ok, 2, "after 200,000 is_last entries");
      return null;
    });
    c.note("sent and served in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    peak[0] = Math.max(peak[0], peakRssKb(w, 300));
    checkRss(c, w, "200,000 unknown is_last entries", before, peak[0], 24);
    long t1 = System.nanoTime();
    for (int i = 0; i < 5; i++) {
      healthy(c, ok, 10 + i, "later");
    }
    c.note("5 later bundles in " + (System.nanoTime() - t1) / 1_000_000 + " ms");
  }

  /**
   * Bundles that wait for the same descriptor start in the order their requests
   * arrived: with the descriptor held, three requests and their input, then the
   * descriptor; is_last of their outputs comes back in request order.
   */
  static void pendingFifo(Ctx c) throws Exception {
    Worker w = c.worker();
    FunctionRunner ok = c.runner(w, STR, STR, Ctx.spec("identity"));
    healthy(c, ok, 1, "to open the Data stream");
    w.servers.control.holdDescriptors();
    FunctionRunner r = c.runner(w, STR, STR, Ctx.spec("identity"));
    List<String> order = new ArrayList<>();
    List<CompletableFuture<BeamFnApi.InstructionResponse>> responses = new ArrayList<>();
    List<String> ids = List.of("fifo-1", "fifo-2", "fifo-3");
    for (String iid : ids) {
      Map<String, DataService.Receiver> rx = new LinkedHashMap<>();
      rx.put(DescriptorBuilder.sinkId(DescriptorBuilder.MAIN_OUTPUT), new DataService.Receiver() {
        @Override
        public void accept(byte[] bytes) { }

        @Override
        public void last() {
          synchronized (order) {
            order.add(iid);
          }
        }
      });
      w.servers.data.register(iid, rx);
      responses.add(w.control().sendRaw(BeamFnApi.InstructionRequest.newBuilder().setInstructionId(iid)
          .setProcessBundle(BeamFnApi.ProcessBundleRequest.newBuilder()
              .setProcessBundleDescriptorId(r.descriptor().getId())).build()));
      w.servers.data.inject(BeamFnApi.Elements.newBuilder()
          .addData(data(iid).setData(ByteString.copyFrom(framed(RunnerRows.input(STR, 1, Long.MIN_VALUE, iid)))))
          .addData(data(iid).setIsLast(true)).build());
    }
    for (long end = System.currentTimeMillis() + c.ms(10_000); w.servers.control.heldDescriptorRequests() == 0; ) {
      check(System.currentTimeMillis() < end, "the worker did not ask for the descriptor within 10 s");
      Thread.sleep(10);
    }
    Thread.sleep(200);   // let every request reach the worker while the descriptor is held
    w.servers.control.releaseDescriptors();
    for (CompletableFuture<BeamFnApi.InstructionResponse> f : responses) {
      BeamFnApi.InstructionResponse resp = f.get(c.ms(20_000), TimeUnit.MILLISECONDS);
      check(resp.getError().isEmpty(), "bundle " + resp.getInstructionId() + " failed: " + resp.getError());
    }
    // a response may overtake the is_last that went out before it (different streams)
    for (long end = System.currentTimeMillis() + c.ms(10_000); ; Thread.sleep(10)) {
      synchronized (order) {
        if (order.size() == ids.size() || System.currentTimeMillis() > end) {
          break;
        }
      }
    }
    for (String iid : ids) {
      w.servers.data.unregister(iid, false);
    }
    synchronized (order) {
      check(order.equals(ids), "bundles waiting for one descriptor should start in request order " + ids
          + "; their outputs ended in the order " + order);
    }
    healthy(c, ok, 2, "afterwards");
  }
}
