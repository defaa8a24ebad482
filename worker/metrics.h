/* worker/metrics.h — per-bundle engine figures as Beam MonitoringInfos in
 * the form Flink's Python metric container reads them.
 *
 * Every figure is a user metric (URN beam:metric:user:*). Flink ignores the
 * PTRANSFORM label: it names a metric by its NAMESPACE and NAME labels only.
 * NAMESPACE is a JSON array whose first half lists group names and whose
 * second half lists their group types, so each step of a chain gets its own
 * group, "<operation>_<index in the chain>", below the "fnworker" group:
 *
 *   ["fnworker", "echo_0", "MetricGroupType.generic", "MetricGroupType.generic"]
 *
 * which Flink registers as <operator scope>.fnworker.echo_0.<name>.
 *
 * The names, kinds and units are the rows of codecs/metric_names.h, the
 * table the pool's Prometheus endpoint uses too (docs/metrics.md lists
 * them). Flink's Python metric container takes only sum_int64,
 * distribution_int64 and latest_int64 (flink-python's
 * FlinkMetricContainer), so the latency histogram goes as three gauges,
 * <stem>P50Us, <stem>P95Us, <stem>P99Us: the bundle's quantiles in µs.
 * The operation's own counters (fnw_op_counter) are counters of their own
 * name in the step's group ("op_<name>" when a table row has that name).
 *
 * Flink merges what each bundle reports: counters add up, distributions
 * combine (count and sum add, min and max are kept), gauges keep the value
 * with the newest timestamp. So a distribution or a latency with no sample
 * in the bundle is not sent (its zero would stay in Flink for good), nor is
 * a high-water mark of 0 (it would replace the last real value) or a gauge
 * of -1 (does not apply to this operation); counters are always sent, so
 * every counter exists in Flink from the first bundle.
 *
 * fnw_metrics_add() allocates into a set that owns every byte;
 * fnw_metrics_free() releases it after the response is packed.
 */
#ifndef FNW_METRICS_H
#define FNW_METRICS_H

#include <stddef.h>

#include "codecs/arena.h"
#include "codecs/metric_names.h"
#include "runtime/engine.h"
#include "base/pb.h"

/* The group every fnworker metric lives under, and its type label. */
#define FNW_METRICS_GROUP "fnworker"
#define FNW_METRICS_GENERIC "MetricGroupType.generic"

/* Embedded by its owner; read it through the accessors below. */
typedef struct fnw_metric_set {
    fnw_arena arena;
    pb_MonitoringInfo **infos;
    size_t n;
    size_t cap;
} fnw_metric_set;

void fnw_metrics_init(fnw_metric_set *s);
/* Adds the metrics of one step: transform_id is its PTRANSFORM label,
 * operation and index name its group. On failure (out of memory) returns
 * -1 and the set keeps only complete MonitoringInfos. */
int fnw_metrics_add(fnw_metric_set *s, const char *transform_id, const char *operation, size_t index,
                    const fnw_engine_metrics *m);
void fnw_metrics_free(fnw_metric_set *s);

/* The engine's figure for a row of the name table (codecs/metric_names.h):
 * a counter's or gauge's value, a distribution's or the latency's count;
 * and a distribution row's fnw_dist (NULL for other rows). The pool's stats
 * line (worker/pool_stats.c) reads the engine through these too. */
int64_t fnw_metrics_value(const fnw_engine_metrics *m, fnw_metric_id id);
const fnw_dist *fnw_metrics_dist(const fnw_engine_metrics *m, fnw_metric_id id);

/* The MonitoringInfos built so far (valid until fnw_metrics_free). */
static inline size_t fnw_metrics_count(const fnw_metric_set *s)
{
    return s->n;
}
static inline pb_MonitoringInfo **fnw_metrics_infos(const fnw_metric_set *s)
{
    return s->infos;
}

#endif
