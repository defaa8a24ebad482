"""The payload pickle: with CPython's pickle and with cloudpickle (what
PyFlink calls) at protocols 2 to 5 it is one call of
fnworker._payload.run_in_fnworker on the OperationSpec bytes, in the opcodes
fnworker's reader accepts; unpickled by Python it raises the message that
names PYFLINK_UDF_RUNNER_DIR. operation_spec_of, which the build-time
checks use on the Java operators' payloads, reads back exactly that call
and nothing else."""

import os
import pickle
import pickletools
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fnworker  # noqa: E402

try:
    import cloudpickle
except ImportError:   # Debian: python3-cloudpickle (scripts/install-deps.sh installs it)
    cloudpickle = None

SPEC = fnworker.Operation("echo", delay_ms=1).with_settings(capacity=7).to_spec()
MEMO = {"PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE", "FRAME"}


def dumpers():
    out = [("pickle", pickle.dumps)]
    if cloudpickle is not None:
        out.append(("cloudpickle", cloudpickle.dumps))
    return out


def significant_ops(data):
    return [(op.name, arg) for op, arg, _ in pickletools.genops(data) if op.name not in MEMO]


class PayloadTest(unittest.TestCase):
    def test_cloudpickle_is_installed(self):
        if cloudpickle is None:
            self.skipTest("cloudpickle missing: install python3-cloudpickle (PyFlink pickles with it)")

    def test_pickle_is_one_call_at_every_protocol(self):
        fn = fnworker.FnworkerFunction(SPEC)
        for lib, dumps in dumpers():
            for proto in (2, 3, 4, 5):
                ops = significant_ops(dumps(fn, protocol=proto))
                where = "%s protocol %d: %s" % (lib, proto, ops)
                self.assertEqual(ops[0], ("PROTO", proto), where)
                if proto < 4:
                    self.assertEqual(ops[1], ("GLOBAL", "fnworker._payload run_in_fnworker"), where)
                    rest = ops[2:]
                else:
                    self.assertEqual(ops[1:4], [("SHORT_BINUNICODE", "fnworker._payload"),
                                                ("SHORT_BINUNICODE", "run_in_fnworker"),
                                                ("STACK_GLOBAL", None)], where)
                    rest = ops[4:]
                if proto == 2:   # bytes as _codecs.encode(text, 'latin1')
                    self.assertEqual(rest[:5], [("GLOBAL", "_codecs encode"),
                                                ("BINUNICODE", SPEC.decode("latin1")),
                                                ("BINUNICODE", "latin1"), ("TUPLE2", None),
                                                ("REDUCE", None)], where)
                    rest = rest[5:]
                else:
                    self.assertEqual(rest[0], ("SHORT_BINBYTES", SPEC), where)
                    rest = rest[1:]
                self.assertEqual(rest, [("TUPLE1", None), ("REDUCE", None), ("STOP", None)], where)

    def test_cloudpickle_default_is_pickle_protocol_5(self):
        if cloudpickle is None:
            self.skipTest("cloudpickle missing")
        fn = fnworker.FnworkerFunction(SPEC)
        self.assertEqual(cloudpickle.dumps(fn), pickle.dumps(fn, protocol=5))

    def test_python_worker_gets_a_clear_error(self):
        for lib, dumps in dumpers():
            data = dumps(fnworker.FnworkerFunction(SPEC))
            with self.assertRaises(RuntimeError, msg=lib) as cm:
                pickle.loads(data)
            self.assertIn("PYFLINK_UDF_RUNNER_DIR", str(cm.exception))
            self.assertIn("pyflink-udf-runner.sh", str(cm.exception))

    def test_function_needs_spec_bytes(self):
        for bad in (b"", "echo", None):
            with self.assertRaises(TypeError):
                fnworker.FnworkerFunction(bad)

    def test_operation_spec_of_reads_back_only_fnworker_payloads(self):
        from fnworker._payload import operation_spec_of
        fn = fnworker.FnworkerFunction(SPEC)
        for lib, dumps in dumpers():
            for proto in (2, 3, 4, 5):
                self.assertEqual(operation_spec_of(dumps(fn, protocol=proto)), SPEC,
                                 "%s protocol %d" % (lib, proto))
        others = [b"", b"\x80", b"not a pickle", pickle.dumps(fnworker.run_in_fnworker),
                  pickle.dumps((fnworker.run_in_fnworker, SPEC)),
                  # run_in_fnworker of an int: refused, not bytes(10**12)
                  b"\x80\x04\x8c\x11fnworker._payload\x8c\x0frun_in_fnworker\x93J\x00\x10\xa5\xd4\x85R.",
                  # any other global is never imported or called
                  b"\x80\x04\x8c\x02os\x8c\x06getpid\x93)R."]
        if cloudpickle is not None:
            others.append(cloudpickle.dumps(lambda row: row))
        for data in others:
            self.assertIsNone(operation_spec_of(data), data)


if __name__ == "__main__":
    unittest.main()
