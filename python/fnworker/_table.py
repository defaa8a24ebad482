"""``fnworker.udf`` and ``fnworker.udtf``: a native operation as a Flink SQL /
Table API function. Each returns PyFlink's own function wrapper
(pyflink/table/udf.py: UserDefinedScalarFunctionWrapper,
UserDefinedAsyncScalarFunctionWrapper on PyFlink 2.x with jvm_async=True,
UserDefinedTableFunctionWrapper), so PyFlink registers it as it registers
any Python function: ``t_env.create_temporary_function``, ``call(...)``,
``CREATE TEMPORARY SYSTEM FUNCTION ... LANGUAGE PYTHON``. The function
inside is a ScalarFunction (TableFunction, AsyncScalarFunction) subclass,
so PyFlink pickles it as it is (it wraps anything else in a
DelegatingScalarFunction first), and its ``__reduce__`` is the fixed form of
the DataStream path (``_payload``): ``run_in_fnworker(<OperationSpec>)``.
The spec carries the operation's settings and the Table fields
result_type, argument_names and result_field (proto/fnworker/v1/operation.proto).
PyFlink is imported only when one of these is called."""

from . import _sqltypes
from . import _wire
from ._payload import NOT_IN_FNWORKER, run_in_fnworker
from ._spec import Operation, with_resilience

# Operations whose output row is their input row: their result is an argument.
PASS_THROUGH = ("identity", "echo")
DEFAULT_RESULT_FIELD = "result"

_CLASSES = {}


def _pyflink_udf():
    try:
        from pyflink.table import udf as pudf
    except ImportError as e:
        raise ImportError("fnworker.udf and fnworker.udtf build PyFlink Table functions and need "
                          "PyFlink (apache-flink) installed: %s" % e)
    return pudf


def _pyflink_version():
    try:
        from pyflink.version import __version__
        return __version__
    except ImportError:
        return "unknown"


def _function_class(kind):
    """The PyFlink function class fnworker's functions are made of ("scalar",
    "async" or "table"), created once PyFlink is imported."""
    if kind in _CLASSES:
        return _CLASSES[kind]
    pudf = _pyflink_udf()
    base = {"scalar": pudf.ScalarFunction, "table": pudf.TableFunction,
            "async": getattr(pudf, "AsyncScalarFunction", None)}[kind]

    class Function(base):
        """A fnworker operation as a PyFlink function: pickled as
        run_in_fnworker(<OperationSpec>), never run in Python."""

        def __init__(self, operation_spec, deterministic):
            self.operation_spec = operation_spec
            self._fnworker_deterministic = deterministic

        def is_deterministic(self):
            return self._fnworker_deterministic

        def __reduce__(self):
            return (run_in_fnworker, (self.operation_spec,))

        def __repr__(self):
            return "fnworker %s function (<OperationSpec of %d bytes>)" % (
                kind, len(self.operation_spec))

    if kind == "async":
        async def eval(self, *args):
            raise RuntimeError(NOT_IN_FNWORKER)
    else:
        def eval(self, *args):
            raise RuntimeError(NOT_IN_FNWORKER)
    Function.eval = eval
    Function.__abstractmethods__ = frozenset()
    Function.__name__ = Function.__qualname__ = {
        "scalar": "FnworkerScalarFunction", "async": "FnworkerAsyncScalarFunction",
        "table": "FnworkerTableFunction"}[kind]
    _CLASSES[kind] = Function
    return Function


def _names(argument_names):
    if argument_names is None:
        return []
    if isinstance(argument_names, str):
        raise TypeError("argument_names must be a list of names, got the string %r"
                        % (argument_names,))
    names = list(argument_names)
    for n in names:
        if not isinstance(n, str) or not n:
            raise ValueError("argument names must be non-empty strings, got %r" % (n,))
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError("argument names must differ, %s is given twice" % ", ".join(dup))
    return names


def _split_outer(text):
    """kserve's comma-separated mappings (commas inside [...] belong to the dimensions)."""
    items, depth, cur = [], 0, ""
    for c in text:
        depth += (c == "[") - (c == "]")
        if c == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += c
    return [i.strip() for i in items + [cur] if i.strip()]


def inferred_result_field(operation, names):
    """The output field of a scalar function's result when the caller names
    none: the argument a pass-through operation returns (the first), the one
    field a service operation fills (redis result_field, http's one
    result.<field>, kserve's one output tensor's field), project's one field;
    else "result"."""
    o = operation.options
    if operation.name in PASS_THROUGH:
        return names[0] if names else "arg0"
    if operation.name == "redis" and o.get("result_field"):
        return o["result_field"]
    if operation.name == "http":
        fields = [k[len("result."):] for k in o if k.startswith("result.")]
        if len(fields) == 1:
            return fields[0]
    if operation.name == "kserve" and o.get("outputs"):
        outs = _split_outer(o["outputs"])
        if len(outs) == 1 and "=" in outs[0]:
            return outs[0].rsplit("=", 1)[1].strip()
    if operation.name == "project" and o.get("fields") and "," not in o["fields"]:
        return o["fields"].strip()
    return DEFAULT_RESULT_FIELD


def table_spec(operation, result_type_bytes, names, result_field, argument_types=()):
    """The OperationSpec of a Table function: the operation's own spec with
    result_type (13), argument_names (14), result_field (15) and
    argument_types (16, Schema.FieldType bytes each)."""
    out = operation.to_spec() + _wire.message_field(13, result_type_bytes)
    for n in names:
        out += _wire.bytes_field(14, n, keep_empty=True)
    if result_field and result_field != DEFAULT_RESULT_FIELD:
        out += _wire.bytes_field(15, result_field)
    for t in argument_types:
        out += _wire.message_field(16, t)
    return out


def _input_types(input_types, names):
    """(the list PyFlink's wrapper takes, their Schema.FieldType bytes)."""
    if input_types is None:
        return None, []
    if _sqltypes.is_row(input_types):
        types = [f.data_type for f in input_types.fields]
    elif isinstance(input_types, (list, tuple)):
        types = list(input_types)
    else:
        types = [input_types]
    if not types:
        raise ValueError("input_types is empty; leave it out to take the arguments as Flink types them")
    if names and len(names) != len(types):
        raise ValueError("argument_names has %d names but input_types %d types"
                         % (len(names), len(types)))
    return types, [_sqltypes.field_type(t) for t in types]


def _check_operation(operation):
    if not isinstance(operation, Operation):
        raise TypeError("expected a fnworker.Operation, got %r (fnworker runs native operations, "
                        "not Python functions)" % (operation,))
    if operation.settings.get("input_field"):
        raise ValueError("input_field is a DataStream setting; a Table function's operation takes "
                         "its arguments, named by argument_names")
    if operation.settings.get("output_type") is not None:
        raise ValueError("output_type is a DataStream setting; a Table function's result type is "
                         "its result_type")


def udf(operation, result_type, argument_names=None, result_field=None, name=None,
        deterministic=True, jvm_async=False, input_types=None, **resilience):
    """A Flink SQL / Table API scalar function that runs ``operation`` in
    fnworker: ``t_env.create_temporary_function("score", fnworker.udf(...))``.

    The operation sees the call's arguments as one ROW whose fields are named
    ``argument_names`` (default arg0, arg1, ...). ``result_type`` (a PyFlink
    DataTypes object) is the function's SQL type. When it is a ROW, the
    operation's output row is the result; otherwise the result is the field
    ``result_field`` of the operation's output row (default: see
    ``inferred_result_field``). The operation's settings (capacity,
    timeout_ms, retry, mode BATCH with batch_size/batch_timeout_ms,
    output_mode) drive the calls as in the DataStream helpers. ``jvm_async``:
    Flink's async scalar operator (PyFlink 2.x) instead of the general one.
    ``input_types`` (PyFlink DataTypes, one per argument): Flink casts the
    arguments to them, and fnworker converts SQL literals to them (a literal
    reaches it without its SQL type); unset, the arguments keep Flink's types
    and a literal is typed from its value (integers BIGINT, ...). Keyword
    arguments adaptive_concurrency, concurrency_min, circuit_breaker,
    on_failure and fallback are the resilience settings (docs/resilience.md;
    the fallback of a non-ROW result is {"result": value})."""
    _check_operation(operation)
    operation = with_resilience(operation, resilience, "udf")
    names = _names(argument_names)
    in_types, in_bytes = _input_types(input_types, names)
    type_bytes = _sqltypes.field_type(result_type)
    if _sqltypes.is_row(result_type):
        if result_field is not None:
            raise ValueError("result_field names the result's field of a non-ROW result; the "
                             "result type %r is a ROW: the operation's output row is the result"
                             % (result_type,))
        field = None
    else:
        field = inferred_result_field(operation, names) if result_field is None else result_field
        if not isinstance(field, str) or not field:
            raise ValueError("result_field must be a non-empty field name, got %r" % (field,))
    spec = table_spec(operation, type_bytes, names, field, in_bytes)
    pudf = _pyflink_udf()
    name = name or "fnworker_" + operation.name
    if jvm_async:
        wrapper = getattr(pudf, "UserDefinedAsyncScalarFunctionWrapper", None)
        if wrapper is None:
            raise ValueError("jvm_async=True needs Flink's async scalar functions (PyFlink 2.3 and "
                             "later); this is PyFlink %s: leave jvm_async off (fnworker runs the "
                             "calls asynchronously either way)" % _pyflink_version())
        func = _function_class("async")(spec, bool(deterministic))
        return wrapper(func, in_types, result_type, "general", bool(deterministic), name)
    func = _function_class("scalar")(spec, bool(deterministic))
    return pudf.UserDefinedScalarFunctionWrapper(func, in_types, result_type, "general",
                                                 bool(deterministic), name)


def udtf(operation, result_types, argument_names=None, name=None, deterministic=True,
         input_types=None):
    """A Flink SQL / Table API table function that runs ``operation`` in
    fnworker: every output row of a call is one row the function emits.
    ``result_types`` is a list of PyFlink DataTypes (or one, or a ROW of
    them); as PyFlink declares it to Flink, the emitted row is
    ROW<f0 T0, f1 T1, ...> and the operation's output row has those names.
    ``argument_names`` and ``input_types`` as for ``udf``."""
    _check_operation(operation)
    names = _names(argument_names)
    in_types, in_bytes = _input_types(input_types, names)
    if _sqltypes.is_row(result_types):
        types = [f.data_type for f in result_types.fields]
    elif isinstance(result_types, (list, tuple)):
        types = list(result_types)
    else:
        types = [result_types]
    if not types:
        raise ValueError("a table function needs at least one result type")
    body = b""
    for i, t in enumerate(types):
        body += _wire.message_field(1, _wire.bytes_field(1, "f%d" % i) +
                                    _wire.message_field(3, _sqltypes.field_type(t, 2)))
    # the emitted ROW, nullable as the JVM's DataTypes.ROW(DataType...) that PyFlink declares
    row = (_wire.int_field(1, _sqltypes.TYPE_NAME["ROW"]) + _wire.int_field(2, True) +
           _wire.message_field(_sqltypes.ROW_SCHEMA, body))
    spec = table_spec(operation, row, names, None, in_bytes)
    pudf = _pyflink_udf()
    func = _function_class("table")(spec, bool(deterministic))
    return pudf.UserDefinedTableFunctionWrapper(func, in_types, types, bool(deterministic),
                                                name or "fnworker_" + operation.name)
