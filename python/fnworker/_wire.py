"""Protocol buffers wire encoding, written by hand so the package needs no
protobuf library: just the pieces an OperationSpec and a Flink TypeInfo use
(varint, 64-bit and length-delimited fields, proto3 defaults left out)."""

import struct

VARINT = 0
FIXED64 = 1
LEN = 2


def varint(value):
    """The base-128 varint of a non-negative int below 2**64 (a negative int
    is written as its 64-bit two's complement, as protobuf writes int32/int64)."""
    if value < 0:
        value += 1 << 64
    if not 0 <= value < 1 << 64:
        raise ValueError("varint out of range: %d" % value)
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(field, wire_type):
    return varint(field << 3 | wire_type)


def int_field(field, value):
    """An int32/int64/enum/bool field; proto3 leaves out 0."""
    value = int(value)
    return key(field, VARINT) + varint(value) if value else b""


def double_field(field, value):
    """A double field; proto3 leaves out 0.0."""
    return key(field, FIXED64) + struct.pack("<d", value) if value else b""


def bytes_field(field, data, keep_empty=False):
    """A string, bytes or message field; proto3 leaves out an empty string,
    a set (oneof or sub-message) field is written even when empty."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data and not keep_empty:
        return b""
    return key(field, LEN) + varint(len(data)) + bytes(data)


def message_field(field, body):
    """A sub-message field that is set (written even when its body is empty)."""
    return bytes_field(field, body, keep_empty=True)
