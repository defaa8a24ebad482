#!/usr/bin/env python3
"""tests/check_floors.py — the product code's floors, checked.

Each product folder may include only itself and the folders below it
(docs/architecture.md, "Floors"):

    base      gRPC and loop plumbing every process shares: the hand-off, the
              completion-queue thread, streaming and unary calls
    codecs    bytes <-> values (Flink serializers, Beam coders), no I/O
    runtime   the async engine: queues, batcher, calls, retries, blocking pool
    ops       the built-in operations and what only they use
    worker    the Fn API process                 pool   the sidecar pool
    main.c    the program, above worker/ and pool/

and no header includes itself through a chain of others (an include
circle). Prints every violation with the line that makes it and exits 1;
prints one line and exits 0 when the tree keeps its floors.
    python3 tests/check_floors.py [ROOT]
"""
import os
import re
import sys

ALLOWED = {
    "base": {"base"},
    "codecs": {"codecs", "base"},
    "runtime": {"runtime", "codecs", "base"},
    "ops": {"ops", "runtime", "codecs", "base"},
    "worker": {"worker", "runtime", "codecs", "base"},
    "pool": {"pool", "codecs", "base"},
    "main.c": {"ops", "worker", "pool", "runtime", "codecs", "base"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def product_files(root):
    for top in ALLOWED:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            yield top, top
        for dirpath, _, names in os.walk(path):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    rel = os.path.relpath(os.path.join(dirpath, n), root)
                    yield top, rel


def includes(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield lineno, m.group(1)


def circles(graph):
    """Every include cycle, once, as a list of files (Tarjan's SCCs)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad, graph, count = [], {}, 0
    for top, rel in product_files(root):
        count += 1
        graph.setdefault(rel, set())
        for lineno, inc in includes(root, rel):
            folder = inc.split("/", 1)[0] if "/" in inc else None
            if folder is None:
                continue  # fnworker.h, generated *.pb-c.h, system headers
            if folder in ("include", "tests", "bench", "examples"):
                bad.append("%s:%d: product code includes %s" % (rel, lineno, inc))
                continue
            if folder not in ALLOWED or folder == "main.c":
                continue  # a generated header (org/..., fnworker/...)
            if folder not in ALLOWED[top]:
                bad.append("%s:%d: %s/ includes %s, a floor above it (%s may include %s)"
                           % (rel, lineno, top, inc, top, ", ".join(sorted(ALLOWED[top]))))
            # A header that exists in the tree becomes an edge of the graph.
            if os.path.exists(os.path.join(root, inc)):
                graph[rel].add(inc)
    for c in circles(graph):
        bad.append("include circle: " + " -> ".join(c + [c[0]]))
    for b in bad:
        print(b)
    if bad:
        print("check_floors: %d violation(s) in %d product files" % (len(bad), count))
        return 1
    print("check_floors: %d product files keep their floors; no include circle" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
