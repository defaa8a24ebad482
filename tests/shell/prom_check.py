"""tests/shell/prom_check.py — a strict reader of the Prometheus text
exposition format 0.0.4, for the pool's /metrics answer: every sample line
parses (name, labels with only \\\\ \\" \\n escapes, a number), each family has
one HELP and one TYPE before its samples and its samples follow each other,
no series twice, and a histogram's buckets are cumulative with le="+Inf"
equal to its _count. Prints the problems and exits 1; with --dump NAME
prints the samples of family NAME as `labels<TAB>value` lines.
  python3 tests/shell/prom_check.py FILE [--dump NAME]"""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE = re.compile(r"^(%s)(\{(.*)\})? (\S+)$" % NAME)
LABEL = re.compile(r'(%s)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)' % r"[a-zA-Z_][a-zA-Z0-9_]*")
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count", ""),
            "counter": ("",), "gauge": ("",)}


def labels_of(text):
    out, at = [], 0
    while at < len(text):
        m = LABEL.match(text, at)
        if not m:
            raise ValueError("bad labels at %r" % text[at:at + 40])
        out.append((m.group(1), m.group(2)))
        at = m.end()
    return out


def read(path):
    problems, families, samples, order = [], {}, [], []
    with open(path, encoding="utf-8") as f:   # must be UTF-8
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for no, line in enumerate(lines, 1):
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            fam = families.setdefault(parts[2], {})
            key = parts[1]
            if key in fam:
                problems.append("line %d: second %s for %s" % (no, key, parts[2]))
            fam[key] = parts[3] if len(parts) > 3 else ""
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append("line %d does not parse: %r" % (no, line[:120]))
            continue
        try:
            labels = labels_of(m.group(3) or "")
            value = float(m.group(4))
        except ValueError as e:
            problems.append("line %d: %s" % (no, e))
            continue
        name = m.group(1)
        fam = None
        for cand, info in families.items():
            for suf in SUFFIXES.get(info.get("TYPE", ""), ("",)):
                if name == cand + suf:
                    fam = cand
        if fam is None:
            problems.append("line %d: %s has no HELP/TYPE before it" % (no, name))
            continue
        if order and order[-1] != fam and fam in order:
            problems.append("line %d: family %s is split" % (no, fam))
        if not order or order[-1] != fam:
            order.append(fam)
        samples.append((fam, name, tuple(labels), value))
    seen = set()
    for fam, name, labels, value in samples:
        if (name, labels) in seen:
            problems.append("series twice: %s%s" % (name, labels))
        seen.add((name, labels))
    for fam, info in families.items():
        if info.get("TYPE") != "histogram":
            continue
        series = {}
        for f2, name, labels, value in samples:
            if f2 == fam:
                base = tuple(l for l in labels if l[0] != "le")
                series.setdefault(base, []).append((name, dict(labels).get("le"), value))
        for base, rows in series.items():
            buckets = [(le, v) for n, le, v in rows if n.endswith("_bucket")]
            count = [v for n, le, v in rows if n.endswith("_count")]
            vals = [v for le, v in buckets]
            if vals != sorted(vals) or not buckets or buckets[-1][0] != "+Inf" or count != [buckets[-1][1]]:
                problems.append("histogram %s%s: buckets %s, count %s" % (fam, base, buckets, count))
    return problems, samples


def main():
    problems, samples = read(sys.argv[1])
    if "--dump" in sys.argv:
        want = sys.argv[sys.argv.index("--dump") + 1]
        for fam, name, labels, value in samples:
            if name == want:
                print("%s\t%s" % (",".join("%s=%s" % l for l in labels), repr(value)))
    for p in problems:
        print("PROBLEM", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
