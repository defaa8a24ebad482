# tests/servers/common.sh — shared by the test-server helpers (sourced, not
# run): finding programs, picking a free loopback port, waiting, stopping a
# server by its pid file, a watchdog that stops a server whose test process
# is gone, and the JSON fixtures that nginx and the Python server both serve.
# Every server listens on 127.0.0.1 only.

PATH="$PATH:/usr/sbin:/sbin"

die() { echo "$*" >&2; exit 1; }

# skip NAME: the program is not installed; exit code 77 tells the test to skip.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "skip: $1 is not installed (scripts/install-deps.sh installs it)" >&2
  exit 77
}

python_bin() {
  if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi
}

# A port that was free on 127.0.0.1 a moment ago (callers retry on a clash).
free_port() {
  py=$(python_bin 2>/dev/null || true)
  if [ -n "$py" ]; then
    "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    awk 'BEGIN { srand(); print 20000 + int(rand() * 40000) }'
  fi
}

# alive PID: the process exists and is not a zombie waiting to be reaped
# (a stopped server is nobody's child here, so its reaping may lag).
alive() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/stat" ] || return 0
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
  [ "$st" != Z ] && [ -n "$st" ]
}

# stop_pidfile FILE [SIGNAL]: signal the process (TERM by default), wait for
# it to go (up to 10 s, then KILL), remove the file.
stop_pidfile() {
  [ -f "$1" ] || return 0
  pid=$(cat "$1" 2>/dev/null || true)
  if alive "$pid"; then
    kill "-${2:-TERM}" "$pid" 2>/dev/null || true
    i=0
    while alive "$pid" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
    while alive "$pid"; do sleep 0.1; done
  fi
  rm -f "$1"
}

# watchdog PIDFILE OWNER: in the background, stops the server when the
# owner process (the test) is gone; ends by itself when the pid file goes.
watchdog() {
  [ -n "${2:-}" ] || return 0
  (
    while alive "$2"; do
      [ -f "$1" ] || exit 0
      sleep 1
    done
    stop_pidfile "$1"
  ) </dev/null >/dev/null 2>&1 &
}

# The JSON documents served under /json/<k> (files www/json/<k>.json).
make_fixtures() {
  mkdir -p "$1/www/json"
  printf '{"key":"a","n":1}' >"$1/www/json/a.json"
  printf '{"key":"b","list":[1,2,3],"nested":{"ok":true}}' >"$1/www/json/b.json"
  # big: about 300 KB, for body limits
  awk 'BEGIN { printf "{\"key\":\"big\",\"items\":["; for (i = 0; i < 30000; i++) printf "%s%d", (i ? "," : ""), 1000000 + i; printf "]}" }' \
    >"$1/www/json/big.json"
  chmod -R a+rX "$1"
}

# wait_port_file WHAT PIDFILE PORTFILE LOG TENTHS: waits until the server of
# PIDFILE has written its port to PORTFILE (at most TENTHS tenths of a
# second, and not past its death); if it has not, shows LOG's tail, stops it
# and exits 1.
wait_port_file() {
  i=0
  while [ ! -s "$3" ] && [ "$i" -lt "$5" ]; do
    alive "$(cat "$2")" || break
    sleep 0.1; i=$((i + 1))
  done
  if [ ! -s "$3" ]; then
    echo "the $1 did not start; its log:" >&2
    tail -n 5 "$4" >&2
    stop_pidfile "$2"
    exit 1
  fi
}
