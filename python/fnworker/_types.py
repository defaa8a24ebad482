"""Flink TypeInfo (org.apache.flink.fn_execution.v1.TypeInfo) bytes for an
OperationSpec's output_type, from a PyFlink ``Types.*`` object or from a
string in the text form fnworker's harness uses, e.g.
``ROW<id:LONG,tags:LIST<STRING>,m:MAP<STRING,INT>,t:TUPLE<INT,DOUBLE>>``.

PyFlink objects are recognised by their class name and the attributes
PyFlink's own classes keep (``_basic_type``, ``_field_types``, ...), so this
module does not import PyFlink. A type it does not know (AVRO, a type
without a proto) gives ``None``: the spec then leaves output_type unset and
the worker takes the operator's output type from Flink's coders.
"""

from . import _wire

TYPE_NAMES = (
    "ROW", "STRING", "BYTE", "BOOLEAN", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "CHAR",
    "BIG_INT", "BIG_DEC", "SQL_DATE", "SQL_TIME", "SQL_TIMESTAMP", "BASIC_ARRAY",
    "PRIMITIVE_ARRAY", "TUPLE", "LIST", "MAP", "PICKLED_BYTES", "OBJECT_ARRAY", "INSTANT",
    "AVRO", "LOCAL_DATE", "LOCAL_TIME", "LOCAL_DATETIME", "LOCAL_ZONED_TIMESTAMP")
NUMBER = {name: i for i, name in enumerate(TYPE_NAMES)}
ATOMIC = ("STRING", "BYTE", "BOOLEAN", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "CHAR",
          "BIG_INT", "BIG_DEC", "SQL_DATE", "SQL_TIME", "SQL_TIMESTAMP", "INSTANT",
          "LOCAL_DATE", "LOCAL_TIME", "LOCAL_DATETIME", "PICKLED_BYTES")
ONE_ELEMENT = ("LIST", "BASIC_ARRAY", "PRIMITIVE_ARRAY", "OBJECT_ARRAY")
PRIMITIVE_ELEMENTS = ("BOOLEAN", "BYTE", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "CHAR")
MAX_DEPTH = 63   # the worker's limit for a data type (64 with the runner row around it)

# ---- the encoding ----------------------------------------------------------------
# A type is a tuple: ("INT",), ("LIST", elem), ("MAP", key, value),
# ("ROW", ((name, type), ...)), ("TUPLE", (type, ...)).


def encode(t):
    """The TypeInfo message bytes of a type tuple."""
    name = t[0]
    out = _wire.int_field(1, NUMBER[name])
    if name in ONE_ELEMENT:
        out += _wire.message_field(2, encode(t[1]))
    elif name == "ROW":
        fields = b"".join(_wire.message_field(1, _wire.bytes_field(1, fname) +
                                              _wire.message_field(2, encode(ft)))
                          for fname, ft in t[1])
        out += _wire.message_field(3, fields)
    elif name == "TUPLE":
        out += _wire.message_field(4, b"".join(_wire.message_field(1, encode(ft)) for ft in t[1]))
    elif name == "MAP":
        out += _wire.message_field(5, _wire.message_field(1, encode(t[1])) +
                                   _wire.message_field(2, encode(t[2])))
    return out


def _check(t, depth=1):
    if depth > MAX_DEPTH:
        raise ValueError("output type nests deeper than %d levels" % MAX_DEPTH)
    name = t[0]
    if name == "PRIMITIVE_ARRAY" and t[1][0] not in PRIMITIVE_ELEMENTS:
        raise ValueError("PRIMITIVE_ARRAY element must be one of %s, not %s"
                         % (", ".join(PRIMITIVE_ELEMENTS), t[1][0]))
    children = (t[1:] if name in ONE_ELEMENT or name == "MAP" else
                [ft for _, ft in t[1]] if name == "ROW" else t[1] if name == "TUPLE" else ())
    for c in children:
        _check(c, depth + 1)
    return t

# ---- the text form -------------------------------------------------------------------


class _Parser(object):
    def __init__(self, text):
        self.s = "".join(text.split())
        self.i = 0

    def fail(self, what):
        raise ValueError("bad output type %r at character %d: %s" % (self.s, self.i, what))

    def word(self):
        j = self.i
        while j < len(self.s) and (self.s[j].isalnum() or self.s[j] in "_$"):
            j += 1
        if j == self.i:
            self.fail("expected a name")
        w, self.i = self.s[self.i:j], j
        return w

    def eat(self, c):
        if self.s[self.i:self.i + 1] != c:
            self.fail("expected '%s'" % c)
        self.i += 1

    def peek(self, c):
        return self.s[self.i:self.i + 1] == c

    def items(self, item):
        out = []
        self.eat("<")
        while not self.peek(">"):
            if out and not self.peek(","):
                self.fail("expected ',' or '>'")
            if out:
                self.i += 1
            out.append(item(len(out)))
        self.eat(">")
        return out

    def field(self, index):
        start = self.i
        w = self.word()
        if self.peek(":"):
            self.i += 1
            return (w, self.type())
        self.i = start
        return ("f%d" % index, self.type())

    def type(self):
        name = self.word().upper()
        if name in ATOMIC:
            return (name,)
        if name in ONE_ELEMENT:
            (elem,) = self.counted(1)
            return (name, elem)
        if name == "MAP":
            k, v = self.counted(2)
            return (name, k, v)
        if name == "ROW":
            return (name, tuple(self.items(self.field)))
        if name == "TUPLE":
            return (name, tuple(self.items(lambda _: self.type())))
        self.fail("unknown type %s (AVRO and LOCAL_ZONED_TIMESTAMP have no text form here)" % name)

    def counted(self, n):
        got = self.items(lambda _: self.type())
        if len(got) != n:
            self.fail("expected %d type parameter%s" % (n, "s" if n > 1 else ""))
        return got

    def parse(self):
        t = self.type()
        if self.i != len(self.s):
            self.fail("unexpected text after the type")
        return t


def parse(text):
    """A type tuple from the text form (whitespace and letter case of type
    names are free; unnamed ROW fields are named f0, f1, ...)."""
    return _check(_Parser(text).parse())

# ---- PyFlink objects ------------------------------------------------------------------

_BY_CLASS = {
    "DateTypeInfo": "SQL_DATE", "TimeTypeInfo": "SQL_TIME", "TimestampTypeInfo": "SQL_TIMESTAMP",
    "InstantTypeInfo": "INSTANT",
    "PickledBytesTypeInfo": "PICKLED_BYTES",
}
# PyFlink has one class for the three java.time types, told apart by _time_type.
_LOCAL_TIMES = {"LOCAL_DATE": "LOCAL_DATE", "LOCAL_TIME": "LOCAL_TIME", "LOCAL_DATE_TIME": "LOCAL_DATETIME"}
_ARRAYS = {"PrimitiveArrayTypeInfo": "PRIMITIVE_ARRAY", "BasicArrayTypeInfo": "BASIC_ARRAY",
           "ObjectArrayTypeInfo": "OBJECT_ARRAY"}


class _Unknown(Exception):
    pass


def _from_pyflink(t):
    if isinstance(t, (list, tuple)):    # PyFlink takes a list of types as an unnamed ROW
        return ("ROW", tuple(("f%d" % i, _from_pyflink(ft)) for i, ft in enumerate(t)))
    cls = type(t).__name__
    if cls in _BY_CLASS:
        return (_BY_CLASS[cls],)
    if cls == "LocalTimeTypeInfo" and getattr(getattr(t, "_time_type", None), "name", None) in _LOCAL_TIMES:
        return (_LOCAL_TIMES[t._time_type.name],)
    if cls == "BasicTypeInfo" and getattr(getattr(t, "_basic_type", None), "name", None) in ATOMIC:
        return (t._basic_type.name,)
    if cls in _ARRAYS and hasattr(t, "_element_type"):
        return (_ARRAYS[cls], _from_pyflink(t._element_type))
    if cls == "ListTypeInfo" and hasattr(t, "elem_type"):
        return ("LIST", _from_pyflink(t.elem_type))
    if cls == "MapTypeInfo" and hasattr(t, "_key_type_info"):
        return ("MAP", _from_pyflink(t._key_type_info), _from_pyflink(t._value_type_info))
    if cls == "RowTypeInfo" and hasattr(t, "_field_types"):
        names = getattr(t, "_field_names", None) or ["f%d" % i for i in range(len(t._field_types))]
        return ("ROW", tuple((n, _from_pyflink(ft)) for n, ft in zip(names, t._field_types)))
    if cls == "TupleTypeInfo" and hasattr(t, "_field_types"):
        return ("TUPLE", tuple(_from_pyflink(ft) for ft in t._field_types))
    raise _Unknown(cls)


def type_info_bytes(t):
    """TypeInfo bytes for t: a text-form string, a PyFlink type object (or a
    list of them, PyFlink's unnamed ROW), or None. None when t is None or a
    PyFlink type this module does not map."""
    if t is None:
        return None
    if isinstance(t, str):
        return encode(parse(t))
    try:
        return encode(_check(_from_pyflink(t)))
    except _Unknown:
        return None
