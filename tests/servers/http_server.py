#!/usr/bin/env python3
"""tests/servers/http_server.py — the test HTTP server for the HTTP client's
tests: Python's standard library only, HTTP/1.1 with keep-alive, one thread
per connection, on 127.0.0.1 and a port the kernel picks.

Usage: http_server.py DIR [PORT]   (fixtures in DIR/www/json/<k>.json;
writes the port to DIR/py.port once it listens; PORT 0 or none: any free)

Routes:
  GET  /json/<k>          the fixture DIR/www/json/<k>.json (404 if none)
  POST /echo              the request body back (400 unless it is JSON)
  POST /batch             {"inputs":[...]} -> {"outputs":[...]}: a number
                          doubled, a string upper-cased, anything else as
                          is; ?drop=N leaves the last N outputs out
  ANY  /delay?ms=N        answers {"delayed_ms":N,"body":<the request body
                          as JSON, or null>} after N ms
  ANY  /flaky?fails=N&key=K  the first N calls for key K answer 503, the
                          next ones 200 {"key":K,"calls":<calls so far>}
  ANY  /headers...        {"<lower-case name>": value, ..., "_path": the
                          request's path and query as received}
  POST /v1/embeddings     OpenAI style: {"model":M,"input":[texts]} ->
                          {"object":"list","model":M,"data":[{"object":
                          "embedding","index":i,"embedding":[len(text),
                          code point of its first character (0 if empty),
                          0.5]}],"usage":{...}}; 401 without an
                          "Authorization: Bearer ..." header
  POST /v1/score          a scoring model, batch of orders: {"inputs":[{"amount":A,
                          "tier":T}, ...]} -> {"outputs":[{"score":A * w(T)}, ...]}
                          in input order, w = SCORE_WEIGHTS[T] (1.0 for another
                          tier or null); 401 without "Authorization: Bearer ..."
  ANY  /status/<code>     answers that status with {"status":<code>}
  ANY  /429?after=S&key=K the first call for key K answers 429 with
                          Retry-After: S, the next one 200 (and so on)
  ANY  /reject?as=F       401 with a body quoting the Authorization header's
                          credential (after "Bearer ") in form F: json
                          (every "/" as "\\/"), u (every character as
                          \\uXXXX), pct (percent-encoded), b64 (base64 of
                          "user:" + credential) -- a server showing the
                          rejected token escaped
  ANY  /limited?rps=N&key=K  a rate-limited service (docs/resilience.md): in
                          each wall-clock second the first N calls for key K
                          answer 200 {"key":K,"ok":true}, the rest 429 with
                          Retry-After: 1
  ANY  /outage?after=A&for=B&key=K  a service that goes down: from A to A+B
                          seconds after the first call for key K every call
                          answers 500, before and after 200 {"key":K,"up":true}
                          (A, B in seconds, fractions allowed); on both,
                          ms=M answers M ms late
  GET  /stats?key=K       {"calls":C,"ok":O,"refused":R,"down":D}: calls for
                          key K on /limited or /outage, answered 200, 429,
                          and during the outage (500)
  GET  /count             {"requests":N,"connections":M}: requests (other
                          than /count) and connections seen so far
  GET  /wire?form=F       {"form":F} framed as F: chunked (three chunks, a
                          chunk extension and a trailer), close (no length:
                          the body ends with the connection), interim (a
                          "100 Continue" first), bye (a keep-alive answer,
                          then the server closes the connection unannounced)
"""
import base64
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

LOCK = threading.Lock()
STATE = {"requests": 0, "connections": 0, "limited": set(), "flaky": {}, "svc": {}}
ROOT = ""
# /v1/score's weight per tier (examples/pyflink/enrich_job.py, the demo).
SCORE_WEIGHTS = {"gold": 1.5, "silver": 1.25, "bronze": 0.5}


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True


def transform(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return v * 2
    if isinstance(v, str):
        return v.upper()
    return v


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with LOCK:
            STATE["connections"] += 1

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, obj, headers=()):
        body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        data = self.body()
        path = url.path
        if path == "/stats":
            with LOCK:
                st = STATE["svc"].get(q.get("key", ""), {})
                out = {k: st.get(k, 0) for k in ("calls", "ok", "refused", "down")}
                out["served_per_s"] = [n for _, n in sorted(st.get("served_per_s", {}).items())]
                return self.reply(200, out)
        if path == "/count":
            with LOCK:
                return self.reply(200, {"requests": STATE["requests"],
                                        "connections": STATE["connections"]})
        with LOCK:
            STATE["requests"] += 1
        if path.startswith("/json/"):
            return self.fixture(path[len("/json/"):])
        if path == "/echo" or path == "/batch":
            try:
                doc = json.loads(data or b"null")
            except ValueError:
                return self.reply(400, {"error": "the body is not JSON"})
            if path == "/echo":
                return self.reply(200, data)
            if not isinstance(doc, dict) or not isinstance(doc.get("inputs"), list):
                return self.reply(400, {"error": "expected {\"inputs\":[...]}"})
            outputs = [transform(v) for v in doc["inputs"]]
            drop = int(q.get("drop", "0"))      # a service that answers short
            return self.reply(200, {"outputs": outputs[:max(0, len(outputs) - drop)]})
        if path == "/delay":
            ms = int(q.get("ms", "0"))
            time.sleep(ms / 1000.0)
            try:
                doc = json.loads(data) if data else None
            except ValueError:
                doc = None
            return self.reply(200, {"delayed_ms": ms, "body": doc})
        if path == "/flaky":
            key = q.get("key", "")
            with LOCK:
                calls = STATE["flaky"].get(key, 0) + 1
                STATE["flaky"][key] = calls
            if calls <= int(q.get("fails", "1")):
                return self.reply(503, {"status": 503, "calls": calls})
            return self.reply(200, {"key": key, "calls": calls})
        if path.startswith("/headers"):
            h = {k.lower(): v for k, v in self.headers.items()}
            h["_path"] = self.path
            return self.reply(200, h)
        if path == "/reject":
            return self.reject(q.get("as", "json"))
        if path == "/wire":
            return self.wire(q.get("form", ""))
        if path == "/v1/embeddings":
            return self.embeddings(data)
        if path == "/v1/score":
            return self.score(data)
        if path.startswith("/status/"):
            code = int(path[len("/status/"):])
            return self.reply(code, {"status": code})
        if path == "/limited" or path == "/outage":
            return self.service(path, q)
        if path == "/429":
            key = q.get("key", "")
            with LOCK:
                first = key not in STATE["limited"]
                if first:
                    STATE["limited"].add(key)
                else:
                    STATE["limited"].discard(key)
            if first:
                return self.reply(429, {"status": 429}, [("Retry-After", q.get("after", "1"))])
            return self.reply(200, {"status": 200})
        return self.reply(404, {"error": "no route " + path})

    def wire(self, form):
        body = json.dumps({"form": form}).encode()
        w = self.wfile
        if form == "chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            parts = [body[:3], body[3:7], body[7:]]
            w.write(b"%x;ext=1\r\n%s\r\n" % (len(parts[0]), parts[0]))
            for part in parts[1:]:
                w.write(b"%X\r\n%s\r\n" % (len(part), part))
            w.write(b"0\r\nX-Trailer: 1\r\n\r\n")
            return None
        if form == "close":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            w.write(body)
            self.close_connection = True
            return None
        if form == "interim":
            w.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            return self.reply(200, body)
        if form == "bye":
            self.reply(200, body)
            self.close_connection = True
            return None
        return self.reply(400, {"error": "form is chunked, close, interim or bye"})

    def reject(self, form):
        cred = (self.headers.get("Authorization") or "").split(" ", 1)[-1]
        if form == "u":
            shown = "".join("\\u%04x" % ord(ch) for ch in cred)
        elif form == "pct":
            shown = urllib.parse.quote(cred, safe="")
        elif form == "b64":
            shown = base64.b64encode(("user:" + cred).encode()).decode()
        else:
            shown = cred.replace("/", "\\/")
        body = '{"error": "invalid token: %s"}' % shown
        return self.reply(401, body.encode())

    def embeddings(self, data):
        if not (self.headers.get("Authorization") or "").startswith("Bearer "):
            return self.reply(401, {"error": {"message": "missing bearer token"}})
        try:
            doc = json.loads(data)
            texts = doc["input"]
            assert isinstance(texts, list) and all(isinstance(t, str) for t in texts)
        except (ValueError, KeyError, TypeError, AssertionError):
            return self.reply(400, {"error": {"message": "expected {\"model\":...,\"input\":[strings]}"}})
        out = [{"object": "embedding", "index": i,
                "embedding": [float(len(t)), float(ord(t[0])) if t else 0.0, 0.5]}
               for i, t in enumerate(texts)]
        n = sum(len(t) for t in texts)
        return self.reply(200, {"object": "list", "model": doc.get("model"), "data": out,
                                "usage": {"prompt_tokens": n, "total_tokens": n}})

    def score(self, data):
        if not (self.headers.get("Authorization") or "").startswith("Bearer "):
            return self.reply(401, {"error": "missing bearer token"})
        try:
            items = json.loads(data)["inputs"]
            out = [{"score": float(it["amount"]) * SCORE_WEIGHTS.get(it.get("tier"), 1.0)} for it in items]
        except (ValueError, KeyError, TypeError):
            return self.reply(400, {"error": "expected {\"inputs\":[{\"amount\":number,\"tier\":...}]}"})
        return self.reply(200, {"outputs": out})

    def service(self, path, q):
        """/limited and /outage (the resilience tests' and bench's services)."""
        key = q.get("key", "")
        now = time.time()
        with LOCK:
            st = STATE["svc"].setdefault(key, {"calls": 0, "ok": 0, "refused": 0, "down": 0,
                                               "window": -1, "in_window": 0, "first": now})
            st["calls"] += 1
            if path == "/limited":
                window = int(now)
                if window != st["window"]:
                    st["window"], st["in_window"] = window, 0
                st["in_window"] += 1
                over = st["in_window"] > int(q.get("rps", "100"))
                st["refused" if over else "ok"] += 1
                if not over:
                    served = st.setdefault("served_per_s", {})
                    served[window] = served.get(window, 0) + 1
                if over:
                    code = 429
                else:
                    code = 200
            else:
                t = now - st["first"]
                start = float(q.get("after", "1"))
                down = start <= t < start + float(q.get("for", "1"))
                st["down" if down else "ok"] += 1
                code = 500 if down else 200
        if q.get("ms"):
            time.sleep(float(q["ms"]) / 1000.0)
        if code == 429:
            return self.reply(429, {"status": 429}, [("Retry-After", "1")])
        if code == 500:
            return self.reply(500, {"status": 500, "error": "the service is down"})
        return self.reply(200, {"key": key, "ok": True, "up": True})

    def fixture(self, key):
        if "/" in key or key.startswith("."):
            return self.reply(404, {"error": "no fixture"})
        try:
            with open(os.path.join(ROOT, "www", "json", key + ".json"), "rb") as f:
                return self.reply(200, f.read())
        except OSError:
            return self.reply(404, {"error": "no fixture " + key})

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


def main():
    global ROOT
    ROOT = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    srv = Server(("127.0.0.1", port), Handler)
    tmp = os.path.join(ROOT, "py.port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(ROOT, "py.port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
