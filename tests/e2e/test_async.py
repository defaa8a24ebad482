"""`echo` on a real Flink with PyFlink's AsyncFunction/AsyncBatchFunction
semantics: ordered and unordered, per element and in batches, retries on
error and on empty results, and each timeout action. Results are checked
exactly: ordered ones in input order, unordered ones as the same multiset."""

import pytest
from pyflink.common import Time, Types

import fnworker
from fnworker import Operation, RetryStrategy
from fnw_e2e import collect
from jvals import causes

ROW = Types.ROW_NAMED(["id", "name"], [Types.LONG(), Types.STRING()])
ROWS = [(n, None if n % 7 == 0 else "r%d" % n) for n in range(200)]


def source(env, rows=ROWS):
    return env.from_collection(rows, type_info=ROW)


def plain(out):
    return [tuple(r) for r in out]


def slow(**more):
    """echo completing each call after 1 to 21 ms, in an order unlike the input's."""
    return Operation("echo", delay_ms=1, jitter_ms=20, seed=7, **more)


def test_ordered_keeps_input_order(env, ran_in_fnworker):
    out = fnworker.ordered_wait(source(env), slow(), Time.seconds(10), capacity=50, output_type=ROW)
    assert plain(collect(out)) == ROWS


@pytest.mark.smoke
def test_unordered_emits_as_calls_complete(env, ran_in_fnworker):
    out = fnworker.unordered_wait(source(env), slow(), Time.seconds(10), capacity=100, output_type=ROW)
    got = plain(collect(out))
    assert sorted(got, key=repr) == sorted(ROWS, key=repr)
    assert got != ROWS, "200 calls with 1-21 ms of jitter came back in input order: not unordered"


@pytest.mark.smoke
def test_ordered_batch(env, ran_in_fnworker):
    out = fnworker.ordered_wait_batch(source(env), slow(), Time.seconds(10), batch_size=16,
                                      batch_timeout=Time.milliseconds(20), capacity=64, output_type=ROW)
    assert plain(collect(out)) == ROWS


def test_unordered_batch(env, ran_in_fnworker):
    out = fnworker.unordered_wait_batch(source(env), slow(), Time.seconds(10), batch_size=7,
                                        batch_timeout=Time.milliseconds(5), capacity=40, output_type=ROW)
    got = plain(collect(out))
    assert sorted(got, key=repr) == sorted(ROWS, key=repr)


def test_retry_on_error_recovers(env, ran_in_fnworker):
    """The first two attempts of every call fail; three retries are enough."""
    out = fnworker.ordered_wait_with_retry(
        source(env), Operation("echo", fail_attempts=2), Time.seconds(10),
        RetryStrategy.fixed_delay(3, 5, retry_on_error=True), output_type=ROW)
    assert plain(collect(out)) == ROWS


def test_retry_on_empty_result_recovers(env, ran_in_fnworker):
    out = fnworker.unordered_wait_with_retry(
        source(env), Operation("echo", empty_attempts=1), Time.seconds(10),
        RetryStrategy.exponential_backoff(2, 2, 20, 2.0, retry_on_error=False, retry_on_empty_result=True),
        output_type=ROW)
    assert sorted(plain(collect(out)), key=repr) == sorted(ROWS, key=repr)


def test_empty_results_without_retry_drop_the_rows(env, ran_in_fnworker):
    out = fnworker.ordered_wait(source(env), Operation("echo", empty_attempts=1), Time.seconds(10),
                                output_type=ROW)
    assert plain(collect(out)) == []


def test_batch_retry_on_error(env, ran_in_fnworker):
    op = Operation("echo", fail_attempts=1).with_settings(
        mode="BATCH", batch_size=10, timeout_ms=10000, output_mode="ORDERED",
        retry=RetryStrategy.fixed_delay(1, 5, retry_on_error=True))
    out = fnworker.process(source(env), op, output_type=ROW)
    assert plain(collect(out)) == ROWS


def test_retries_exhausted_fail_the_job(env, ran_in_fnworker):
    out = fnworker.ordered_wait_with_retry(
        source(env, ROWS[:3]), Operation("echo", fail_attempts=5, fail_message="still down"),
        Time.seconds(10), RetryStrategy.fixed_delay(2, 5, retry_on_error=True), output_type=ROW)
    with pytest.raises(Exception) as e:
        collect(out)
    assert "still down" in causes(e.value)


def hanging(**more):
    return Operation("echo", hang=True, **more)


def test_timeout_fail_fails_the_job(env, ran_in_fnworker):
    out = fnworker.ordered_wait(source(env, ROWS[:3]), hanging(), Time.milliseconds(300), output_type=ROW)
    with pytest.raises(Exception) as e:
        collect(out)
    assert "operation 'echo' timed out after 300 ms" in causes(e.value)


def test_timeout_empty_drops_the_rows(env, ran_in_fnworker):
    op = hanging().with_settings(on_timeout="EMPTY")
    out = fnworker.unordered_wait(source(env, ROWS[:20]), op, Time.milliseconds(100), output_type=ROW)
    assert plain(collect(out)) == []


def test_timeout_operation_returns_the_input(env, ran_in_fnworker):
    op = hanging(timeout_result="input").with_settings(on_timeout="OPERATION")
    out = fnworker.ordered_wait(source(env, ROWS[:20]), op, Time.milliseconds(100), output_type=ROW)
    assert plain(collect(out)) == ROWS[:20]


def test_timeout_operation_empty_result(env, ran_in_fnworker):
    op = hanging(timeout_result="empty").with_settings(on_timeout="OPERATION", mode="BATCH", batch_size=5,
                                                       timeout_ms=100, output_mode="UNORDERED")
    out = fnworker.process(source(env, ROWS[:20]), op, output_type=ROW)
    assert plain(collect(out)) == []


def test_repeat_emits_each_row_k_times(env, ran_in_fnworker):
    out = fnworker.ordered_wait(source(env, ROWS[:10]), Operation("echo", repeat=3), Time.seconds(5),
                                output_type=ROW)
    assert plain(collect(out)) == [r for r in ROWS[:10] for _ in range(3)]
