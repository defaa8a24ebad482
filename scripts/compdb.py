#!/usr/bin/env python3
"""scripts/compdb.py — writes compile_commands.json (the compilation
database clangd, clang-tidy and editors read) from the Makefile's own
commands: `make -n -B` prints every compile of the targets given without
running one, and each compiler line that names a .c file becomes one entry
per file (link-only arguments dropped, `-c FILE -o OBJ` kept). No other tool.

    python3 scripts/compdb.py OUT [MAKE ARGUMENTS AND TARGETS...]   (`make compdb`)
"""
import json
import os
import shlex
import subprocess
import sys

COMPILERS = ("cc", "gcc", "clang", "c99", "c11")


def is_compiler(word):
    base = os.path.basename(word)
    return base in COMPILERS or base.startswith(("gcc-", "clang-")) or base.endswith(("-gcc", "-cc"))


def logical_lines(text):
    """make -n prints a recipe line continued with backslash-newline as is."""
    line = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            line += raw[:-1] + " "
            continue
        yield line + raw
        line = ""
    if line:
        yield line


def entries(line, root):
    try:
        words = shlex.split(line)
    except ValueError:
        return []
    if not words or not is_compiler(words[0]):
        return []
    sources = [w for w in words[1:] if w.endswith(".c") and not w.startswith("-")]
    if not sources:
        return []
    flags, skip, obj_out = [], False, None
    for i, w in enumerate(words[1:], 1):
        if skip:
            skip = False
            continue
        if w == "-o":
            skip = True
            obj_out = words[i + 1] if i + 1 < len(words) else None
            continue
        if w in sources or w in ("-c", "-shared", "-r", "-nostdlib", "-MMD", "-MP") or \
                w.startswith(("-l", "-Wl,", "-L")):
            continue
        if not w.startswith("-"):
            continue          # archives, objects, linker inputs
        flags.append(w)
    out = []
    for src in sources:
        # the object make writes for a plain compile; one per source otherwise
        obj = obj_out if "-c" in words and len(sources) == 1 and obj_out else os.path.splitext(src)[0] + ".o"
        out.append({
            "directory": root,
            "file": os.path.join(root, src),
            "arguments": [words[0]] + flags + ["-c", src, "-o", obj],
        })
    return out


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    out_path = argv[1]
    root = os.getcwd()
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    run = subprocess.run(["make", "-n", "-B", "--no-print-directory"] + argv[2:],
                         capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        sys.stderr.write("compdb.py: make -n failed; nothing written\n")
        return 1
    db, seen = [], set()
    for line in logical_lines(run.stdout):
        for e in entries(line, root):
            if e["file"] not in seen:
                seen.add(e["file"])
                db.append(e)
    if not db:
        sys.stderr.write("compdb.py: make -n printed no compile command; nothing written\n")
        return 1
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(db, f, indent=1)
        f.write("\n")
    os.replace(tmp, out_path)
    print("compdb.py: %s, %d files" % (out_path, len(db)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
