/* A folder mount following its folder (issue 33, "Changes while mounted"), through the
 * kernel: a package added (renamed into place), replaced (rewritten in place) and removed
 * under a mount while reader threads run shows up in /files, /keys, /conflicts and /info;
 * a handle opened on a resource before its package was replaced reads the new bytes or
 * an error, never the old ones; with -o nowatch nothing changes. The waits poll (up to
 * WAIT_MS) for a state the rules define: they check that it comes, not how fast.
 * S3RIG_NO_MOUNT_TESTS=1 skips these explicitly. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture_folder.h"
#include "fs/cmd/rw.h"
#include "fs/cmd/watch.h"
#include "fs/open/open.h"
#include "fs/views/sims/view_folder.h"
#include "mountutil.h"
#include "testutil.h"

#define WAIT_MS 5000
/* K2's community name; every provider of it in the fixture holds FXF "same two" */
#define K2 "S4_0333406C_00000000_0000000000002222%%+_XML.xml"
/* K3 (b/B.package's alone in the fixture): its name starts so, the type's tag follows */
#define K3_PREFIX "S4_00B2D882_00000000_0000000000003333"

/* A package of one resource, K3's type with this instance and these bytes, written to
 * path: through a temporary renamed into place (rename: IN_MOVED_TO) or rewritten in
 * place (IN_CLOSE_WRITE). */
static void write_package(const char *path, uint64_t instance, const char *bytes, bool by_rename)
{
    struct fxp_res r = fxf_key[FXF_K3];
    r.instance = instance;
    r.data = (const uint8_t *)bytes;
    r.len = strlen(bytes);
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    size_t size;
    uint8_t *pkg = fxp_build(&o, &r, 1, &size, &lay);
    assert_non_null(pkg);
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.part", path);
    const char *target = by_rename ? tmp : path;
    int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, pkg, size), (ssize_t)size);
    assert_int_equal(close(fd), 0);
    free(pkg);
    if (by_rename)
        assert_int_equal(rename(tmp, path), 0);
}

/* A package holding K3 with these bytes. */
static void write_k3_package(const char *path, const char *bytes, bool by_rename)
{
    write_package(path, fxf_key[FXF_K3].instance, bytes, by_rename);
}

/* The entry of dir whose name starts with prefix, into out; false when none. */
static bool find_prefixed(const char *dir, const char *prefix, char *out, size_t outlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(out, outlen, "%s", e->d_name);
            found = true;
        }
    closedir(d);
    return found;
}

/* The file's first bytes (up to 4095) as a string, NULL when it cannot be opened or read
 * (a reader racing a rescan may get ESTALE: no assertion here, readers are threads). */
static char *read_text(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    char *s = calloc(1, 4096);
    size_t n = 0;
    ssize_t k = 0;
    while (s && n < 4095 && (k = read(fd, s + n, 4095 - n)) > 0)
        n += (size_t)k;
    bool failed = k < 0;
    close(fd);
    if (failed) {
        free(s);
        return NULL;
    }
    return s;
}

/* What the mount shows now, in the terms the checks use. */
struct view {
    bool has_new;           /* /files/new.package is a directory */
    char k3_target[512];    /* /keys/K3... 's link ("" when none) */
    bool k3_conflict;       /* /conflicts/K3... exists */
    int packages, conflicts; /* from /info, -1 when not found */
    char k3_bytes[64];      /* /keys/K3.../data.bin */
};

static int info_count(const char *info, const char *field)
{
    const char *p = info ? strstr(info, field) : NULL;
    return p ? atoi(p + strlen(field)) : -1;
}

static void look(const char *mnt, struct view *v)
{
    memset(v, 0, sizeof *v);
    char p[1024], name[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/files/new.package", mnt);
    v->has_new = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(p, sizeof p, "%s/keys", mnt);
    if (find_prefixed(p, K3_PREFIX, name, sizeof name)) {
        snprintf(p, sizeof p, "%s/keys/%s", mnt, name);
        ssize_t k = readlink(p, v->k3_target, sizeof v->k3_target - 1);
        v->k3_target[k > 0 ? k : 0] = 0;
        snprintf(p, sizeof p, "%s/keys/%s/data.bin", mnt, name);
        char *b = read_text(p);
        snprintf(v->k3_bytes, sizeof v->k3_bytes, "%s", b ? b : "");
        free(b);
    }
    snprintf(p, sizeof p, "%s/conflicts", mnt);
    v->k3_conflict = find_prefixed(p, K3_PREFIX, name, sizeof name);
    snprintf(p, sizeof p, "%s/info", mnt);
    char *info = read_text(p);
    v->packages = info_count(info, "\npackages: ");
    v->conflicts = info_count(info, "\nconflicts: ");
    free(info);
}

static void sleep_ms(unsigned ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Polls until what the mount shows satisfies want (up to WAIT_MS); the last view. */
static bool wait_for(const char *mnt, bool (*want)(const struct view *), struct view *v)
{
    for (unsigned waited = 0; waited <= WAIT_MS; waited += 50) {
        look(mnt, v);
        if (want(v))
            return true;
        sleep_ms(50);
    }
    return false;
}

/* The fixture as built: 7 packages, 3 conflicts, K3 only b/B.package's. */
static bool is_original(const struct view *v)
{
    return !v->has_new && v->packages == 7 && v->conflicts == 3 && !v->k3_conflict &&
           strncmp(v->k3_target, "../files/b/B.package/resources/" K3_PREFIX, 31 + strlen(K3_PREFIX)) == 0 &&
           strcmp(v->k3_bytes, "b three") == 0;
}

/* new.package added at priority 500: it loads after b/B.package ("B" < "NEW" upper-cased),
 * so it wins K3, which becomes a conflict. */
static bool is_added(const struct view *v)
{
    return v->has_new && v->packages == 8 && v->conflicts == 4 && v->k3_conflict &&
           strncmp(v->k3_target, "../files/new.package/resources/" K3_PREFIX, 31 + strlen(K3_PREFIX)) == 0 &&
           strcmp(v->k3_bytes, "new three") == 0;
}

static bool is_replaced(const struct view *v)
{
    return v->has_new && v->packages == 8 && v->conflicts == 4 && strcmp(v->k3_bytes, "replaced three, longer") == 0;
}

static void expect_view(const char *mnt, bool (*want)(const struct view *), const char *what)
{
    struct view v;
    if (!wait_for(mnt, want, &v))
        fail_msg("%s: not seen: new %d, packages %d, conflicts %d, K3 conflict %d, K3 -> '%s' holding '%s'", what,
                 v.has_new, v.packages, v.conflicts, v.k3_conflict, v.k3_target, v.k3_bytes);
}

/* The fixture folder built at TMP/mods-NAME and mounted at TMP/m-NAME with opts (mods and
 * mnt: PATH_LEN bytes each), shown as built. */
#define PATH_LEN 512
static void mount_mods(const char *name, const char *opts, char *mods, char *mnt)
{
    snprintf(mods, PATH_LEN, "%s/mods-%s", tmpdir, name);
    assert_int_equal(mkdir(mods, 0755), 0);
    assert_int_equal(fxf_build(mods, true), 0);
    snprintf(mnt, PATH_LEN, "%s/m-%s", tmpdir, name);
    do_mount(mods, mnt, opts);
    expect_view(mnt, is_original, "the fixture");
}

/* Readers while the folder changes: K2 is "same two" in every provider, before, during
 * and after, so a read of it that succeeds reads exactly that; then what look() reads:
 * K3's bytes through /keys, /conflicts and /info. One struct a thread. */
struct reader {
    const char *mnt;
    _Atomic bool stop; /* set by the test, read by the reader thread */
    _Atomic int bad, reads;
};

static void *read_loop(void *p)
{
    struct reader *r = p;
    char path[1024];
    while (!r->stop) {
        snprintf(path, sizeof path, "%s/keys/%s/data.bin", r->mnt, K2);
        char *b = read_text(path);
        if (b && strcmp(b, "same two") != 0)
            r->bad++;
        r->reads += b != NULL;
        free(b);
        struct view v;
        look(r->mnt, &v);
    }
    return NULL;
}

static void start_readers(const char *mnt, struct reader *r, pthread_t *th, int n)
{
    for (int k = 0; k < n; k++) {
        r[k].mnt = mnt;
        r[k].stop = false;
        r[k].bad = r[k].reads = 0;
        assert_int_equal(pthread_create(&th[k], NULL, read_loop, &r[k]), 0);
    }
}

/* Each reader read K2 at least once, and never other bytes. */
static void stop_readers(struct reader *r, pthread_t *th, int n)
{
    for (int k = 0; k < n; k++)
        r[k].stop = true;
    for (int k = 0; k < n; k++) {
        assert_int_equal(pthread_join(th[k], NULL), 0);
        assert_int_equal(r[k].bad, 0);
        assert_true(r[k].reads > 0);
    }
}

static void test_watch_follows(void **state)
{
    (void)state;
    char mods[PATH_LEN], mnt[PATH_LEN], pkg[1024], p[1024], name[256];
    mount_mods("watch", "spin=0,watch", mods, mnt);

    struct reader r[2];
    pthread_t th[2];
    start_readers(mnt, r, th, 2);

    snprintf(pkg, sizeof pkg, "%s/new.package", mods);
    write_k3_package(pkg, "new three", true);
    expect_view(mnt, is_added, "added");

    /* a handle on new.package's K3 opened before it is replaced */
    snprintf(p, sizeof p, "%s/files/new.package/resources", mnt);
    assert_true(find_prefixed(p, K3_PREFIX, name, sizeof name));
    snprintf(p, sizeof p, "%s/files/new.package/resources/%s/data.bin", mnt, name);
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);

    write_k3_package(pkg, "replaced three, longer", false);
    expect_view(mnt, is_replaced, "replaced");
    char buf[64] = {0};
    ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
    if (got >= 0) /* the new bytes, or an error: never the old package's */
        assert_string_equal(buf, "replaced three, longer");
    else
        assert_true(errno == ESTALE || errno == EIO);
    close(fd);

    assert_int_equal(unlink(pkg), 0);
    expect_view(mnt, is_original, "removed");

    stop_readers(r, th, 2);
    do_umount(mnt);
}

/* A package added in a new subfolder (watched once made) is followed too. */
static bool has_sub(const struct view *v)
{
    return v->packages == 8 && v->conflicts == 4;
}

static void test_watch_new_subfolder(void **state)
{
    (void)state;
    char mods[PATH_LEN], mnt[PATH_LEN], pkg[1024];
    mount_mods("sub", NULL, mods, mnt); /* followed by default */
    snprintf(pkg, sizeof pkg, "%s/zz", mods);
    assert_int_equal(mkdir(pkg, 0755), 0);
    sleep_ms(400); /* the folder's creation seen and watched (else: the next rescan lists it) */
    snprintf(pkg, sizeof pkg, "%s/zz/new.package", mods);
    write_k3_package(pkg, "new three", false);
    expect_view(mnt, has_sub, "added in a new subfolder");
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/files/zz/new.package", mnt);
    assert_int_equal(stat(p, &st), 0);
    do_umount(mnt);
}

/* A package holding K3's type with instance `instance` (a key the fixture lacks), renamed
 * into place at path. */
static void write_new_key_package(const char *path, uint64_t instance)
{
    write_package(path, instance, "fresh", true);
}

/* "watch: generations: A alive, M at most, F freed" of /info; false when absent. */
static bool watch_gens(const char *mnt, unsigned *alive, unsigned *most, unsigned *freed)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/info", mnt);
    char *info = read_text(p);
    const char *line = info ? strstr(info, "watch: generations: ") : NULL;
    bool ok = line && sscanf(line, "watch: generations: %u alive, %u at most, %u freed", alive, most, freed) == 3;
    free(info);
    return ok;
}

/* A change the watch counts while a rescan is running gets a rescan of its own, with no
 * further change. In-process, with the watch (watch.c) and the generations (rw.c) as the
 * mount runs them and no FUSE: a thread in the notifier's place takes the current
 * generation after the first change (rw_acquire: the folder opened and scanned again);
 * that scan is held once it has walked the folder (folder_view_test_on_scan, a test seam
 * of view_folder.h), the second package is written then and the test waits until the
 * watch has counted it. So the generation the first change made lacks the second package
 * (checked: the race was hit), and the next rw_acquire, the one that second change asks
 * for, must open the folder again: with a flag cleared after the opening instead of
 * rw.c's counter, the change is lost and it never shows. */
struct race {
    struct rw rw;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned changes; /* counted by the watch's callback */
    bool arm, held, release;
};

static void race_changed(void *ctx)
{
    struct race *r = ctx;
    rw_mark_stale(&r->rw); /* what fuse_ll.c's folder_changed does, and it wakes the notifier */
    pthread_mutex_lock(&r->mu);
    r->changes++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void race_scan_walked(void *ctx)
{
    struct race *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (r->arm) {
        r->arm = false;
        r->held = true;
        pthread_cond_broadcast(&r->cv);
        while (!r->release)
            pthread_cond_wait(&r->cv, &r->mu);
    }
    pthread_mutex_unlock(&r->mu);
}

/* Waits (up to WAIT_MS) until *flag is set or changes reach `changes`; false on timeout. */
static bool race_wait(struct race *r, const bool *flag, unsigned changes)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&r->mu);
    int rc = 0;
    while (rc == 0 && !(flag ? *flag : r->changes >= changes))
        rc = pthread_cond_timedwait(&r->cv, &r->mu, &until);
    bool ok = flag ? *flag : r->changes >= changes;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

/* The notifier's part: once the first change is counted, the current generation. */
static void *race_notifier(void *ctx)
{
    struct race *r = ctx;
    if (race_wait(r, NULL, 1))
        rw_release(&r->rw, rw_acquire(&r->rw));
    return NULL;
}

/* "packages: N" of a generation's /info. */
static int gen_packages(struct rw_gen *g)
{
    uint32_t info;
    size_t len;
    assert_int_equal(tree_resolve(g->fs->tree, "info", &info), 0);
    char *text = tree_render(g->fs->tree, info, &len);
    int n = info_count(text, "\npackages: ");
    free(text);
    return n;
}

static void test_watch_change_during_rescan(void **state)
{
    (void)state;
    static const struct s3fs_opts opts; /* the defaults */
    char mods[PATH_LEN], pkg[1024], err[512];
    snprintf(mods, sizeof mods, "%s/mods-race", tmpdir);
    assert_int_equal(mkdir(mods, 0755), 0);
    assert_int_equal(fxf_build(mods, true), 0);
    struct race *r = calloc(1, sizeof *r);
    assert_non_null(r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    struct s3fs *fs = NULL;
    if (s3fs_open(&fs, mods, &opts, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(rw_init_watch(&r->rw, fs, &opts), 0);
    struct rw_gen *g = rw_acquire(&r->rw);
    assert_int_equal(gen_packages(g), 7); /* the fixture, scanned */
    rw_release(&r->rw, g);
    folder_view_test_on_scan(race_scan_walked, r);
    struct folder_watch *w = NULL;
    assert_int_equal(folder_watch_start(&w, mods, race_changed, r), 0);

    r->arm = true; /* (no scan runs now) the next one waits once it walked the folder */
    pthread_t notifier;
    assert_int_equal(pthread_create(&notifier, NULL, race_notifier, r), 0);
    snprintf(pkg, sizeof pkg, "%s/first.package", mods);
    write_new_key_package(pkg, 0xA1);
    assert_true(race_wait(r, &r->held, 0)); /* the rescan of the first change, held */
    pthread_mutex_lock(&r->mu);
    unsigned before = r->changes;
    pthread_mutex_unlock(&r->mu);
    snprintf(pkg, sizeof pkg, "%s/second.package", mods);
    write_new_key_package(pkg, 0xB2);
    assert_true(race_wait(r, NULL, before + 1)); /* counted while that rescan runs */
    pthread_mutex_lock(&r->mu);
    r->release = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    assert_int_equal(pthread_join(notifier, NULL), 0);

    /* the first change's generation, not opening again: walked before second.package */
    g = rw_acquire_epoch(&r->rw, rw_epoch(&r->rw));
    assert_non_null(g);
    assert_int_equal(g->epoch, 1);
    assert_int_equal(gen_packages(g), 8);
    rw_release(&r->rw, g);
    /* no further change: the second one's rescan comes at the next acquire */
    g = rw_acquire(&r->rw);
    assert_int_equal(g->epoch, 2);
    assert_int_equal(gen_packages(g), 9);
    rw_release(&r->rw, g);
    uint64_t alive, most, freed;
    rw_gen_counts(&r->rw, &alive, &most, &freed);
    assert_int_equal(alive + freed, 3); /* the first open's and one per change */

    folder_watch_stop(w);
    folder_view_test_on_scan(NULL, NULL);
    assert_true(r->changes >= 2);
    rw_free(&r->rw);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

static void test_nowatch(void **state)
{
    (void)state;
    char mods[PATH_LEN], mnt[PATH_LEN], pkg[1024];
    mount_mods("nowatch", "watch,nowatch", mods, mnt); /* the last one given stands */
    snprintf(pkg, sizeof pkg, "%s/new.package", mods);
    write_k3_package(pkg, "new three", true);
    /* as long as a watching mount may take to show it: still the folder as mounted */
    struct view v;
    assert_false(wait_for(mnt, is_added, &v));
    assert_true(is_original(&v));
    do_umount(mnt);
}

/* A rescan publishes a new generation; the old one is freed when no request holds it
 * (issue 33, "Changes while mounted"): readers run while b/B.package is rewritten ten
 * times, each version waited for; old generations are freed and the number alive at once
 * stays bounded by what can hold one, not by the number of rescans. Under ASan and TSan
 * (scripts/tsan.sh) a tree freed while a request used it is a report. */
static void test_watch_generations_freed(void **state)
{
    (void)state;
    char mods[PATH_LEN], mnt[PATH_LEN], pkg[1100];
    mount_mods("gens", "spin=0,watch", mods, mnt);
    snprintf(pkg, sizeof pkg, "%s/b/B.package", mods);
    unsigned alive, most, freed;
    assert_true(watch_gens(mnt, &alive, &most, &freed));
    assert_int_equal(alive, 1);
    enum { READERS = 3, VERSIONS = 10 };
    struct reader rd[READERS];
    pthread_t th[READERS];
    start_readers(mnt, rd, th, READERS);
    unsigned most_seen = 0;
    for (unsigned k = 1; k <= VERSIONS; k++) {
        char want[64];
        snprintf(want, sizeof want, "version %u", k);
        write_k3_package(pkg, want, k % 2 == 0);
        struct view v;
        bool shown = false;
        for (unsigned waited = 0; !shown && waited <= WAIT_MS; waited += 50) {
            look(mnt, &v);
            shown = strcmp(v.k3_bytes, want) == 0;
            if (!shown)
                sleep_ms(50);
        }
        assert_true(shown);
        assert_true(watch_gens(mnt, &alive, &most, &freed));
        most_seen = alive > most_seen ? alive : most_seen;
    }
    stop_readers(rd, th, READERS);
    assert_true(watch_gens(mnt, &alive, &most, &freed));
    printf("generations: %u alive now, %u at most (%u seen), %u freed, %u versions\n", alive, most, most_seen,
           freed, VERSIONS);
    assert_true(alive + freed >= VERSIONS + 1); /* a rescan per version at least */
    assert_true(freed > 0);
    assert_true(most <= READERS + 3);
    do_umount(mnt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mount_test(test_watch_follows),
        mount_test(test_watch_new_subfolder),
        cmocka_unit_test(test_watch_change_during_rescan),
        mount_test(test_nowatch),
        mount_test(test_watch_generations_freed),
        mount_test(test_no_sanitizer_reports),
    };
    return cmocka_run_group_tests_name("folder watch", tests, mount_group_setup, mount_group_teardown);
}
