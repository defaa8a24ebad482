# Helpers the pool's shell tests share (sourced by test_pool.sh and
# test_pool_security.sh once they have set FNW and their scratch dir T):
# PASS/FAIL lines, and every pool they start (POOLS) killed and T removed
# at exit.

cleanup() {
  for p in $POOLS; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL $1: $2"; failed=1; }
pass() { echo "PASS $1"; }

# wait_until TRIES CMD...: polls CMD every 0.05 s; 0 once it succeeds.
wait_until() {
  n=$1; shift
  i=0
  while [ $i -lt "$n" ]; do
    "$@" && return 0
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}

# pool_start NAME [flags...]: `fnworker pool` on free loopback ports with
# these flags, its log in $T/NAME.pool.log ($plog); sets POOL_PID, ADDR (the
# launcher endpoint) and HADDR (HTTP) once it says it is ready.
pool_start() {
  name=$1; shift
  plog="$T/$name.pool.log"
  "$FNW" pool --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 "$@" 2>"$plog" &
  POOL_PID=$!
  POOLS="$POOLS $POOL_PID"
  if ! wait_until 200 grep -q "ready" "$plog" 2>/dev/null; then
    echo "FAIL $name: the pool did not start:"; sed 's/^/    | /' "$plog"; failed=1; return 1
  fi
  ADDR=$(sed -n 's/.*launcher endpoint on \([0-9.]*:[0-9]*\).*/\1/p' "$plog")
  HADDR=$(sed -n 's/.*HTTP endpoint on \([0-9.]*:[0-9]*\).*/\1/p' "$plog")
}
