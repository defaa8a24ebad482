#!/usr/bin/env python3
"""tests/servers/dns_server.py — a tiny DNS server for tests, on 127.0.0.1 only.

  dns_server.py FIXTURE PORTFILE

Answers A queries (class IN) over UDP from FIXTURE, lines "name address"
(# starts a comment); a name it does not know gets NXDOMAIN, another query
type an empty answer. Binds a free port and writes it to PORTFILE once it
listens. Exits when its standard input closes, so it never outlives the
test process that started it. Standard library only; nothing leaves loopback.
"""
import socket
import struct
import sys
import threading
import os


def load(path):
    table = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) == 2:
                table.setdefault(line[0].lower().rstrip("."), []).append(socket.inet_aton(line[1]))
    return table


def parse_question(msg):
    labels, i = [], 12
    while msg[i] != 0:
        n = msg[i]
        labels.append(msg[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    qtype, qclass = struct.unpack("!HH", msg[i + 1:i + 5])
    return ".".join(labels).lower(), qtype, qclass, msg[12:i + 5]


def answer(msg, table):
    qid, flags = struct.unpack("!HH", msg[:4])
    name, qtype, qclass, question = parse_question(msg)
    addrs = table.get(name)
    rd = flags & 0x0100
    if addrs is None:
        return struct.pack("!HHHHHH", qid, 0x8080 | rd | 3, 1, 0, 0, 0) + question
    records = [a for a in addrs] if qtype == 1 and qclass == 1 else []
    out = struct.pack("!HHHHHH", qid, 0x8480 | rd, 1, len(records), 0, 0) + question
    for a in records:
        out += struct.pack("!HHHIH", 0xC00C, 1, 1, 60, 4) + a
    return out


def main():
    table = load(sys.argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(sock.getsockname()[1]))
    os.rename(tmp, sys.argv[2])

    def watch_stdin():
        sys.stdin.read()
        os._exit(0)
    threading.Thread(target=watch_stdin, daemon=True).start()
    while True:
        msg, peer = sock.recvfrom(4096)
        try:
            sock.sendto(answer(msg, table), peer)
        except (IndexError, struct.error):
            pass    # not a query we understand: no answer


if __name__ == "__main__":
    main()
