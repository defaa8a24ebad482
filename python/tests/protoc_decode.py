"""Test helper: decodes bytes with ``protoc --decode`` against fnworker's
.proto files, an independent check of the package's hand-written wire code."""

import os
import shutil
import subprocess
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PROTO_DIR = os.path.join(ROOT, "proto")
PROTOC = shutil.which("protoc")


def decode(data, message="fnworker.v1.OperationSpec", proto="fnworker/v1/operation.proto"):
    """protoc's text form of data as message (fields in number order)."""
    if PROTOC is None:
        raise unittest.SkipTest("protoc is not installed (Debian: protobuf-compiler)")
    out = subprocess.run([PROTOC, "--decode=" + message, "-I", PROTO_DIR, proto], input=data,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if out.returncode != 0:
        raise AssertionError("protoc --decode failed: " + out.stderr.decode())
    return out.stdout.decode()


def flat(text):
    """protoc's text form on one line with single spaces, for comparisons."""
    return " ".join(text.split())
