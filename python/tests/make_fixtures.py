"""Writes fnworker payload pickles for the C reader's tests and the fuzz
seed corpus: for each spec below, the pickle CPython's pickle and
cloudpickle write at protocols 2 to 5 (NAME.pickle) next to the
OperationSpec it carries (NAME.spec), plus pickles fnworker must refuse
(refuse-*.pickle). Without cloudpickle only pickle's are written.

    python3 python/tests/make_fixtures.py DIR [--small]

--small leaves out the large spec (for the committed corpus)."""

import os
import pickle
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fnworker  # noqa: E402
from fnworker import _wire  # noqa: E402

try:
    import cloudpickle
except ImportError:
    cloudpickle = None


def specs(small):
    out = {
        "echo": fnworker.Operation("echo").to_spec(),
        "project": fnworker.Operation("project", fields="name,id").with_settings(
            output_type="ROW<name:STRING,id:LONG>").to_spec(),
        # every byte value (an unknown field 15 that parsers skip): protocol 2
        # writes the bytes as latin1 text
        "latin1": fnworker.Operation("echo", fail_message="\u00e9\u00ff").with_settings(
            capacity=300, timeout_ms=7).to_spec() + _wire.bytes_field(15, bytes(range(256))),
        "batch": fnworker.Operation("echo", delay_ms=1).with_settings(
            mode="BATCH", batch_size=64, batch_timeout_ms=5, timeout_ms=1000,
            output_mode="UNORDERED", retry=fnworker.RetryStrategy.exponential_backoff(
                3, 10, 100, 2.0, retry_on_empty_result=True)).to_spec(),
    }
    if not small:   # over 64 KiB: CPython writes the bytes outside its frames
        out["big"] = fnworker.Operation("echo", fail_message="x" * 70000).to_spec()
    return out


def refused():
    # a user's function, as a job script defines it (compiled here so the
    # pickle holds no path of this machine)
    job = {"__name__": "__main__"}
    exec(compile("def plain_function(x):\n    return x\n", "job.py", "exec"), job)
    plain_function = job["plain_function"]
    out = {"refuse-builtins-len": pickle.dumps(len, protocol=4),
           "refuse-tuple": pickle.dumps((fnworker.run_in_fnworker, b"spec"), protocol=5)}
    if cloudpickle is not None:
        out["refuse-cloudpickle-function"] = cloudpickle.dumps(plain_function)
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out_dir, small = argv[1], "--small" in argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    picklers = [("pickle", pickle.dumps)]
    if cloudpickle is not None:
        picklers.append(("cloudpickle", cloudpickle.dumps))
    files = {}
    for spec_name, spec in specs(small).items():
        fn = fnworker.FnworkerFunction(spec)
        for lib, dumps in picklers:
            for proto in (2, 3, 4, 5):
                name = "%s-p%d-%s" % (lib, proto, spec_name)
                files[name + ".pickle"] = dumps(fn, protocol=proto)
                files[name + ".spec"] = spec
    for name, data in refused().items():
        files[name + ".pickle"] = data
    for name, data in sorted(files.items()):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
    print("%d files in %s%s" % (len(files), out_dir, "" if cloudpickle else " (no cloudpickle)"))


if __name__ == "__main__":
    main(sys.argv)
