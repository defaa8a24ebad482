/* pool/pool.h — `fnworker pool`: a long-running process in the sidecar
 * container that starts one worker process per request, from the launcher
 * script (pool/launcher.h) or from a Beam runner's BeamFnExternalWorkerPool
 * client (pool/extpool.h), and reports on them over HTTP (pool/pool_http.h).
 *
 * SIGTERM/SIGINT: stop accepting, let running workers finish for up to
 * --grace-period seconds, then stop them (SIGTERM, SIGKILL) and exit 0.
 * A second signal stops the workers at once. Exit 2 for bad flags, 1 when
 * an endpoint cannot be set up. */
#ifndef FNW_POOL_H
#define FNW_POOL_H

/* argv[0] is "pool". */
int fnw_pool_main(int argc, char **argv);

#endif
