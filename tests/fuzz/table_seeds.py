"""tests/fuzz/table_seeds.py — derives the Table seeds of the plan, schema and
table_plan corpora from the real descriptors Flink 2.3 sent for SQL jobs
calling fnworker functions (corpus/plan/table-{async-scalar-echo,
scalar-four-constants,scalar-nested-call,function-two-columns}.bin, the
GetProcessBundleDescriptor bytes as captured). Run with a PyFlink venv's
python (it needs apache_beam, pyflink and cloudpickle), from the repository
root:

    build/flink/2.3/venv/bin/python tests/fuzz/table_seeds.py tests/fuzz/corpus

Writes
  plan/table-*-raw-spec.bin     each fnworker pickle replaced by the
                                OperationSpec bytes it carries
  plan/table-derived-python-udfs.bin, table-derived-mixed.bin
                                the four-constant one with a cloudpickled
                                Python function in every function / all but
                                the first (relayed / refused as mixed)
  plan/finding-relay-rewrite-{port,timer}-without-url.bin
                                the relayed one with its source's, or a
                                timer, ApiServiceDescriptor without a url
  schema/flink23-flatten-row-N.bin
                                byte 0, then each distinct coder Schema
  table_plan/table-*.bin        byte 0 the URN (0 scalar, 1 async scalar,
                                2 table), the input and output coders'
                                CoderInfoDescriptor behind a big-endian u16
                                length each, then the UserDefinedFunctions
  table_plan/refuse-*.bin       a scalar operator read as a table function
                                and the reverse
"""
import os
import pickletools
import struct
import sys

import cloudpickle
from apache_beam.portability.api import beam_fn_api_pb2 as fn
from pyflink.fn_execution import flink_fn_execution_pb2 as flink

REAL = ['table-async-scalar-echo', 'table-scalar-four-constants', 'table-scalar-nested-call',
        'table-function-two-columns']
URNS = ['flink:transform:scalar_function:v1', 'flink:transform:async_scalar_function:v1',
        'flink:transform:table_function:v1']
SOURCE, SINK = 'beam:runner:source:v1', 'beam:runner:sink:v1'


def load(path):
    with open(path, 'rb') as f:
        return fn.ProcessBundleDescriptor.FromString(f.read())


def save(path, data):
    with open(path, 'wb') as f:
        f.write(data)


def map_udfs(d, fix):
    """d with fix(index, udf) applied to every top-level function of its Table transform."""
    out = fn.ProcessBundleDescriptor()
    out.CopyFrom(d)
    for t in out.transforms.values():
        if t.spec.urn in URNS:
            u = flink.UserDefinedFunctions.FromString(t.spec.payload)
            for i, x in enumerate(u.udfs):
                fix(i, x)
            t.spec.payload = u.SerializeToString()
    return out


def spec_bytes(payload):
    for op, arg, _ in pickletools.genops(payload):
        if op.name in ('SHORT_BINBYTES', 'BINBYTES', 'BINBYTES8'):
            return arg
    raise SystemExit('table_seeds.py: a function payload without OperationSpec bytes')


def raw_spec(_, x):
    x.payload = spec_bytes(x.payload)
    for i in x.inputs:
        if i.HasField('udf'):
            raw_spec(0, i.udf)


def plus_one(x):
    return x + 1


def flink_coder(d, cid):
    c = d.coders[cid]
    while not c.spec.urn.startswith('flink:coder'):
        c = d.coders[c.component_coder_ids[0]]
    return c.spec.payload


def main(corpus):
    plan = os.path.join(corpus, 'plan')
    descs = {n: load(os.path.join(plan, n + '.bin')) for n in REAL}
    for n, d in list(descs.items()):
        descs[n + '-raw-spec'] = map_udfs(d, raw_spec)
        save(os.path.join(plan, n + '-raw-spec.bin'), descs[n + '-raw-spec'].SerializeToString())
    base = descs['table-scalar-four-constants']
    py = map_udfs(base, lambda i, x: setattr(x, 'payload', cloudpickle.dumps(plus_one)))
    save(os.path.join(plan, 'table-derived-python-udfs.bin'), py.SerializeToString())
    mixed = map_udfs(base, lambda i, x: i and setattr(x, 'payload', cloudpickle.dumps(plus_one)))
    save(os.path.join(plan, 'table-derived-mixed.bin'), mixed.SerializeToString())
    port = fn.ProcessBundleDescriptor()
    port.CopyFrom(py)
    for t in port.transforms.values():
        if t.spec.urn == SOURCE:
            p = fn.RemoteGrpcPort.FromString(t.spec.payload)
            p.api_service_descriptor.url = ''
            p.api_service_descriptor.SetInParent()
            t.spec.payload = p.SerializeToString()
    save(os.path.join(plan, 'finding-relay-rewrite-port-without-url.bin'), port.SerializeToString())
    timer = fn.ProcessBundleDescriptor()
    timer.CopyFrom(py)
    timer.timer_api_service_descriptor.SetInParent()
    save(os.path.join(plan, 'finding-relay-rewrite-timer-without-url.bin'), timer.SerializeToString())

    seen = []
    tp = os.path.join(corpus, 'table_plan')
    os.makedirs(tp, exist_ok=True)
    for n, d in descs.items():
        coders, tf = {}, None
        for t in d.transforms.values():
            if t.spec.urn in (SOURCE, SINK):
                coders[t.spec.urn] = flink_coder(d, fn.RemoteGrpcPort.FromString(t.spec.payload).coder_id)
            elif t.spec.urn in URNS:
                tf = t
        for ci in coders.values():
            c = flink.CoderInfoDescriptor.FromString(ci)
            s = getattr(c, c.WhichOneof('data_type')).schema.SerializeToString()
            if s not in seen:
                seen.append(s)
                save(os.path.join(corpus, 'schema', 'flink23-flatten-row-%d.bin' % len(seen)), b'\0' + s)
        ci_in, ci_out = coders[SOURCE], coders[SINK]
        body = struct.pack('>H', len(ci_in)) + ci_in + struct.pack('>H', len(ci_out)) + ci_out + tf.spec.payload
        urn = URNS.index(tf.spec.urn)
        save(os.path.join(tp, n + '.bin'), bytes([urn]) + body)
        if n == 'table-scalar-nested-call-raw-spec':
            save(os.path.join(tp, 'refuse-scalar-as-table-function.bin'), b'\2' + body)
        if n == 'table-function-two-columns-raw-spec':
            save(os.path.join(tp, 'refuse-table-function-as-scalar.bin'), b'\0' + body)


if __name__ == '__main__':
    if len(sys.argv) != 2:
        raise SystemExit('usage: table_seeds.py CORPUS_DIR')
    main(sys.argv[1])
