"""``Operation``: a native fnworker operation and how to drive it, written as
the bytes of a ``fnworker.v1.OperationSpec`` (fnworker's
proto/fnworker/v1/operation.proto) with the hand-written wire code of
``_wire``. Settings are checked here, with the worker's own messages, so that
a mistake shows when the job is built rather than when it runs."""

import datetime
import json
import math

from . import _types
from . import _wire

INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1

OUTPUT_MODES = {"ORDERED": 0, "UNORDERED": 1}
TIMEOUT_ACTIONS = {"TIMEOUT_FAIL": 0, "TIMEOUT_EMPTY": 1, "TIMEOUT_OPERATION": 2}
MODES = {"PER_ELEMENT": 1, "BATCH": 2}
ON_FAILURE = {"ON_FAILURE_FAIL": 0, "ON_FAILURE_DEFAULT": 1, "ON_FAILURE_EMPTY": 2}
BREAKER_KEYS = ("failures", "failure_rate", "window", "cooldown_ms")
MAX_BREAKER_WINDOW = 100000
MAX_FALLBACK_JSON = 65536

# The built-in operations' options (docs/operations.md); options of other
# operations are passed through and checked by the worker.
BUILTIN_OPTIONS = {
    "identity": (),
    "echo": ("delay_ms", "jitter_ms", "seed", "repeat", "fail_every", "fail_message",
             "fail_attempts", "empty_attempts", "hang", "short_result", "timeout_result",
             "delay_per_item_us"),
    "project": ("fields",),
}

SETTINGS = ("output_mode", "capacity", "timeout_ms", "batch_size", "batch_timeout_ms", "retry",
            "on_timeout", "mode", "output_type", "input_field",
            # docs/resilience.md
            "adaptive_concurrency", "concurrency_min", "circuit_breaker", "on_failure", "fallback",
            "target_latency_ms", "max_batch_size")

# batch_size="auto": the largest batch when max_batch_size is not given.
DEFAULT_MAX_BATCH_SIZE = 256
MAX_TARGET_LATENCY_MS = 3600000   # runtime/spec.h FNW_SPEC_MAX_TARGET_LATENCY_MS


def millis(value, what):
    """Milliseconds from a PyFlink Time or Duration (anything with
    to_milliseconds()), a datetime.timedelta, or an int of milliseconds."""
    if value is None:
        return None
    if hasattr(value, "to_milliseconds"):
        value = value.to_milliseconds()
    elif isinstance(value, datetime.timedelta):
        value = value // datetime.timedelta(milliseconds=1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be a pyflink Time/Duration, a datetime.timedelta or an int of "
                        "milliseconds, got %r" % (what, value))
    return value


def _int(value, what, limit):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, got %r" % (what, value))
    if not -limit - 1 <= value <= limit:
        raise ValueError("%s is out of range: %d" % (what, value))
    return value


def _enum(value, table, what, prefix=""):
    name = str(value).upper()
    for key in (name, prefix + name):
        if key in table:
            return table[key]
    raise ValueError("unknown %s %r; expected one of %s" % (what, value, ", ".join(table)))


def _option_value(key, value):
    if not isinstance(key, str) or not key:
        raise ValueError("option names must be non-empty strings, got %r" % (key,))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise TypeError("option %r must be a str, int, float or bool, got %r" % (key, value))


class RetryStrategy(object):
    """fnworker's retry policy (OperationSpec.retry). PyFlink's strategies
    decide with Python predicates, which a native worker cannot run; here the
    predicates are two switches: retry when a call fails
    (retry_on_error) and/or when it succeeds with an empty result
    (retry_on_empty_result). The arithmetic is PyFlink's."""

    NO_RETRY, FIXED_DELAY, EXPONENTIAL_BACKOFF = 0, 1, 2

    def __init__(self, kind, max_attempts=0, delay_ms=0, max_delay_ms=0, multiplier=0.0,
                 retry_on_error=True, retry_on_empty_result=False):
        self.kind = kind
        self.max_attempts = _int(max_attempts, "max_attempts", INT32_MAX)
        self.delay_ms = _int(delay_ms, "delay_ms", INT64_MAX)
        self.max_delay_ms = _int(max_delay_ms, "max_delay_ms", INT64_MAX)
        if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)):
            raise TypeError("multiplier must be a number, got %r" % (multiplier,))
        self.multiplier = float(multiplier)
        self.retry_on_error = bool(retry_on_error)
        self.retry_on_empty_result = bool(retry_on_empty_result)
        self._validate()

    @classmethod
    def fixed_delay(cls, max_attempts, backoff_time_millis, retry_on_error=True,
                    retry_on_empty_result=False):
        """PyFlink's FixedDelayRetryStrategy(max_attempts, backoff_time_millis, ...)."""
        return cls(cls.FIXED_DELAY, max_attempts, backoff_time_millis,
                   retry_on_error=retry_on_error, retry_on_empty_result=retry_on_empty_result)

    @classmethod
    def exponential_backoff(cls, max_attempts, initial_delay, max_retry_delay, multiplier,
                            retry_on_error=True, retry_on_empty_result=False):
        """PyFlink's ExponentialBackoffDelayRetryStrategy(max_attempts,
        initial_delay, max_retry_delay, multiplier, ...)."""
        return cls(cls.EXPONENTIAL_BACKOFF, max_attempts, initial_delay, max_retry_delay,
                   multiplier, retry_on_error, retry_on_empty_result)

    def _validate(self):
        names = {0: "NO_RETRY", 1: "FIXED_DELAY", 2: "EXPONENTIAL_BACKOFF"}
        if self.kind not in names:
            raise ValueError("Unknown async retry strategy kind: %r" % (self.kind,))
        if self.kind == self.NO_RETRY:
            return
        k = names[self.kind]
        checks = [("max_attempts", self.max_attempts), ("delay_ms", self.delay_ms)]
        if self.kind == self.EXPONENTIAL_BACKOFF:
            checks += [("max_delay_ms", self.max_delay_ms), ("multiplier", self.multiplier)]
        for name, value in checks:
            if not value > 0 or (isinstance(value, float) and math.isinf(value)):
                raise ValueError("%s of the async retry strategy '%s' must be positive, got: %s"
                                 % (name, k, value))
        if not self.retry_on_error and not self.retry_on_empty_result:
            raise ValueError("Retry predicate of the async retry strategy '%s' is missing: set "
                             "retry_on_error and/or retry_on_empty_result." % k)

    def encode(self):
        return (_wire.int_field(1, self.kind) + _wire.int_field(2, self.max_attempts) +
                _wire.int_field(3, self.delay_ms) + _wire.int_field(4, self.max_delay_ms) +
                _wire.double_field(5, self.multiplier) + _wire.int_field(6, self.retry_on_error) +
                _wire.int_field(7, self.retry_on_empty_result))


NO_RETRY = RetryStrategy(RetryStrategy.NO_RETRY)


def retry_strategy(value):
    """A RetryStrategy from one, None, or PyFlink's NO_RETRY_STRATEGY."""
    if value is None or isinstance(value, RetryStrategy):
        return value
    if type(value).__name__ == "NoRetryStrategy":
        return NO_RETRY
    raise TypeError("retry must be a fnworker.RetryStrategy (PyFlink's strategies decide with Python "
                    "predicates, which fnworker cannot run), got %r" % (value,))


class Operation(object):
    """A native fnworker operation: ``Operation(name, **options)``, e.g.
    ``Operation("echo", delay_ms=10)`` or ``Operation("project", fields="name,id")``.
    Option values may be str, int, float or bool (written as the worker reads
    them: ``10``, ``true``). ``with_settings`` adds the async settings; the
    helpers of this package set them from their PyFlink-style arguments."""

    def __init__(self, name, **options):
        if not isinstance(name, str) or not name:
            raise ValueError("the operation name must be a non-empty string, got %r" % (name,))
        known = BUILTIN_OPTIONS.get(name)
        for key in options:
            if known is not None and key not in known:
                raise ValueError("unknown option %r for operation %r; its options are: %s"
                                 % (key, name, ", ".join(known) or "none"))
        self.name = name
        self.options = {k: _option_value(k, v) for k, v in options.items()}
        self.settings = {}

    def with_settings(self, **settings):
        """A copy with these settings added (over any already set): output_mode
        ("ORDERED"/"UNORDERED"), capacity, timeout_ms, batch_size,
        batch_timeout_ms, retry (a RetryStrategy), on_timeout ("FAIL",
        "EMPTY", "OPERATION", or the TIMEOUT_* names), mode ("PER_ELEMENT",
        "BATCH"), output_type (a PyFlink type or the text form), input_field
        (the name of the input ROW's field the operation takes instead of the
        whole row; the helpers set "f1" on a KeyedStream, whose rows are
        Row(f0=<key>, f1=<value>)), target_latency_ms (batch mode: > 0 makes
        the batch size adaptive up to batch_size, keeping an element's time
        from admission to result within it), batch_size="auto" (adaptive up
        to max_batch_size, default 256; needs target_latency_ms); and, protecting the service
        (docs/resilience.md): adaptive_concurrency (default True),
        concurrency_min (the lowest limit), circuit_breaker (a dict of
        failures, failure_rate, window, cooldown_ms), on_failure ("FAIL",
        "DEFAULT", "EMPTY") and fallback (the value on_failure DEFAULT emits:
        a dict of output field -> value for a ROW output, else the bare
        value; giving it implies on_failure "DEFAULT")."""
        for key in settings:
            if key not in SETTINGS:
                raise ValueError("unknown setting %r; the OperationSpec settings are: %s"
                                 % (key, ", ".join(SETTINGS)))
        op = Operation.__new__(Operation)
        op.name, op.options = self.name, dict(self.options)
        op.settings = dict(self.settings)
        op.settings.update(settings)
        op.to_spec()   # checks the settings now
        return op

    def to_spec(self):
        """The serialized fnworker.v1.OperationSpec."""
        s = self.settings
        capacity = _int(s.get("capacity", 0), "capacity", INT32_MAX)
        timeout = millis(s.get("timeout_ms", 0), "timeout_ms")
        batch_size, target_latency = _batch_size(s)
        batch_timeout = millis(s.get("batch_timeout_ms", 0), "batch_timeout_ms")
        _int(timeout, "timeout_ms", INT64_MAX)
        _int(batch_timeout, "batch_timeout_ms", INT64_MAX)
        retry = retry_strategy(s.get("retry"))
        mode = _enum(s["mode"], MODES, "mode") if s.get("mode") is not None else 0
        _validate(mode == MODES["BATCH"], capacity, timeout, batch_size, batch_timeout, retry)
        _validate_target(mode == MODES["BATCH"], target_latency)
        out = _wire.bytes_field(1, self.name)
        for key in sorted(self.options):
            out += _wire.message_field(2, _wire.bytes_field(1, key) +
                                       _wire.bytes_field(2, self.options[key]))
        out += _wire.int_field(3, _enum(s.get("output_mode", "ORDERED"), OUTPUT_MODES, "output_mode"))
        out += _wire.int_field(4, capacity) + _wire.int_field(5, timeout)
        out += _wire.int_field(6, batch_size) + _wire.int_field(7, batch_timeout)
        if retry is not None and retry.kind != RetryStrategy.NO_RETRY:
            out += _wire.message_field(8, retry.encode())
        out += _wire.int_field(9, _enum(s.get("on_timeout", "FAIL"), TIMEOUT_ACTIONS, "on_timeout",
                                        "TIMEOUT_"))
        out += _wire.int_field(10, mode)
        type_info = _types.type_info_bytes(s.get("output_type"))
        if type_info is not None:
            out += _wire.message_field(11, type_info)
        input_field = s.get("input_field")
        if input_field is not None and not isinstance(input_field, str):
            raise TypeError("input_field must be the name of a field of the input ROW, got %r"
                            % (input_field,))
        out += _wire.bytes_field(12, input_field or "")
        out += _resilience(s, capacity or 100)
        out += _wire.int_field(21, target_latency)
        return out

    def __repr__(self):
        return "Operation(%r, options=%r, settings=%r)" % (self.name, self.options, self.settings)


RESILIENCE_SETTINGS = ("adaptive_concurrency", "concurrency_min", "circuit_breaker", "on_failure", "fallback")


def with_resilience(operation, settings, where):
    """operation with the resilience settings a helper took as keyword
    arguments (docs/resilience.md); any other keyword is refused."""
    if not settings:
        return operation
    for key in settings:
        if key not in RESILIENCE_SETTINGS:
            raise TypeError("%s() got an unexpected keyword argument %r; its resilience settings are: %s"
                            % (where, key, ", ".join(RESILIENCE_SETTINGS)))
    if not isinstance(operation, Operation):
        raise TypeError("%s: operation must be a fnworker.Operation, got %r" % (where, operation))
    # checked with the helper's own settings (capacity, ...) when it writes the spec
    op = Operation.__new__(Operation)
    op.name, op.options, op.settings = operation.name, dict(operation.options), dict(operation.settings)
    op.settings.update(settings)
    return op


def _resilience(s, capacity):
    """OperationSpec fields 17-20 (docs/resilience.md), checked as the
    worker's runtime/spec.c checks them."""
    adaptive = s.get("adaptive_concurrency", True)
    if not isinstance(adaptive, bool):
        raise TypeError("adaptive_concurrency must be True or False, got %r" % (adaptive,))
    cmin = _int(s.get("concurrency_min", 0), "concurrency_min", INT32_MAX)
    if cmin < 0 or cmin > capacity:
        raise ValueError("concurrency min must be between 1 and capacity (%d), got: %d" % (capacity, cmin))
    out = b""
    if not adaptive or cmin:
        out += _wire.message_field(17, _wire.int_field(1, not adaptive) + _wire.int_field(2, cmin))
    breaker = s.get("circuit_breaker")
    if breaker is not None:
        if not isinstance(breaker, dict):
            raise TypeError("circuit_breaker must be a dict of %s, got %r" % (", ".join(BREAKER_KEYS), breaker))
        for k in breaker:
            if k not in BREAKER_KEYS:
                raise ValueError("unknown circuit_breaker setting %r; its settings are: %s"
                                 % (k, ", ".join(BREAKER_KEYS)))
        failures = _int(breaker.get("failures", 0), "circuit_breaker failures", INT32_MAX)
        rate = breaker.get("failure_rate", 0)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise TypeError("circuit_breaker failure_rate must be a number, got %r" % (rate,))
        window = _int(breaker.get("window", 0), "circuit_breaker window", INT32_MAX)
        cooldown = millis(breaker.get("cooldown_ms", 0), "circuit_breaker cooldown_ms")
        if failures < 0:
            raise ValueError("circuit_breaker failures must be positive (or 0 for off), got: %d" % failures)
        if not 0 <= rate <= 1:
            raise ValueError("circuit_breaker failure_rate must be between 0 and 1 (0 for off), got: %g" % rate)
        if not 0 <= window <= MAX_BREAKER_WINDOW:
            raise ValueError("circuit_breaker window must be between 1 and %d attempts, got: %d"
                             % (MAX_BREAKER_WINDOW, window))
        if not 0 <= cooldown <= 86400000:
            raise ValueError("circuit_breaker cooldown_ms must be between 1 and 86400000, got: %d" % cooldown)
        if not failures and not rate:
            raise ValueError("circuit_breaker needs failures or failure_rate (or leave it out)")
        out += _wire.message_field(18, _wire.int_field(1, failures) + _wire.double_field(2, float(rate)) +
                                   _wire.int_field(3, window) + _wire.int_field(4, cooldown))
    fallback = s.get("fallback")
    default_action = "DEFAULT" if fallback is not None else "FAIL"
    action = _enum(s.get("on_failure") or default_action, ON_FAILURE, "on_failure", "ON_FAILURE_")
    out += _wire.int_field(19, action)
    if fallback is not None:
        if action != ON_FAILURE["ON_FAILURE_DEFAULT"]:
            raise ValueError("fallback is given but on_failure is not DEFAULT: set on_failure DEFAULT "
                             "to emit it, or remove fallback")
        try:
            text = json.dumps(fallback, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            raise TypeError("fallback must be a JSON value (a dict of output field -> value for a ROW "
                            "output, else the bare value): %s" % e)
        if len(text.encode("utf-8")) > MAX_FALLBACK_JSON:
            raise ValueError("fallback_json is over fnworker's limit of %d bytes" % MAX_FALLBACK_JSON)
        out += _wire.bytes_field(20, text)
    return out


def _batch_size(s):
    """(batch_size, target_latency_ms) from the settings: batch_size "auto"
    is max_batch_size (default 256) and needs target_latency_ms."""
    target = millis(s.get("target_latency_ms", 0), "target_latency_ms") or 0
    _int(target, "target_latency_ms", INT64_MAX)
    size = s.get("batch_size", 0)
    if isinstance(size, str):
        if size.lower() != "auto":
            raise ValueError("batch_size must be an int or \"auto\", got %r" % (size,))
        if target <= 0:
            raise ValueError("batch_size=\"auto\" needs target_latency_ms: the latency the batch size "
                             "is chosen for")
        size = s.get("max_batch_size")
        size = DEFAULT_MAX_BATCH_SIZE if size is None else _int(size, "max_batch_size", INT32_MAX)
    elif s.get("max_batch_size") is not None:
        raise ValueError("max_batch_size goes with batch_size=\"auto\"; with a fixed batch_size "
                         "remove it (batch_size is then the maximum when target_latency_ms is set)")
    return _int(size, "batch_size", INT32_MAX), target


def _validate_target(batched, target):
    """The worker's checks of target_latency_ms (runtime/spec.c)."""
    if not batched and target:
        raise ValueError("target_latency_ms (%d) is a batch-mode setting but the operation runs per "
                         "element: set mode BATCH to run it in batches, or remove target_latency_ms"
                         % target)
    if target < 0 or target > MAX_TARGET_LATENCY_MS:
        raise ValueError("target_latency_ms must be between 1 and %d ms (0: a fixed batch size), got: %d"
                         % (MAX_TARGET_LATENCY_MS, target))


def _validate(batched, capacity, timeout, batch_size, batch_timeout, retry):
    """The worker's checks (its runtime/spec.c), with its messages."""
    if batched:
        if batch_size <= 0:
            raise ValueError("Batch size must be positive, got: %d" % batch_size)
        if timeout <= 0:
            raise ValueError("Timeout must be positive for async batch operations.")
        if batch_timeout < 0:
            raise ValueError("Batch timeout cannot be negative, got: %d ms" % batch_timeout)
    else:
        tail = ("but the operation runs per element: set mode BATCH to run it in batches, or "
                "remove")
        if batch_size:
            raise ValueError("batch_size (%d) is a batch-mode setting %s batch_size" % (batch_size, tail))
        if batch_timeout:
            raise ValueError("batch_timeout_ms (%d) is a batch-mode setting %s batch_timeout_ms"
                             % (batch_timeout, tail))
    if timeout < 0:
        raise ValueError("Timeout cannot be negative, got: %d ms" % timeout)
    if retry is not None and retry.kind != RetryStrategy.NO_RETRY and timeout <= 0:
        raise ValueError("Timeout should be configured when do async with retry.")
    if capacity < 0:
        raise ValueError("Capacity must be positive, got: %d" % capacity)
