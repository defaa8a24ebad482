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
 * Flink merges what each bundle reports: counters add up, distributions
 * combine (count and sum add, min and max are kept), gauges keep the value
 * with the newest timestamp. So a distribution with no sample in the bundle
 * is not sent (its zero min would stay in Flink for good), nor is a gauge
 * that was never raised (it would replace the last real value); counters
 * are always sent, so every counter exists in Flink from the first bundle.
 *
 * fnw_metrics_add() allocates into a set that owns every byte;
 * fnw_metrics_free() releases it after the response is packed.
 */
#ifndef FNW_METRICS_H
#define FNW_METRICS_H

#include <stddef.h>

#include "codecs/arena.h"
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
