/* worker/plugins.h — loading operation plugins (fnworker.h, "plugins") at
 * start: every *.so of one directory, in name order, each registering its
 * operations through its entry point into the worker's registry.
 *
 * The directory is --plugins-dir, else FNW_PLUGINS_DIR, else plugins/
 * beside the worker's executable; never anything from a job. An empty value
 * loads nothing. A directory that was named (flag or environment) must
 * exist; the default one may be missing (no plugins). Anything wrong with a
 * plugin (not loadable, no entry point, another ABI version, a failing init,
 * an operation name already taken) fails the load with a message naming the
 * file; the worker then exits as on a bad flag. A plugin runs as the worker,
 * so the directory and every plugin file must be owned by the worker's user
 * or root and writable by neither group nor others, or they are refused
 * before anything of them is loaded. Each plugin loaded and its
 * operations are logged at INFO.
 */
#ifndef FNW_PLUGINS_H
#define FNW_PLUGINS_H

#include <stddef.h>

#include "codecs/error.h"
#include "runtime/registry.h"
#include "worker/log_level.h"

/* The plugins directory for flag_dir (NULL when not given): written to buf;
 * *named = 1 when the flag or the environment named it. */
const char *fnw_plugins_dir(const char *flag_dir, char *buf, size_t n, int *named);

/* Loads one plugin into r; logs it (and its operations) when level allows INFO. */
int fnw_plugins_load_file(fnw_registry *r, const char *path, fnw_level level, fnw_error *err);

/* Loads every *.so of dir (sorted by name) into r. "" loads nothing; a
 * missing dir fails when named, else loads nothing. */
int fnw_plugins_load_dir(fnw_registry *r, const char *dir, int named, fnw_level level, fnw_error *err);

#endif
