#!/usr/bin/env python3
"""tests/servers/kserve_server.py — a model server speaking the Open
Inference Protocol (KServe v2 / Triton) over gRPC, for the kserve
operation's tests and benchmark. Written from the public protocol: the
service inference.GRPCInferenceService of proto/inference/grpc_predict_v2.proto,
whose Python message classes protoc generates at start into DIR/gen; the
service itself is served through grpcio's generic handlers.

Usage: kserve_server.py DIR PROTO_ROOT [--workers N] [--slow-base-ms MS]
       [--slow-row-ms MS] [--slow-concurrency N] [--port P]
Listens on 127.0.0.1 and port P (default: one the kernel picks), writes it
to DIR/kserve.port once it serves.

Models (version "1"; "" picks it):
  identity  x FP32 [-1,-1]  -> y FP32 [-1,-1]   y = x
  linear    x FP32 [-1,4]   -> y FP32 [-1,2]    y = x @ W + B (W, B below)
  linear16  x FP32 [-1,16]  -> y FP32 [-1,2]    y = x @ W16 + B, W16[j] = [j % 5 - 2, j % 3 - 1]
            (the benchmark's model: small integers, so halves in give exact sums)
  strlen    text BYTES [-1] -> len INT64 [-1]   the byte length of each element
  slow      x FP32 [-1,1]   -> y FP32 [-1,1]    y = 2x, after base + rows * per-row
            milliseconds, at most --slow-concurrency requests at once (the
            others wait): a model whose batching pays off measurably
Requests are validated as a real server does: model and version, every input
present once with the model's datatype and a shape that fits (-1 = any; the
batch dimension from 1 to 1024), contents either raw (one entry per input,
exactly shape x element size bytes; BYTES as 4-byte little-endian length +
bytes, exactly filling the entry) or typed (exactly as many elements),
requested outputs known. Failures answer INVALID_ARGUMENT or NOT_FOUND with
a message. Outputs are raw_output_contents, or typed contents when the
control file asks.

Fault injection: DIR/control.json, read on each request, maps a model name
(or "*") to {"unavailable": N, "delay_ms": MS, "typed": true,
"echo_auth": true | "json" | "u" | "b64", "ready_delay_ms": MS (under "*":
ServerReady answers after MS)}: the next N requests answer UNAVAILABLE, each request
waits MS first, outputs come as typed contents, every ModelInfer answers
UNAUTHENTICATED quoting its authorization metadata (a server that shows
the rejected token, for the secret-masking scenario). DIR/stats.json (rewritten within 100 ms of a change) holds,
per model, {"requests", "rows", "max_batch", "max_concurrent"}.
"""
import base64
import json
import os
import struct
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc
import numpy as np

W = np.array([[1.0, 2.0], [0.0, -1.0], [0.5, 0.0], [3.0, 1.0]], dtype=np.float32)
B = np.array([0.5, -1.0], dtype=np.float32)
W16 = np.array([[j % 5 - 2, j % 3 - 1] for j in range(16)], dtype=np.float32)
MAX_BATCH = 1024

NP = {"BOOL": np.dtype("?"), "INT8": np.dtype("<i1"), "INT16": np.dtype("<i2"), "INT32": np.dtype("<i4"),
      "INT64": np.dtype("<i8"), "UINT8": np.dtype("<u1"), "UINT16": np.dtype("<u2"),
      "UINT32": np.dtype("<u4"), "UINT64": np.dtype("<u8"), "FP16": np.dtype("<f2"),
      "FP32": np.dtype("<f4"), "FP64": np.dtype("<f8")}
TYPED = {"BOOL": "bool_contents", "INT8": "int_contents", "INT16": "int_contents", "INT32": "int_contents",
         "INT64": "int64_contents", "UINT8": "uint_contents", "UINT16": "uint_contents",
         "UINT32": "uint_contents", "UINT64": "uint64_contents", "FP32": "fp32_contents",
         "FP64": "fp64_contents", "BYTES": "bytes_contents"}


class Abort(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
        self.msg = msg


def load_messages(dirpath, proto_root):
    gen = os.path.join(dirpath, "gen")
    os.makedirs(gen, exist_ok=True)
    subprocess.run(["protoc", "-I" + proto_root, "--python_out=" + gen, "inference/grpc_predict_v2.proto"],
                   check=True)
    sys.path.insert(0, gen)
    from inference import grpc_predict_v2_pb2 as pb  # noqa: E402 (generated above)
    return pb


class Model:
    def __init__(self, name, inputs, outputs, fn):
        self.name, self.inputs, self.outputs, self.fn = name, inputs, outputs, fn


def decode_bytes(buf, count, name):
    out, at = [], 0
    for _ in range(count):
        if len(buf) - at < 4:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"input '{name}': raw contents end inside a length")
        (n,) = struct.unpack_from("<I", buf, at)
        at += 4
        if len(buf) - at < n:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"input '{name}': a BYTES element runs past the end")
        out.append(bytes(buf[at:at + n]))
        at += n
    if at != len(buf):
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"input '{name}': {len(buf) - at} bytes after the elements")
    return np.array(out, dtype=object)


def encode_bytes(arr):
    return b"".join(struct.pack("<I", len(b)) + b for b in arr.reshape(-1))


class Server:
    def __init__(self, pb, dirpath, args):
        self.pb, self.dir, self.args = pb, dirpath, args
        self.lock = threading.Lock()
        self.stats, self.dirty = {}, False
        self.running = {}
        self.pending_unavailable = {}
        self.control_mtime, self.control = None, {}
        self.slow_gate = threading.Semaphore(args["slow_concurrency"])
        self.models = {m.name: m for m in [
            Model("identity", [("x", "FP32", [-1, -1])], [("y", "FP32", [-1, -1])], lambda t: {"y": t["x"]}),
            Model("linear", [("x", "FP32", [-1, 4])], [("y", "FP32", [-1, 2])],
                  lambda t: {"y": (t["x"] @ W + B).astype(np.float32)}),
            Model("linear16", [("x", "FP32", [-1, 16])], [("y", "FP32", [-1, 2])],
                  lambda t: {"y": (t["x"] @ W16 + B).astype(np.float32)}),
            Model("strlen", [("text", "BYTES", [-1])], [("len", "INT64", [-1])],
                  lambda t: {"len": np.array([len(b) for b in t["text"]], dtype=np.int64)}),
            Model("slow", [("x", "FP32", [-1, 1])], [("y", "FP32", [-1, 1])], self.slow),
        ]}

    # ---- fault injection and counters -----------------------------------
    def read_control(self):
        path = os.path.join(self.dir, "control.json")
        try:
            st = os.stat(path)
            mtime = (st.st_ino, st.st_mtime_ns)   # each inject is a new file: a new inode
        except FileNotFoundError:
            self.control, self.control_mtime = {}, None
            return
        if mtime != self.control_mtime:
            with open(path) as f:
                self.control = json.load(f)
            self.control_mtime = mtime
            self.pending_unavailable = {k: int(v.get("unavailable", 0)) for k, v in self.control.items()}

    def injected(self, model):
        with self.lock:
            self.read_control()
            for key in (model, "*"):
                if self.pending_unavailable.get(key, 0) > 0:
                    self.pending_unavailable[key] -= 1
                    return "unavailable", 0, False
            opts = self.control.get(model, self.control.get("*", {}))
            return None, float(opts.get("delay_ms", 0)), bool(opts.get("typed", False))

    def echo_auth(self, model, ctx):
        with self.lock:
            self.read_control()
            opts = self.control.get(model, self.control.get("*", {}))
        if opts.get("echo_auth"):
            auth = [v for k, v in ctx.invocation_metadata() if k == "authorization"]
            form = opts.get("echo_auth")
            cred = auth[0].split(" ", 1)[-1] if auth else ""
            if form == "json":
                auth = '{"token": "%s"}' % cred.replace("/", "\\/")
            elif form == "u":
                auth = "".join("\\u%04x" % ord(ch) for ch in cred)
            elif form == "b64":
                auth = base64.b64encode(("user:" + cred).encode()).decode()
            raise Abort(grpc.StatusCode.UNAUTHENTICATED, f"token rejected: {auth}")

    def count(self, model, rows, delta):
        with self.lock:
            s = self.stats.setdefault(model, {"requests": 0, "rows": 0, "max_batch": 0, "max_concurrent": 0})
            self.running[model] = self.running.get(model, 0) + delta
            if delta > 0:
                s["requests"] += 1
                s["rows"] += rows
                s["max_batch"] = max(s["max_batch"], rows)
                s["max_concurrent"] = max(s["max_concurrent"], self.running[model])
            self.dirty = True

    def dump_stats(self):
        while True:
            time.sleep(0.1)
            with self.lock:
                if not self.dirty:
                    continue
                text, self.dirty = json.dumps(self.stats), False
            tmp = os.path.join(self.dir, "stats.json.tmp")
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, os.path.join(self.dir, "stats.json"))

    def slow(self, t):
        rows = t["x"].shape[0]
        with self.slow_gate:
            time.sleep((self.args["slow_base_ms"] + rows * self.args["slow_row_ms"]) / 1000.0)
        return {"y": (t["x"] * 2).astype(np.float32)}

    # ---- validation ------------------------------------------------------
    def model(self, name, version):
        m = self.models.get(name)
        if m is None:
            raise Abort(grpc.StatusCode.NOT_FOUND, f"Request for unknown model: '{name}' is not found")
        if version not in ("", "1"):
            raise Abort(grpc.StatusCode.NOT_FOUND, f"Request for unknown model: '{name}' version {version} is not found")
        return m

    @staticmethod
    def check_shape(name, shape, want):
        if len(shape) != len(want):
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"unexpected shape for input '{name}', model expects {want}, got {list(shape)}")
        if not 1 <= shape[0] <= MAX_BATCH:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"input '{name}': batch size {shape[0]} is outside 1..{MAX_BATCH}")
        for have, w in zip(shape[1:], want[1:]):
            if have < 0 or (w != -1 and have != w):
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                            f"unexpected shape for input '{name}', model expects {want}, got {list(shape)}")

    def decode_input(self, req, i, t, dtype):
        shape = list(t.shape)
        count = 1
        for d in shape:   # Python ints: a huge shape cannot wrap around
            count *= d
        if count > 1 << 28:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"input '{t.name}': shape {shape} is too large")
        if len(req.raw_input_contents) > 0:
            if t.HasField("contents"):
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"input '{t.name}' has both raw and typed contents")
            raw = req.raw_input_contents[i]
            if dtype == "BYTES":
                return decode_bytes(raw, count, t.name).reshape(shape)
            need = count * NP[dtype].itemsize
            if len(raw) != need:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                            f"input '{t.name}': raw contents are {len(raw)} bytes, shape {shape} of {dtype} needs {need}")
            return np.frombuffer(raw, dtype=NP[dtype]).reshape(shape)
        if dtype not in TYPED:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"input '{t.name}': {dtype} needs raw contents")
        vals = list(getattr(t.contents, TYPED[dtype]))
        if len(vals) != count:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"input '{t.name}': {len(vals)} elements, shape {shape} needs {count}")
        if dtype == "BYTES":
            return np.array(vals, dtype=object).reshape(shape)
        return np.array(vals, dtype=NP[dtype]).reshape(shape)

    def decode_inputs(self, m, req):
        names = [t.name for t in req.inputs]
        if len(set(names)) != len(names):
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"an input appears twice in {names}")
        if req.raw_input_contents and len(req.raw_input_contents) != len(req.inputs):
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"{len(req.raw_input_contents)} raw contents for {len(req.inputs)} inputs")
        want = {n: (d, s) for n, d, s in m.inputs}
        tensors = {}
        for i, t in enumerate(req.inputs):
            if t.name not in want:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"unexpected inference input '{t.name}' for model '{m.name}'")
            dtype, shape = want[t.name]
            if t.datatype != dtype:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                            f"inference input '{t.name}' data-type is '{t.datatype}', but model '{m.name}' expects '{dtype}'")
            self.check_shape(t.name, list(t.shape), shape)
            tensors[t.name] = self.decode_input(req, i, t, dtype)
        for n in want:
            if n not in tensors:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"expected input '{n}' for model '{m.name}'")
        batch = {v.shape[0] for v in tensors.values()}
        if len(batch) != 1:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"inputs disagree on the batch size: {sorted(batch)}")
        for o in req.outputs:
            if o.name not in [n for n, _, _ in m.outputs]:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT, f"unexpected inference output '{o.name}' for model '{m.name}'")
        return tensors, batch.pop()

    # ---- the service -----------------------------------------------------
    def infer(self, req, ctx):
        m = self.model(req.model_name, req.model_version)
        self.echo_auth(m.name, ctx)
        fault, delay_ms, typed = self.injected(m.name)
        if fault == "unavailable":
            raise Abort(grpc.StatusCode.UNAVAILABLE, f"model '{m.name}' is unavailable (injected)")
        if delay_ms:
            time.sleep(delay_ms / 1000.0)
        tensors, rows = self.decode_inputs(m, req)
        self.count(m.name, rows, 1)
        try:
            result = m.fn(tensors)
        finally:
            self.count(m.name, rows, -1)
        wanted = [o.name for o in req.outputs] or [n for n, _, _ in m.outputs]
        resp = self.pb.ModelInferResponse(model_name=m.name, model_version="1", id=req.id)
        for name, dtype, _ in m.outputs:
            if name not in wanted:
                continue
            arr = result[name]
            t = resp.outputs.add(name=name, datatype=dtype, shape=list(arr.shape))
            if typed:
                getattr(t.contents, TYPED[dtype]).extend(arr.reshape(-1).tolist())
            elif dtype == "BYTES":
                resp.raw_output_contents.append(encode_bytes(arr))
            else:
                resp.raw_output_contents.append(np.ascontiguousarray(arr, dtype=NP[dtype]).tobytes())
        return resp

    def metadata(self, req, ctx):
        m = self.model(req.name, req.version)
        r = self.pb.ModelMetadataResponse(name=m.name, versions=["1"], platform="fnworker_test")
        for n, d, s in m.inputs:
            r.inputs.add(name=n, datatype=d, shape=s)
        for n, d, s in m.outputs:
            r.outputs.add(name=n, datatype=d, shape=s)
        return r

    def server_ready(self, req, ctx):
        with self.lock:
            self.read_control()
            delay = float(self.control.get("*", {}).get("ready_delay_ms", 0))
        if delay:
            time.sleep(delay / 1000.0)      # a server that hangs at ServerReady
        return self.pb.ServerReadyResponse(ready=True)

    def model_ready(self, req, ctx):
        return self.pb.ModelReadyResponse(ready=req.name in self.models and req.version in ("", "1"))

    def handlers(self):
        pb = self.pb

        def wrap(fn):
            def call(req, ctx):
                try:
                    return fn(req, ctx)
                except Abort as e:
                    ctx.abort(e.code, e.msg)
                except (ValueError, TypeError, OverflowError) as e:
                    ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad request: {e}")
            return call

        methods = {
            "ServerLive": (lambda r, c: pb.ServerLiveResponse(live=True), pb.ServerLiveRequest, pb.ServerLiveResponse),
            "ServerReady": (self.server_ready, pb.ServerReadyRequest, pb.ServerReadyResponse),
            "ModelReady": (self.model_ready, pb.ModelReadyRequest, pb.ModelReadyResponse),
            "ModelMetadata": (self.metadata, pb.ModelMetadataRequest, pb.ModelMetadataResponse),
            "ModelInfer": (self.infer, pb.ModelInferRequest, pb.ModelInferResponse),
        }
        return grpc.method_handlers_generic_handler("inference.GRPCInferenceService", {
            name: grpc.unary_unary_rpc_method_handler(wrap(fn), request_deserializer=req.FromString,
                                                      response_serializer=resp.SerializeToString)
            for name, (fn, req, resp) in methods.items()})


def parse_args(argv):
    if len(argv) < 3:
        sys.exit("usage: kserve_server.py DIR PROTO_ROOT [--workers N] [--slow-base-ms MS] "
                 "[--slow-row-ms MS] [--slow-concurrency N] [--port P]")
    args = {"workers": 16, "slow_base_ms": 20.0, "slow_row_ms": 0.2, "slow_concurrency": 2, "port": 0}
    rest = argv[3:]
    for k, v in zip(rest[::2], rest[1::2]):
        key = k.lstrip("-").replace("-", "_")
        if key not in args:
            sys.exit(f"kserve_server.py: unknown option {k}")
        args[key] = type(args[key])(v)
    return argv[1], argv[2], args


def main():
    dirpath, proto_root, args = parse_args(sys.argv)
    pb = load_messages(dirpath, proto_root)
    srv = Server(pb, dirpath, args)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args["workers"]),
                         options=[("grpc.max_receive_message_length", 64 << 20),
                                  ("grpc.max_send_message_length", 64 << 20)])
    server.add_generic_rpc_handlers((srv.handlers(),))
    port = server.add_insecure_port(f"127.0.0.1:{args['port']}")
    server.start()
    threading.Thread(target=srv.dump_stats, daemon=True).start()
    tmp = os.path.join(dirpath, "kserve.port.tmp")
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, os.path.join(dirpath, "kserve.port"))
    server.wait_for_termination()


if __name__ == "__main__":
    main()
