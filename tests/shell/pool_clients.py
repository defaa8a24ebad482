"""Hostile clients for tests/shell/test_pool_security.sh (loopback only).

  pool_clients.py hold ADDR N SECONDS
      opens N connections to the launcher endpoint and holds them, sending
      nothing; prints "opened=O refused=R line=<first ERROR line>" where R
      counts connections the pool answered with an ERROR line and closed.
  pool_clients.py starve HADDR N SECONDS SRC
      N clients from source address SRC (e.g. 127.0.0.2) each send a
      request line and then one header line per second, never ending the
      request, for SECONDS; meanwhile GET /healthz from 127.0.0.1 every
      0.5 s (2 s timeout each). Prints "probes=OK/ALL cut=C longest=S":
      C slow connections the pool closed, S the longest one lived.
"""
import socket
import sys
import threading
import time


def split(addr):
    host, _, port = addr.rpartition(":")
    return host, int(port)


def hold(addr, n, seconds):
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection(split(addr), timeout=2))
        except OSError:
            pass
    time.sleep(seconds)
    refused, line = 0, ""
    for s in socks:
        s.settimeout(0.05)
        try:
            data = s.recv(4096)
        except OSError:
            data = None
        if data and data.startswith(b"ERROR"):
            refused += 1
            line = line or data.decode(errors="replace").strip()
        s.close()
    print("opened=%d refused=%d line=%s" % (len(socks), refused, line))


def probe(haddr):
    try:
        with socket.create_connection(split(haddr), timeout=2) as s:
            s.settimeout(2)
            s.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data.startswith(b"HTTP/1.") and b" 200 " in data.split(b"\r\n", 1)[0]
    except OSError:
        return False


def starve(haddr, n, seconds, src):
    host, port = split(haddr)
    stats = {"cut": 0, "longest": 0.0}
    lock = threading.Lock()
    end = time.time() + seconds

    def slow():
        while time.time() < end:
            start = time.time()
            try:
                s = socket.socket()
                s.bind((src, 0))
                s.settimeout(2)
                s.connect((host, port))
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                while time.time() < end:
                    time.sleep(1)
                    s.sendall(b"X-Slow: 1\r\n")
                s.close()
            except OSError:
                with lock:
                    stats["cut"] += 1
                    stats["longest"] = max(stats["longest"], time.time() - start)
                time.sleep(0.2)

    threads = [threading.Thread(target=slow, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    ok = total = 0
    while time.time() < end - 0.5:
        total += 1
        ok += probe(haddr)
        time.sleep(0.5)
    for t in threads:
        t.join(5)
    print("probes=%d/%d cut=%d longest=%.1f" % (ok, total, stats["cut"], stats["longest"]))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "hold":
        hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "starve":
        starve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    else:
        sys.exit("unknown command " + cmd)
