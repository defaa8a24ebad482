#!/bin/sh
# tests/shell/test_pool_metrics.sh — the pool's per-operation series
# (docs/metrics.md): a stand-in worker writes series lines on its stats pipe
# (fd 3, worker/pool_stats.h, codecs/metric_names.h) and the pool's /metrics
# answers them as Prometheus counters, gauges, a summary and a histogram
# with operation, transform and worker labels, escaped; hostile lines (a
# newline or a non-UTF-8 byte in a label, an oversized line, a number out of
# range, binary garbage) are not kept and do not break the answer; a worker
# reporting more series than FNW_METRIC_SERIES_MAX has the rest counted as
# dropped. The answer is read by a strict exposition-format checker
# (prom_check.py). Run by `make check` (script-tests); prints PASS/FAIL.
#   sh tests/shell/test_pool_metrics.sh [build dir]   (or FNW_BUILD=dir; default build)
set -u
ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
BUILD=${1:-${FNW_BUILD:-build}}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
FNW="$BUILD/fnworker"
SCRIPT="$ROOT/scripts/pyflink-udf-runner.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/fnw-pool-metrics.XXXXXX")
POOLS=""
. "$ROOT/tests/shell/pool_lib.sh"

if [ ! -x "$FNW" ]; then echo "FAIL setup: $FNW not built (make all)"; exit 1; fi
if ! command -v bash >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP test_pool_metrics.sh: no bash or python3"; exit 0
fi

# The stand-in worker: its stats lines on fd 3, then it sleeps until stopped.
mkdir -p "$T/bin"
cat >"$T/bin/fake-worker" <<'FAKE'
#!/bin/bash
[ "${FNW_POOL_STATS_FD:-}" = 3 ] || { echo "no stats pipe" >&2; exit 3; }
lat=$(printf '%s' "4,10,20,30,5,1,0,0,0,0,0,0,0,0,0,0,0,0,2")
{
  echo connected
  echo "bundles=3 bundle_errors=0 records_in=600 records_out=600 calls=640 call_failures=1 active_bundles=1"
  # transform 'T "q" \x' (quote, backslash, space), the operation http
  echo "op1 T%20%22q%22%20%5Cx http records_in=600 records_out=590 calls=620 requests=640 retries=20 successes=615 failures=1 timeouts=3 overloaded=7 breaker_rejected=0 batch_size_count=620 batch_size_sum=600 lat=$lat lat_sum_us=1234567 inflight_calls=2 concurrency_limit=-1 breaker_state=0 c.cache_hits=5 c.cache_misses=9"
  # hostile: a newline and a non-UTF-8 byte in a label, a number too big, garbage, an oversized line
  echo "op1 evil%0Ainjected http records_in=1"
  echo "op1 evil%FF http records_in=1"
  echo "op1 big http records_in=99999999999999999999"
  printf 'op1 \001\002\377 x=y\n'
  printf 'op1 overlong http records_in=1 zz='; head -c 6000 /dev/zero | tr '\0' '1'; echo
  # more steps than one worker reports (FNW_METRIC_SERIES_MAX = 64)
  i=0
  while [ $i -lt 70 ]; do echo "op1 step$i echo records_in=$i"; i=$((i + 1)); done
} >&3
exec sleep 60
FAKE
chmod +x "$T/bin/fake-worker"

if pool_start metrics --worker-bin "$T/bin/fake-worker" --start-timeout 0; then
  env BOOT_LOG_DIR="$T" FNW_POOL_ADDRESS="$ADDR" sh "$SCRIPT" --id=m1 --provision_endpoint=localhost:1 \
    >"$T/out.m1" 2>"$T/err.m1" &
  lpid=$!
  scrape() { curl -s "http://$HADDR/metrics" >"$T/metrics.txt" 2>/dev/null; }
  got() { scrape && grep -q '^fnworker_records_in_total{operation="echo",transform="step62"' "$T/metrics.txt"; }
  if ! command -v curl >/dev/null 2>&1; then
    echo "SKIP test_pool_metrics.sh: no curl"
  elif ! wait_until 200 got; then
    fail series_scraped "the series did not appear in /metrics:"; sed 's/^/    | /' "$T/metrics.txt" | head -40
  else
    M="$T/metrics.txt"
    L='operation="http",transform="T \\"q\\" \\\\x",worker_id="m1",pid="[0-9]*"'
    if grep -q "^fnworker_requests_total{$L} 640\$" "$M" &&
       grep -q "^fnworker_successes_total{$L} 615\$" "$M" &&
       grep -q "^fnworker_call_failures_total{$L,kind=\"timeout\"} 3\$" "$M" &&
       grep -q "^fnworker_call_failures_total{$L,kind=\"overload\"} 7\$" "$M" &&
       grep -q "^fnworker_inflight_calls{$L} 2\$" "$M" &&
       grep -q "^fnworker_breaker_state{$L} 0\$" "$M" &&
       ! grep -q "^fnworker_concurrency_limit{$L}" "$M" &&
       grep -q "^fnworker_batch_size_sum{$L} 600\$" "$M" &&
       grep -q "^fnworker_operation_counter_total{$L,counter=\"cache_hits\"} 5\$" "$M"; then
      pass series_scraped
    else
      fail series_scraped "a figure of the http series is missing or wrong:"; grep 'operation="http"' "$M" | sed 's/^/    | /'
    fi
    # the histogram: cumulative buckets in seconds, +Inf = count = 72, sum in seconds
    if grep -q "^fnworker_call_latency_seconds_bucket{$L,le=\"0.0001\"} 4\$" "$M" &&
       grep -q "^fnworker_call_latency_seconds_bucket{$L,le=\"0.001\"} 64\$" "$M" &&
       grep -q "^fnworker_call_latency_seconds_bucket{$L,le=\"+Inf\"} 72\$" "$M" &&
       grep -q "^fnworker_call_latency_seconds_count{$L} 72\$" "$M" &&
       grep -q "^fnworker_call_latency_seconds_sum{$L} 1.234567\$" "$M"; then
      pass latency_histogram
    else
      fail latency_histogram "unexpected buckets:"; grep 'latency' "$M" | grep 'operation="http"' | sed 's/^/    | /'
    fi
    if grep -q 'evil\|injected\|transform="big"\|overlong' "$M"; then
      fail hostile_lines_dropped "a hostile line was kept:"; grep 'evil\|injected\|big' "$M" | sed 's/^/    | /'
    else
      pass hostile_lines_dropped
    fi
    # 64 series kept of the 71 valid ones; the 7 others counted
    kept=$(grep -c '^fnworker_records_in_total{' "$M")
    if [ "$kept" = 64 ] && grep -q '^fnworker_pool_series 64$' "$M" &&
       grep -q '^fnworker_pool_series_dropped_total 7$' "$M"; then
      pass series_bounded
    else
      fail series_bounded "$kept series; $(grep '^fnworker_pool_series' "$M")"
    fi
    if out=$(python3 "$ROOT/tests/shell/prom_check.py" "$M"); then
      pass exposition_format
    else
      fail exposition_format "$out"
    fi
  fi
  kill -TERM "$lpid" 2>/dev/null
  wait "$lpid" 2>/dev/null
  kill -TERM "$POOL_PID"
  wait "$POOL_PID"
fi
exit $failed
