/* worker/relay_child.h — PyFlink's Python worker as fnworker's child
 * (docs/design/relay.md, sections 2, 9 and 10): starting it, its output,
 * its end, stopping it, and the restart backoff. One child at a time.
 *
 * The child runs `<python> -m pyflink.fn_execution.beam.beam_boot
 * --id=<relay id> --provision_endpoint=<url> [--semi_persist_dir=<dir>]`
 * in fnworker's own environment and working directory, with default signal
 * handling, no fd but 0, 1 and 2, and PR_SET_PDEATHSIG = SIGKILL (a killed
 * fnworker leaves no Python behind; Linux sends it when the thread that
 * started the child ends, so call start from the loop's thread, the main
 * one). Its stdout and stderr share one pipe read on the loop: each line
 * goes to fnworker's stderr as `python[<pid>]: <line>` (the boot log) and
 * into a ring that failure messages quote. Lines are cut at
 * FNW_RELAY_CHILD_LINE_MAX bytes, and made printable valid UTF-8 (other
 * bytes become '?') so they can travel in a protobuf string.
 *
 * Reaping needs libev's child watcher: the loop must be ev_default_loop.
 * Loop thread only.
 */
#ifndef FNW_RELAY_CHILD_H
#define FNW_RELAY_CHILD_H

#include <ev.h>
#include <stddef.h>

#include "codecs/error.h"
#include "worker/log.h"

#define FNW_RELAY_CHILD_LINE_MAX 4096   /* longer output lines are cut here */
#define FNW_RELAY_CHILD_RING_LINES 50   /* the output ring: at most 50 lines */
#define FNW_RELAY_CHILD_RING_BYTES 8192 /* ... and 8 KiB */
#define FNW_RELAY_CHILD_LOG_ENTRIES 20  /* the log ring (fnw_relay_child_note_log) */
#define FNW_RELAY_CHILD_KILL_AFTER_S 5.0
#define FNW_RELAY_CHILD_QUICK_DEATH_S 5.0 /* a child that dies this soon after its start died quickly */
#define FNW_RELAY_CHILD_QUICK_DEATHS 3    /* this many quick deaths in a row ... */
#define FNW_RELAY_CHILD_BACKOFF_S 30.0    /* ... and no start for this long */

typedef struct fnw_relay_child fnw_relay_child;

typedef struct fnw_relay_child_events {
    void *user;
    /* The child ended (reaped). how: "exit code 1", "signal 9 (Killed)",
     * "could not be started: ...", in pool mode also "lost: ..." (the
     * launcher stopped answering). Called once per started child, on the
     * loop, after its last output is in the ring; the object may be used
     * (started again, even freed) from inside the callback. */
    void (*on_exit)(void *user, int pid, const char *how);
} fnw_relay_child_events;

typedef struct fnw_relay_child_config {
    const char *python;           /* the interpreter; NULL: $python from the environment, else "python" */
    const char *relay_id;         /* --id= value */
    const char *provision_url;    /* --provision_endpoint= value, e.g. 127.0.0.1:40123 */
    const char *semi_persist_dir; /* --semi_persist_dir= when not NULL */
    /* 0 for each: the FNW_RELAY_CHILD_ default (tests shorten them) */
    double kill_after_s;  /* stop: SIGKILL this long after SIGTERM */
    double quick_death_s; /* a death this soon after start counts as quick */
    double backoff_s;     /* no start this long after the third quick death in a row */
} fnw_relay_child_config;

/* ev is copied; log may be NULL (stderr only). NULL when out of memory. */
fnw_relay_child *fnw_relay_child_new(struct ev_loop *loop, fnw_logger *log, const fnw_relay_child_events *ev);

/* Pool mode (design section 10): the launcher script starts the child in
 * the TaskManager's container (where PyFlink is), asked over fd, the
 * stream socket the pool passes as --relay-fd=N (taken over: made
 * nonblocking and close-on-exec, closed by free). Same interface; the
 * differences: the launcher builds the command from its own $python (the
 * config's python and semi_persist_dir are not sent); the pid is known
 * once the launcher says SPAWNED; output lines go to the ring only (the
 * launcher writes them to the boot log); stop sends KILL and the launcher
 * escalates; free sends KILL and does not wait. Lines, one each way:
 *   worker -> pool   SPAWN <n> <relay id> <host:port>    start child n (1, 2, ...)
 *                    KILL <n>                            stop it (SIGTERM, then SIGKILL)
 *   pool -> worker   SPAWNED <n> <pid>                   it runs
 *                    SPAWNFAIL <n> <reason>              it could not be started: on_exit
 *                                                        "could not be started: <reason>"
 *                    C <n> <line>                        a line of its output (stdout and stderr)
 *                    CHILDEXIT <n> <code>                it ended, after its last C line:
 *                                                        0-128 "exit code N", 128+N "signal N (..)"
 * Lines of another n than the current child's, and unknown lines, are
 * ignored. No CHILDEXIT within 2 * kill_after_s of KILL, or the socket
 * closing, ends the child as "lost: ...". The relay id must be
 * [A-Za-z0-9._-] and the endpoint [A-Za-z0-9._:[]-], each at most 256
 * bytes. NULL when out of memory or fd < 0. */
fnw_relay_child *fnw_relay_child_new_remote(struct ev_loop *loop, fnw_logger *log,
                                            const fnw_relay_child_events *ev, int fd);

/* Starts the child; 0 ok (pid known), -1 with err: spawn failed, a child
 * still runs, or the restart backoff is in force (err says for how long and
 * quotes the last output). The config's strings are copied. The boot log
 * shows `relay: starting PyFlink's Python worker: <command> (pid N)`.
 *
 * Backoff: a child that ends within quick_death_s of its start (and was not
 * asked to stop) is a quick death; after FNW_RELAY_CHILD_QUICK_DEATHS in a
 * row, start refuses for backoff_s after the last one. The count goes back
 * to 0 only when a child lives longer than quick_death_s, so a child that
 * keeps dying quickly is tried once per backoff_s. A failed exec is a quick
 * death like any other (exit code 127, its last output says why). */
int fnw_relay_child_start(fnw_relay_child *c, const fnw_relay_child_config *cfg, fnw_error *err);

/* The running child's pid; 0 when none runs (in pool mode also until the
 * launcher's SPAWNED: the pid is the one in the TaskManager's container). */
int fnw_relay_child_pid(const fnw_relay_child *c);
/* 1 from a successful start until on_exit (a child runs, or the launcher
 * was asked for one). */
int fnw_relay_child_running(const fnw_relay_child *c);
/* The interpreter of the last start, as the child was given it (config,
 * else $python, else "python"; "$python" in pool mode, where the launcher
 * resolves it); "python" before any start or with c NULL. */
const char *fnw_relay_child_python(const fnw_relay_child *c);

/* The child's last output lines, and the log entries noted with
 * fnw_relay_child_note_log, merged in the order they arrived, oldest first,
 * '\n'-separated (no trailing newline), NUL-terminated. When it does not fit
 * in cap, the newest part is kept (the oldest lines are left out, a line
 * longer than all of cap keeps its end). Returns the length written (without
 * the NUL); "" (0) when there was no output. Kept across restarts until the
 * next child writes. */
size_t fnw_relay_child_last_output(const fnw_relay_child *c, char *buf, size_t cap);

/* Adds a line the child logged through the Logging service (its stdout goes
 * quiet after start-up: PyFlink moves print() into logging) to a second ring
 * (the last FNW_RELAY_CHILD_LOG_ENTRIES entries); last_output shows both. A
 * multi-line entry (a traceback) keeps its newlines; an entry longer than
 * FNW_RELAY_CHILD_LINE_MAX keeps its end (where a traceback names the
 * exception). */
void fnw_relay_child_note_log(fnw_relay_child *c, const char *line);

/* Asks the child to stop: SIGTERM now, SIGKILL kill_after_s later; on_exit
 * runs when it is reaped. A child asked to stop is no quick death. Nothing
 * when none runs. */
void fnw_relay_child_stop(fnw_relay_child *c);

/* For the worker's teardown: SIGKILL if still running, reap synchronously,
 * free. No callbacks. NULL is fine. */
void fnw_relay_child_free(fnw_relay_child *c);

#endif
