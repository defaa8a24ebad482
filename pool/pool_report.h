/* pool/pool_report.h — what the pool's HTTP endpoint answers, as text: the
 * Prometheus metrics (pool counts, and per worker its resident memory from
 * /proc/<pid>/statm, its uptime and the figures it reports on its stats
 * pipe; per worker and operation step the series of codecs/metric_names.h,
 * named by its table: docs/metrics.md) and the state dump of /debug/state.
 * No I/O other than reading /proc. */
#ifndef FNW_POOL_REPORT_H
#define FNW_POOL_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool/children.h"

/* Resident set size of pid in bytes; -1 when it cannot be read. */
int64_t fnw_pool_report_rss(pid_t pid);
/* Prometheus text exposition format 0.0.4. Returns a malloc'd string (NULL
 * when out of memory); now is the loop's time. */
char *fnw_pool_report_metrics(fnw_children *cs, int draining, double now, size_t *len);
/* One line per running worker (id, pid, uptime, RSS), after a header. */
char *fnw_pool_report_state(fnw_children *cs, int draining, double now, unsigned dumps_requested, size_t *len);

#endif
