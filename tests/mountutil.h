/* Helpers of the tests that run mount.s3rig and s3rig for real (test_mount, test_pkg_mount,
 * the -o rw tests test_rw_mount and test_rw_fresh):
 * one temporary folder per suite holds the fixture files, the mount points (named m*, so
 * teardown can unmount what a failed test left mounted) and the children's captured
 * output; the children's sanitizer reports go to files in its san/ folder. */
#ifndef S3_MOUNTUTIL_H
#define S3_MOUNTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

extern char tmpdir[64];
extern char sandir[128];
extern const char *mount_bin; /* S3RIG_MOUNT, else mount.s3rig from PATH */

/* S3RIG_NO_MOUNT_TESTS=1: mount tests are skipped, explicitly. */
bool mounts_disabled(void);

/* A mount test runs through run_mount_test, which skips it inside the test when mounts
 * are disabled (cmocka counts a skip in a setup function as a failure). */
struct mount_test {
    void (*fn)(void **state);
};
void run_mount_test(void **state);
#define mount_test(f) {#f, run_mount_test, NULL, NULL, &(struct mount_test){f}}

/* cmocka group setup: mount_bin, and tmpdir made as /tmp/s3rig-PROGRAM-XXXXXX with its
 * san/ folder. */
int mount_group_setup(void **state);
/* cmocka group teardown: lazily unmounts tmpdir/m* and removes tmpdir. */
int mount_group_teardown(void **state);

/* In a forked child: its sanitizer reports go to files in sandir. */
void child_env(void);
/* Runs argv (searched in PATH) with the sanitizer logs set, waits, returns the exit status
 * (128 + signal if killed); stdout captured into out and stderr into err, either may be NULL. */
int run_capture(char *const argv[], char *out, size_t outlen, char *err, size_t errlen);
/* The same with only stderr captured. */
int run(char *const argv[], char *errbuf, size_t errlen);
/* The same with stdout written to the file out_path (e.g. /dev/full), stderr captured. */
int run_to(char *const argv[], const char *out_path, char *err, size_t errlen);
/* S3RIG_CLI, else s3rig from PATH. */
const char *cli_bin(void);

/* True when mnt is the root of another file system than its parent's. */
bool is_mounted(const char *mnt);
/* Writes data as tmpdir/NAME (its path into path). */
void write_fixture(const char *name, const void *data, size_t size, char *path, size_t plen);
/* Makes the folder tmpdir/NAME (its path into path). */
void make_mountpoint(const char *name, char *path, size_t plen);
/* Mounts file on mnt (made if missing; daemonizing, the default) with opts (may be NULL)
 * and asserts it worked. */
void do_mount(const char *file, const char *mnt, const char *opts);
/* Starts `mount.s3rig -f [-o opts] file mnt` as a child (mnt made if missing; SIGINT and
 * SIGTERM at their defaults in it) and waits until mnt is mounted; its pid. */
pid_t start_mount_fg(const char *file, const char *mnt, const char *opts);
/* Unmounts mnt with fusermount3 -u and asserts it worked. */
void do_umount(const char *mnt);
/* Waits (up to 10 s, else fails) until the daemon has let go of the file's lock (flock):
 * an -o rw daemon has committed what was pending and exited. */
void wait_unlocked(const char *path);
/* An -o rw mount of file on mnt unmounted: do_umount, then wait_unlocked(file). */
void umount_rw(const char *mnt, const char *file);

/* open(path, flags), write len bytes, close: 0, or the errno of the first step that
 * failed, which in *step ('o' open, 'w' write, 'c' close). */
int write_file(const char *path, int flags, const void *b, size_t len, char *step);
/* The file at path holds exactly want's size bytes. */
void assert_file_is(const char *path, const void *want, size_t size);

/* A digest of the mounted subtree at dir, walked through the kernel (names in listing
 * order, kinds, sizes, every file's bytes, link targets, the s3rig xattrs; dir's own
 * attributes and its info file left out, so a nested view and the same file mounted
 * alone agree), and how many nodes it covers. Safe from any thread
 * (no test assertions): 0, or an errno of the first operation that failed. */
int mount_digest(const char *dir, uint64_t *digest, size_t *nodes);

/* The last test of a suite (as mount_test(test_no_sanitizer_reports)): fails when any
 * child wrote a sanitizer report, printing it. */
void test_no_sanitizer_reports(void **state);

#endif
