/* worker/plugins.c — finding and loading operation plugins (plugins.h).
 *
 * A plugin's init registers into an empty registry of its own first; the
 * loader then adds those operations to the worker's, so a name already
 * taken is caught and named even when the plugin ignores what
 * fnw_registry_add returned. Plugins are never unloaded: the registry keeps
 * pointers to their operation tables for the life of the process.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/log.h"
#include "worker/plugins.h"

/* ---- where ------------------------------------------------------------------------ */

const char *fnw_plugins_dir(const char *flag_dir, char *buf, size_t n, int *named)
{
    const char *env = getenv("FNW_PLUGINS_DIR");
    *named = 1;
    if (flag_dir)
        return flag_dir;
    if (env)
        return env;
    *named = 0;
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return "";
    exe[len] = '\0';
    snprintf(buf, n, "%s/plugins", dirname(exe));
    return buf;
}

/* ---- who may have written it ------------------------------------------------------------ */

/* A plugin runs as the worker: only the worker's own user (or root) may
 * have been able to write it or the directory it lies in. st is of the
 * file itself (a symlink's target). */
static int check_owner(const char *what, const char *path, const struct stat *st, fnw_error *err)
{
    uid_t me = geteuid();
    if (st->st_uid != me && st->st_uid != 0)
        return fnw_error_set(err,
                             "%s %s is owned by uid %u, not by this worker's user (uid %u) "
                             "or root: refused (a plugin runs as the worker; chown it)",
                             what, path, (unsigned)st->st_uid, (unsigned)me);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return fnw_error_set(err,
                             "%s %s is writable by %s: refused (a plugin runs as the "
                             "worker; chmod go-w it)",
                             what, path, (st->st_mode & S_IWOTH) ? "every user" : "its group");
    return 0;
}

/* ---- one plugin ----------------------------------------------------------------------- */

static void log_loaded(const char *path, const fnw_plugin *pl, const fnw_registry *ops, fnw_level level)
{
    char list[FNW_ERROR_MAX / 2];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < ops->count && len < sizeof list; i++) {
        int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", ops->ops[i]->name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    if (level <= FNW_LOG_INFO)
        fnw_log(NULL, FNW_LOG_INFO, NULL, NULL, "loaded plugin '%s' from %s: operations %s",
                pl->name ? pl->name : "", path, ops->count ? list : "(none)");
}

/* Checks the entry point before calling anything in it. */
static const fnw_plugin *entry_point(void *h, const char *path, fnw_error *err)
{
    dlerror();
    const fnw_plugin *pl = dlsym(h, FNW_PLUGIN_SYMBOL);
    if (!pl) {
        fnw_error_set(err, "plugin %s has no entry point %s (define it with FNW_PLUGIN_DEFINE)", path,
                      FNW_PLUGIN_SYMBOL);
        return NULL;
    }
    if (pl->abi_version != FNW_ABI_VERSION) {
        fnw_error_set(err,
                      "plugin %s was built for fnworker ABI version %d; this worker has version %d "
                      "(rebuild it against this fnworker.h)",
                      path, pl->abi_version, FNW_ABI_VERSION);
        return NULL;
    }
    if (!pl->init) {
        fnw_error_set(err, "plugin %s has no init function in its entry point", path);
        return NULL;
    }
    return pl;
}

/* Moves what the plugin registered into r, failing on a name taken. */
static int merge(fnw_registry *r, const fnw_registry *ops, const char *path, fnw_error *err)
{
    for (size_t i = 0; i < ops->count; i++) {
        fnw_error e;
        if (fnw_registry_add(r, ops->ops[i], &e) != 0)
            return fnw_error_set(err, "plugin %s: %s", path, e.msg);
    }
    return 0;
}

int fnw_plugins_load_file(fnw_registry *r, const char *path, fnw_level level, fnw_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return fnw_error_set(err, "cannot load plugin %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fnw_error_set(err, "plugin %s is not a regular file", path);
    if (check_owner("plugin", path, &st, err) != 0)
        return -1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return fnw_error_set(err, "cannot load plugin %s: %s", path, dlerror());
    const fnw_plugin *pl = entry_point(h, path, err);
    if (!pl) {
        dlclose(h);
        return -1;
    }
    fnw_registry ops;
    fnw_error e;
    fnw_registry_init(&ops);
    snprintf(e.msg, sizeof e.msg, "(no message)");
    if (pl->init(&ops, &e) != 0) {
        dlclose(h);
        return fnw_error_set(err, "plugin %s: init failed: %s", path, e.msg);
    }
    if (merge(r, &ops, path, err) != 0)
        return -1; /* operations may already be in r: keep the code loaded */
    log_loaded(path, pl, &ops, level);
    return 0;
}

/* ---- a directory ------------------------------------------------------------------------ */

static int is_plugin_name(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return d->d_name[0] != '.' && n > 3 && strcmp(d->d_name + n - 3, ".so") == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int fnw_plugins_load_dir(fnw_registry *r, const char *dir, int named, fnw_level level, fnw_error *err)
{
    if (!dir || !*dir)
        return 0;
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (!named && errno == ENOENT)
            return 0;
        return fnw_error_set(err, "plugins directory %s (--plugins-dir or FNW_PLUGINS_DIR): %s", dir,
                             strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return fnw_error_set(err, "plugins directory %s is not a directory", dir);
    if (check_owner("plugins directory", dir, &st, err) != 0)
        return -1;
    struct dirent **names;
    int n = scandir(dir, &names, is_plugin_name, by_name);
    if (n < 0)
        return fnw_error_set(err, "plugins directory %s: %s", dir, strerror(errno));
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (rc == 0 && fnw_plugins_load_file(r, path, level, err) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}
