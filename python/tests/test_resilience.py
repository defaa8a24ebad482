"""The resilience settings of Operation.with_settings (docs/resilience.md):
adaptive concurrency, the circuit breaker, on_failure and fallback, as
OperationSpec fields 17-20 (checked with protoc --decode), and the mistakes
caught when the job is built, with the worker's messages."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fnworker import Operation  # noqa: E402
from protoc_decode import decode, flat  # noqa: E402


def spec_text(op):
    return flat(decode(op.to_spec()))


class ResilienceSpecTest(unittest.TestCase):
    def test_defaults_write_nothing(self):
        self.assertEqual(Operation("identity").to_spec(), b"\n\x08identity")

    def test_every_setting(self):
        op = Operation("echo").with_settings(
            capacity=1000, adaptive_concurrency=False, concurrency_min=4,
            circuit_breaker={"failures": 5, "failure_rate": 0.5, "window": 50, "cooldown_ms": 2000},
            fallback={"label": "unknown", "score": 0.0})
        text = spec_text(op)
        self.assertIn("concurrency { adaptive_off: true min: 4 }", text)
        self.assertIn("circuit_breaker { failures: 5 failure_rate: 0.5 window: 50 cooldown_ms: 2000 }", text)
        self.assertIn("on_failure: ON_FAILURE_DEFAULT", text)
        self.assertIn('fallback_json: "{\\"label\\":\\"unknown\\",\\"score\\":0.0}"', text)

    def test_empty(self):
        self.assertIn("on_failure: ON_FAILURE_EMPTY",
                      spec_text(Operation("echo").with_settings(on_failure="EMPTY")))

    def test_mistakes(self):
        op = Operation("echo")
        cases = [
            (dict(circuit_breaker={"failures": 3, "cooldown": 1}), "unknown circuit_breaker setting 'cooldown'"),
            (dict(circuit_breaker={"failure_rate": 1.5}), "failure_rate must be between 0 and 1"),
            (dict(circuit_breaker={}), "needs failures or failure_rate"),
            (dict(concurrency_min=500), "concurrency min must be between 1 and capacity (100)"),
            (dict(on_failure="RETRY"), "unknown on_failure 'RETRY'"),
            (dict(on_failure="EMPTY", fallback=1), "fallback is given but on_failure is not DEFAULT"),
        ]
        for settings, message in cases:
            with self.assertRaises(ValueError) as ctx:
                op.with_settings(**settings)
            self.assertIn(message, str(ctx.exception), settings)
        with self.assertRaises(TypeError):
            op.with_settings(fallback=object())
        with self.assertRaises(TypeError):
            op.with_settings(adaptive_concurrency="no")



class HelperKeywordsTest(unittest.TestCase):
    def test_with_resilience(self):
        from fnworker._spec import with_resilience
        op = with_resilience(Operation("echo"), {"circuit_breaker": {"failures": 2}, "fallback": 0},
                             "ordered_wait")
        text = spec_text(op.with_settings(capacity=1000, concurrency_min=500))
        self.assertIn("circuit_breaker { failures: 2 }", text)
        self.assertIn("concurrency { min: 500 }", text)
        self.assertIn('fallback_json: "0"', text)
        with self.assertRaises(TypeError) as ctx:
            with_resilience(Operation("echo"), {"fallbak": 0}, "ordered_wait")
        self.assertIn("unexpected keyword argument 'fallbak'", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
