/* worker/metrics.h — per-bundle engine figures as Beam MonitoringInfos in
 * the form Flink's FlinkMetricContainer reads (flink-protocol.md §6.2):
 * user metrics (beam:metric:user:*) whose NAMESPACE label is a JSON array of
 * group names followed by group types, here ["fnworker",
 * "MetricGroupType.generic"], and whose PTRANSFORM label is the transform.
 *
 * fnw_metrics_build() allocates the MonitoringInfo array into a set that
 * owns every byte; fnw_metrics_free() releases it after the response is
 * packed.
 */
#ifndef FNW_METRICS_H
#define FNW_METRICS_H

#include <stddef.h>

#include "codecs/arena.h"
#include "runtime/engine.h"
#include "worker/pb.h"

typedef struct fnw_metric_set {
    fnw_arena arena;
    pb_MonitoringInfo **infos;
    size_t n;
    size_t cap;
} fnw_metric_set;

void fnw_metrics_init(fnw_metric_set *s);
/* Adds the metrics of one transform. */
int fnw_metrics_add(fnw_metric_set *s, const char *transform_id, const fnw_engine_metrics *m);
void fnw_metrics_free(fnw_metric_set *s);

#endif
