/* tests/fuzz/replay.c — runs every file of the corpus folders it is given
 * through a fuzz target once, without libFuzzer, so that `make check`
 * replays the committed corpora with any compiler in seconds. A target that
 * finds a problem aborts, which fails the run; the last file named is the
 * one that did it.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file being replayed, for the report when the target aborts. */
static char current[4096];

static void on_abort(int sig)
{
    static const char head[] = "replay: finding on ";
    if (write(2, head, sizeof head - 1) < 0 || write(2, current, strlen(current)) < 0 ||
        write(2, "\n", 1) < 0) {
        /* nothing more can be said */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, n = 0;
    uint8_t *p = malloc(cap);
    while (p) {
        n += fread(p + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *q = realloc(p, cap * 2);
        if (!q) {
            free(p);
            p = NULL;
            break;
        }
        p = q;
        cap *= 2;
    }
    int bad = ferror(f) || !p;
    fclose(f);
    if (bad) {
        free(p);
        return -1;
    }
    *data = p;
    *size = n;
    return 0;
}

static int replay_dir(const char *dir, long *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open corpus folder %s\n", dir);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(current, sizeof current, "%s/%s", dir, e->d_name);
        const char *path = current;
        uint8_t *data;
        size_t size;
        if (read_file(path, &data, &size) < 0) {
            fprintf(stderr, "replay: cannot read %s\n", path);
            closedir(d);
            return -1;
        }
        LLVMFuzzerTestOneInput(data, size);
        free(data);
        (*count)++;
    }
    closedir(d);
    return 0;
}

int main(int argc, char **argv)
{
    long count = 0;
    signal(SIGABRT, on_abort);
    signal(SIGSEGV, on_abort);
    for (int i = 1; i < argc; i++)
        if (replay_dir(argv[i], &count) < 0)
            return 1;
    printf("replayed %ld inputs from %d corpus folder(s): no finding\n", count, argc - 1);
    return 0;
}
