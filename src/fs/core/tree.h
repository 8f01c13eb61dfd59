/* The virtual tree: directories, files and symlinks under inode numbers, grown lazily by
 * populate callbacks; it knows no file format and no FUSE. Structs are private (tree_impl.h).
 * - Inode numbers are permanent: never freed, renumbered or reused while the tree lives.
 * - Names are unique per directory: a clashing name gets "~N" before its extension.
 * - Grow it only through tree_add_*, tree_graft and tree_set_*, from a populate callback
 *   (its directory and what it made) or before any other thread reads the tree. A
 *   published directory takes nothing: tree_add_* there returns 0, tree_graft S3_ERR_BUSY.
 * - A populate returns S3_OK (its directory is published: read without a lock from then
 *   on) or the reason (everything it added is removed; the next use runs it again).
 * - The tree lock (recursive) serialises growth only: lock order the tree's, then a
 *   view's own, then the cache's. Reading published directories and bytes takes none. */
#ifndef S3_TREE_H
#define S3_TREE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/core/source.h"
#include "parse/base/err.h"

#define TREE_ROOT 1u
#define TREE_MAX_SOURCES 65536u /* the file and the views nested in it, per tree */

/* NODE_NONE: what tree_kind says of a number that names no node (a lookup's "none"). */
enum node_type { NODE_NONE = -1, NODE_DIR, NODE_FILE, NODE_LINK };

struct tree;
/* Adds a directory's children: S3_OK, or the reason the listing failed (the tree undoes
 * what it added and hands it to the caller). */
typedef enum s3_err (*populate_fn)(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);
struct sbuf;
/* Renders the whole current text of a volatile file. Runs under the tree lock (the state
 * populate callbacks extend), or, added with tree_add_volatile_unlocked, without it: then
 * it takes tree_lock itself around that state (and may keep a rendering while
 * tree_version and its own state stay the same). */
typedef void (*render_fn)(struct tree *t, void *ctx, struct sbuf *out);
/* Reads bytes [off, off+len) into buf: *got of them (short only at the end), or the
 * reason (IO when the file changed since it was listed, NOMEM). */
typedef enum s3_err (*gen_read_fn)(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                                   size_t *got);

struct tree_limits {
    uint64_t max_nodes; /* the tree refuses to grow beyond this many nodes */
};

struct tree *tree_new(struct source *src, const struct tree_limits *limits);
void tree_free(struct tree *t);
/* Runs fn(ptr) when the tree is freed (view state). S3_OK, or S3_ERR_NOMEM: then fn is
 * not registered and the caller still owns ptr. */
enum s3_err tree_on_free(struct tree *t, void (*fn)(void *), void *ptr);
/* Gives back what a view counted against its own budget for the listing being made, if
 * that listing fails: undo(ctx, amount) runs when the populate running now is rolled back
 * (or, once it succeeded, one enclosing it whose directory holds its directory), so a
 * retried listing does not count the same thing twice. Outside a populate: S3_OK, nothing
 * kept. S3_ERR_NOMEM: not recorded (the listing fails; the caller gives back now). ctx
 * must live as long as the tree (a view's state freed by tree_on_free). */
enum s3_err tree_on_rollback(struct tree *t, void (*undo)(void *ctx, uint64_t amount), void *ctx, uint64_t amount);
/* Records that an allocation of the caller's failed while it grows the tree: the populate
 * running now fails with NOMEM, as when a tree_add_* runs out of memory. */
void tree_note_oom(struct tree *t);
/* The same for another reason (NOMEM is tree_note_oom): the populate running now fails
 * with e, the first one noted, whatever its callback returns (a registration of a
 * function that makes a node and returns it, tree_gen_item's LIMIT). */
void tree_note_failure(struct tree *t, enum s3_err e);
/* calloc for a view's own state made while it grows the tree (a populate callback, or
 * under the tree lock; never in a producer): a failure, real or refused by
 * tree_test_fail_alloc, fails the populate running now with NOMEM. Free with free(). */
void *tree_calloc(struct tree *t, size_t n, size_t size);
/* Zeroed memory that lives as long as the tree (directory contexts of views): from the
 * arena (no malloc per directory) when small. */
void *tree_alloc(struct tree *t, size_t size);
/* A copy of s that lives as long as the tree (paths kept by directory contexts). */
char *tree_strdup(struct tree *t, const char *s);


/* Sources. Every node is made with the source id of its parent directory (0, the tree's
 * own source, at the root); a view opened over another source at a directory sets that
 * directory's id, so every range node below it reads that source. */
/* Registers a source (it must outlive the tree): S3_OK and its id, S3_ERR_LIMIT past
 * TREE_MAX_SOURCES, or S3_ERR_NOMEM. */
enum s3_err tree_add_source(struct tree *t, struct source *s, uint32_t *id);
struct source *tree_source(struct tree *t, uint32_t id); /* NULL for an unknown id */
/* The warnings (/info) of the view over source id: a populate of one of its directories
 * that fails rolls them back to where they stood when it began, so the listing tried
 * again adds them once (a populate inside it that succeeded keeps its own: its listing
 * is not made again). S3_OK, or INVALID for an unknown id. */
struct diag;
enum s3_err tree_set_source_diag(struct tree *t, uint32_t id, struct diag *d);
/* The source a range node reads (its own id), or a directory's children read. */
struct source *tree_node_source(struct tree *t, uint32_t ino);
/* Makes an existing directory the root of a view: its children are made by fn (the next
 * time it is populated, which may be at once: callers inside the directory's own
 * populate call tree_populate on it next), and read source `src_id`; xtype NULL keeps
 * its type. S3_OK or the reason (BUSY: dir is published; NOT_FOUND, NOT_DIR, INVALID:
 * no such directory or source). */
enum s3_err tree_graft(struct tree *t, uint32_t dir, uint32_t src_id, const char *xtype, populate_fn fn, void *ctx,
               uint64_t arg);

/* Node constructors. They return the new inode number, or 0 (out of memory, node
 * limit reached, a name that cannot be a file name: empty, ".", ".." or with a '/', a
 * size of 2^48 bytes or more). A populate during which one ran out of memory (or got a
 * NULL text: the caller's allocation failed) fails with NOMEM whatever its callback
 * returns: rolled back, counted in tree_warnings, made afresh at the next use.
 * A name already used in that directory is made unique ("Names are unique" above).
 * `xtype` must outlive the tree (a literal); tree_set_type copies run-time strings. */
uint32_t tree_add_dir(struct tree *t, uint32_t parent, const char *name, const char *xtype, populate_fn fn,
                      void *ctx, uint64_t arg);
uint32_t tree_add_range(struct tree *t, uint32_t parent, const char *name, const char *xtype, uint64_t off,
                        uint64_t len);
/* Takes ownership of text (len bytes, malloc'd): small texts are copied into the arena
 * and freed, big ones kept as they are. */
uint32_t tree_add_text(struct tree *t, uint32_t parent, const char *name, const char *xtype, char *text,
                       size_t len);
uint32_t tree_add_textf(struct tree *t, uint32_t parent, const char *name, const char *xtype, const char *fmt,
                        ...) __attribute__((format(printf, 5, 6)));
uint32_t tree_add_gen(struct tree *t, uint32_t parent, const char *name, const char *xtype, uint64_t size,
                      gen_read_fn fn, void *ctx, uint64_t arg);
uint32_t tree_add_link(struct tree *t, uint32_t parent, const char *name, const char *target);
uint32_t tree_add_volatile(struct tree *t, uint32_t parent, const char *name, const char *xtype, render_fn fn,
                           void *ctx);
uint32_t tree_add_volatile_unlocked(struct tree *t, uint32_t parent, const char *name, const char *xtype,
                                    render_fn fn, void *ctx);

/* The size a stat reports now (volatile files are measured). */
uint64_t tree_size(struct tree *t, uint32_t ino);
/* A volatile file's current text (malloc'd), for a reader's snapshot. */
char *tree_render(struct tree *t, uint32_t ino, size_t *len);

void tree_set_span(struct tree *t, uint32_t ino, uint64_t off, uint64_t len);
/* Sets a type string (copied and interned; the caller keeps its own). */
void tree_set_type(struct tree *t, uint32_t ino, const char *xtype);

/* ---- reading the tree (every caller outside the tree reads it only through these) ----
 * A number that names no node gives the "none" answer (NODE_NONE, NULL, 0, false). */

/* The node's kind, or NODE_NONE. */
enum node_type tree_kind(struct tree *t, uint32_t ino);
/* Its name in its directory ("" for the root); lives as long as the tree. */
const char *tree_name(struct tree *t, uint32_t ino);
/* The directory holding it (the root is its own parent); 0 for no node. */
uint32_t tree_parent(struct tree *t, uint32_t ino);
/* A symlink's target (lives as long as the tree); NULL for every other node. */
const char *tree_link_target(struct tree *t, uint32_t ino);
/* True for a file whose text is rendered at each open (/info): its size changes, so a
 * reader takes a snapshot (tree_render) and attributes are not cached. */
bool tree_is_volatile(struct tree *t, uint32_t ino);
/* A directory's children as they stand, in creation order (the order readdir shows):
 * how many, and child i (0 when i is past the end or dir is no directory). Call
 * tree_populate first: an unpopulated directory has none yet. In a computed directory
 * child i is made when first reached: 0 when it cannot be (out of memory: the listing
 * fails with ENOMEM, never comes out short). */
uint32_t tree_child_count(struct tree *t, uint32_t dir);
uint32_t tree_child(struct tree *t, uint32_t dir, uint32_t i);
/* True once a directory's children are final (populated). */
bool tree_is_populated(struct tree *t, uint32_t dir);
/* st_nlink: 1 for files and links; a directory 2 + its subdirectories once populated,
 * 1 ("unknown", as on filesystems that do not count) before. */
uint32_t tree_nlink(struct tree *t, uint32_t ino);
/* For a file that is a byte range of a source: true with the source and where the
 * file starts in it (the adapter replies straight from the file's descriptor). */
bool tree_range(struct tree *t, uint32_t ino, struct source **src, uint64_t *off);
/* Nodes made so far (the highest inode number); safe from any thread. */
uint64_t tree_node_count(struct tree *t);
/* True once max_nodes refused a node (some directories are incomplete). */
bool tree_full(struct tree *t);
/* A directory's populate context when fn is its populate callback, else NULL: how a
 * view finds its own state from a view root. */
void *tree_dir_ctx(struct tree *t, uint32_t dir, populate_fn fn);
/* A generated file's context when fn is its read function, else NULL: how a view finds
 * its own state from one of its files. */
void *tree_gen_ctx(struct tree *t, uint32_t ino, gen_read_fn fn);
/* Name slots looked at so far while adding children (each hash probe): tests count it
 * to prove that making names unique is linear in the children, whatever the names. */
uint64_t tree_name_probes(struct tree *t);
/* Tests only (off unless called): refuses the k-th allocation the tree attempts while it
 * grows from now on, once (k = 1: the next; 0 disarms); and the attempts and failures
 * counted so far. */
void tree_test_fail_alloc(struct tree *t, uint64_t k);
void tree_test_alloc_counts(struct tree *t, uint64_t *attempts, uint64_t *failures);
/* A count that grows whenever the tree grows, a populate ends, or tree_touch is called:
 * what a volatile text shows of the tree's and its views' state is the same while it
 * stays. Read without the lock. */
uint64_t tree_version(struct tree *t);
/* Says that state a volatile text shows changed outside the tree's growth (a view's). */
void tree_touch(struct tree *t);
/* Bytes of the texts kept so far (tree_add_text, tree_add_textf; rolled-back ones too, as
 * the arena keeps them): tests check that a walk keeps no text whose size the input
 * chooses (the rule in view.h: such files are rendered on read). */
uint64_t tree_text_bytes(struct tree *t);
/* Bytes views took with tree_alloc so far (their state; rolled-back ones too): tests
 * check that what a view keeps for a listing does not grow with the file's rows. */
uint64_t tree_alloc_bytes(struct tree *t);
/* Holds the tree lock (recursive): a generator that reads view state which populate
 * callbacks extend takes it around that read. Never hold it while taking the cache's. */
void tree_lock(struct tree *t);
void tree_unlock(struct tree *t);

/* Makes sure a directory's children exist. S3_OK or the reason (then the directory is as
 * it was before: see "A populate that fails"). No lock once populated. */
enum s3_err tree_populate(struct tree *t, uint32_t dir);
/* Populates every directory, those it creates included, so that everything parsed
 * lazily has been parsed (`s3rig info --full`, tests). Goes on past a failing directory;
 * returns S3_OK or the first reason. Iterative: children always have higher inode numbers.
 * A computed directory's entries are made when they are directories (each has its own
 * populate), not when they are links (a million of them, nothing to parse). */
enum s3_err tree_populate_all(struct tree *t);
/* How many of the lazily populated directories made so far have been populated: while
 * done < total, warnings found by parsing may still come. Call under t->lock or when no
 * other thread runs (a volatile file's render function is called under it). */
void tree_progress(struct tree *t, uint32_t src_id, uint64_t *done, uint64_t *total);
/* Appends the tree's own warnings ("warning: ...\n" lines: the node limit, reported once
 * however often it refused; listings failed for lack of memory) and returns how many it
 * wrote. Same locking as
 * tree_progress. */
size_t tree_warnings(struct tree *t, struct sbuf *out);
/* tree_warnings, and one line for view src_id's names that were made unique (how many,
 * and the first one's path). What a view's /info shows. */
size_t tree_view_warnings(struct tree *t, uint32_t src_id, struct sbuf *out);
/* Finds name in dir (populating it). S3_OK and *out, or NOT_FOUND / NOT_DIR, or the
 * reason of the populate. No lock once dir is populated. */
enum s3_err tree_lookup(struct tree *t, uint32_t dir, const char *name, uint32_t *out);
/* Resolves a '/'-separated path from the root (no symlinks followed): as tree_lookup. */
enum s3_err tree_resolve(struct tree *t, const char *path, uint32_t *out);
/* Reads a whole file into a malloc'd buffer (views that decode other nodes' bytes):
 * S3_OK, or the reason (INVALID: not a file). */
enum s3_err tree_read_all(struct tree *t, uint32_t ino, uint8_t **buf, size_t *len);
/* Reads file content: S3_OK and *got bytes (short only at the end), or the reason
 * (NOT_FOUND, IS_DIR, INVALID: not a file; IO, NOMEM). */
enum s3_err tree_read(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len, size_t *got);

/* Extended attributes, as getxattr(2) and listxattr(2) ask: S3_OK and the value's (the
 * list's) length through *len, its bytes in buf unless size is 0 (the length only); or
 * NOT_FOUND (no node), NO_ATTR (no such attribute: ENODATA), RANGE (buf is shorter than
 * the value, *len its length: ERANGE). */
enum s3_err tree_getxattr(struct tree *t, uint32_t ino, const char *name, char *buf, size_t size, size_t *len);
enum s3_err tree_listxattr(struct tree *t, uint32_t ino, char *buf, size_t size, size_t *len);
/* The value as a C string in buf (size bytes, its NUL included; "" on failure): as
 * tree_getxattr. */
enum s3_err tree_getxattr_str(struct tree *t, uint32_t ino, const char *name, char *buf, size_t size);

/* ---- Computed directories: a million entries without a node each ----
 * A directory of symlinks whose names and targets its view computes when asked (a
 * folder's key table), or of directories (ops->populate set: a folder's conflicts):
 * nothing is kept per entry until the entry is used. Entry i's inode
 * number is the directory's base + i, reserved when it is made (so stable, and within
 * max_nodes); its node is made, and kept, when a lookup finds it or a listing
 * (tree_child) reaches it. Lookups cost one find and at most one rendered name, a listing
 * what it returns. The caller's rules:
 * - entry names are unique and valid file names; the table behind them never changes;
 * - name and find run without the tree lock (on that immutable table), target under it
 *   (it may populate other directories, e.g. to learn a package's resource names). */
struct tree_computed_ops {
    /* Entry i's name into buf (NUL-terminated, shorter than size): S3_OK, or the reason. */
    enum s3_err (*name)(void *ctx, uint32_t i, char *buf, size_t size);
    /* The entry named name: S3_OK and *i, or NOT_FOUND; touching O(log n) entries, never n. */
    enum s3_err (*find)(void *ctx, const char *name, uint32_t *i);
    /* Entry i's symlink target (malloc'd) in *target: S3_OK, or the reason (the request
     * fails with it and the entry stays unmade: the next use asks again). */
    enum s3_err (*target)(struct tree *t, void *ctx, uint32_t dir, uint32_t i, char **target);
    /* When set, the entries are directories instead of symlinks (target unused): entry i
     * is a directory of type xtype populated by populate(t, its ino, ctx, i). */
    populate_fn populate;
    const char *xtype;
};
/* Called by dir's own populate callback, before it adds any child: dir becomes a computed
 * directory of n entries (ops must outlive the tree), published when the callback returns
 * 0 (a failed populate undoes it; the reserved numbers are never reused). Past max_nodes
 * it holds the first entries that fit (the rest refused, as any node: tree_full, /info).
 * S3_OK, NOMEM, or BUSY when dir is not being populated or already has children. */
enum s3_err tree_set_computed(struct tree *t, uint32_t dir, const struct tree_computed_ops *ops, void *ctx, uint32_t n);
/* Child i of a published directory as a bare listing needs it (name, number, kind),
 * without making it: in a computed directory an entry not made yet has its name rendered
 * into buf (size bytes; the name then lives in buf), its reserved number and its kind;
 * any other child is tree_child's, its name tree_name's. NULL when there is none or it
 * cannot be rendered (the caller then asks tree_child, which says why). A bare READDIR
 * of /conflicts makes no node per entry. */
const char *tree_child_peek(struct tree *t, uint32_t dir, uint32_t i, char *buf, size_t size, uint32_t *ino,
                            int *kind);
/* Counts, for tests: names rendered by computed directories (a lookup renders at most
 * one), and their entries made into nodes. */
uint64_t tree_computed_renders(struct tree *t);
uint64_t tree_computed_made(struct tree *t);

/* ---- Open handles: what a reader keeps while it reads a file (cache.h) ----
 *
 * A file whose bytes are expanded (a range of an expanded source, or a generated file
 * made from one cache item) is expanded again whenever the cache has dropped it. An open
 * handle holds it instead: tree_hold at open, tree_release at close (every reader that
 * opens a file), so reading it through expands
 * it once; what it holds counts within the cache's one bound (cache.h). A listing holds the same way: tree_populate holds its
 * directory's source (each expanded source in its chain) while the callback runs, so a
 * view nested in an expanded resource is expanded once per listing. A hold produces
 * nothing and costs no node memory (a handle's hold is malloc'd at open). */

/* The cache item a generated file's bytes come from (and its cache), given the file's
 * ctx and arg; NULL when there is none. */
typedef struct cached *(*gen_item_fn)(void *ctx, uint64_t arg, struct cache **cache);
/* Registers, for every generated file read by `read`, the item an open handle holds
 * (process-wide: a small table of read functions; registering again does nothing).
 * S3_OK, or S3_ERR_LIMIT when the table is full. */
enum s3_err tree_gen_item(gen_read_fn read, gen_item_fn item);
struct tree_hold;
/* Holds what file ino's bytes are expanded from until tree_release; NULL when there is
 * nothing to hold (bytes of the file itself, texts, other generated files) or no memory.
 * Produces nothing: the first read does. */
struct tree_hold *tree_hold(struct tree *t, uint32_t ino);
void tree_release(struct tree_hold *h);

/* The relative path from directory from_dir to `to`, both '/'-separated paths from the
 * same root ("" is the root): one "../" per component of from_dir past the components
 * both share, then the rest of `to` ("." when they are the same). malloc'd. */
char *tree_path_relative(const char *from_dir, const char *to);
/* A relative symlink target from directory `from_dir` to node `to`. malloc'd. */
char *tree_relpath(struct tree *t, uint32_t from_dir, uint32_t to);

#endif
