// Integration scenarios for the operation-level protections of issue 19
// (README "Security"): a row cannot choose the host or walk up the URL path,
// header values refuse control characters, replies from services are
// bounded, and text quoted from a service is masked in its escaped forms too.
// Each runs the real worker against a real server (the Python test HTTP
// server, redis-server, the KServe test server); a server that is not
// installed skips its part.
package fnworker.harness;

import static fnworker.harness.AsyncScenarios.contains;
import static fnworker.harness.AsyncScenarios.opts;
import static fnworker.harness.Scenario.Ctx.check;

import fnworker.harness.HttpScenarios.Server;
import fnworker.harness.Scenario.Ctx;
import fnworker.harness.types.Row;
import fnworker.harness.types.TypeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

final class OpsSecurityScenarios {
  private OpsSecurityScenarios() {}

  static List<Scenario> scenarios() {
    List<Scenario> s = new ArrayList<>();
    s.add(new Scenario("http_row_cannot_change_url_or_headers", OpsSecurityScenarios::urlAndHeaders));
    return s;
  }

  static final TypeInfo KEYS = HttpScenarios.KEYS;

  static String get(Server py, String path) throws Exception {
    java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    return client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(py.url(path))).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
  }

  /**
   * Findings 6, 11, 12: a value ".." in a path placeholder would make libcurl (and nginx, which decodes
   * %2E%2E first) resolve the path upward; it fails the call and no request is sent. A placeholder in the
   * authority is refused at open. A header value with a control character other than TAB fails the call.
   */
  static void urlAndHeaders(Ctx c) throws Exception {
    try (Server py = Server.start(c, "pyhttp.sh")) {
      if (py == null) {
        return;
      }
      Worker w = c.worker(o -> { });
      TypeInfo out = TypeInfo.parse("ROW<k:STRING,id:LONG,p:STRING>");
      String tmpl = py.url("/headers/users/{k}/profile");
      // values with dots that are not a dot segment go as they are
      Map<Long, Row> ok = HttpScenarios.byId(out, Ctx.bundle(HttpScenarios.runner(c, w, KEYS, out,
          HttpScenarios.spec(opts("url", tmpl, "result.p", "/_path"), "{\"timeoutMs\":10000}")), KEYS,
          HttpScenarios.rows(3, "a.b", "...", ".x")));
      check("/headers/users/a.b/profile".equals(ok.get(0L).get(2)), "a.b: " + ok);
      check("/headers/users/.../profile".equals(ok.get(1L).get(2)), "...: " + ok);
      check("/headers/users/.x/profile".equals(ok.get(2L).get(2)), ".x: " + ok);
      for (String dots : new String[] {"..", "."}) {
        String before = get(py, "/count");
        FunctionRunner r = HttpScenarios.runner(c, w, KEYS, out, HttpScenarios.spec(opts("url", tmpl,
            "result.p", "/_path"), "{\"timeoutMs\":10000}"));
        Ctx.send(r, KEYS, HttpScenarios.rows(1, dots));
        contains(Ctx.expectBundleError(r), "path segment '" + dots + "'", "/headers/users/" + dots + "/profile",
            "may not be '.' or '..'");
        String after = get(py, "/count");
        check(before.replaceAll(",.*", "").equals(after.replaceAll(",.*", "")),
            "a request reached the server for '" + dots + "': " + before + " -> " + after);
      }
      // the host, port or scheme cannot come from a row
      for (String u : new String[] {"http://{k}:" + py.ports[0] + "/headers", "http://127.0.0.1:{id}/headers"}) {
        FunctionRunner r = HttpScenarios.runner(c, w, KEYS, out, HttpScenarios.spec(opts("url", u,
            "result.p", "/_path"), "{\"timeoutMs\":10000}"));
        Ctx.send(r, KEYS, HttpScenarios.rows(1, "127.0.0.1"));
        contains(Ctx.expectBundleError(r), "option 'url'", "placeholder before the path");
      }
      // header values: TAB goes, every other control character (and DEL) fails the call
      TypeInfo tag = TypeInfo.parse("ROW<k:STRING,id:LONG,t:STRING>");
      Map<Long, Row> tab = HttpScenarios.byId(tag, Ctx.bundle(HttpScenarios.runner(c, w, KEYS, tag,
          HttpScenarios.spec(opts("url", py.url("/headers"), "header.X-Tag", "v {k}", "result.t", "/x-tag"),
              "{\"timeoutMs\":10000}")), KEYS, HttpScenarios.rows(1, "a\tb")));
      check("v a\tb".equals(tab.get(0L).get(2)), "TAB in a header: " + tab);
      for (String bad : new String[] {"a\u0001b", "a\u007fb", "a\u001b[2J"}) {
        FunctionRunner r = HttpScenarios.runner(c, w, KEYS, tag, HttpScenarios.spec(opts("url", py.url("/headers"),
            "header.X-Tag", "v {k}", "result.t", "/x-tag"), "{\"timeoutMs\":10000}"));
        Ctx.send(r, KEYS, HttpScenarios.rows(1, bad));
        contains(Ctx.expectBundleError(r), "header.X-Tag", "control character");
      }
    }
  }
}
