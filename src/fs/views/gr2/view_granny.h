/* The Granny container view: /granny.gr2, /granny/header, /granny/sections, and the
 * sections' expanded bytes as cache items, lent to a request through the section broker
 * (parse/gr2/gr2broker.h).
 * - It calls nothing above it: what /granny holds besides is added by hooks.
 * - A request pins (gr2_view_pin), reads through gr2_bytes, and unpins; a pointer into
 *   section bytes never outlives a settle point (gr2_space_settle). */
#ifndef S3_VIEW_GRANNY_H
#define S3_VIEW_GRANNY_H

#include "fs/core/view.h"
#include "parse/gr2/gr2.h"
#include "parse/gr2/gr2obj.h"

struct gr2_view;

/* One section's expanded bytes as a cache item.
 *
 * err and expanded are set before the view is published (gr2_view_new) and afterwards
 * written only by the producer, which the cache runs outside its lock (one production of
 * an item at a time), while requests in parallel (-o spin=0) read them from populate
 * callbacks (tree lock) and reads (no tree lock). So they have one lock of their own,
 * gr2_view.state_lock, taken innermost (nothing is taken while holding it): writers hold
 * it while they write, readers copy the state out under it (gr2_secitem_state). */
struct gr2_secitem {
    struct cached c; /* first: the cache hands this pointer back */
    struct gr2_view *v;
    uint32_t sec;
    char err[200]; /* why the bytes cannot be had (empty: they can) */
    int expanded;  /* compressed sections: 0 not tried yet, 1 expanded, -1 failed (err) */
    bool bounded;  /* a request was refused it: with the others it needed, over cache_mb */
};

struct gr2_view {
    struct s3fs *fs;
    struct gr2_file g;
    struct gr2_secitem *items;  /* per section */
    struct gr2_fixup **fixups;  /* per section, sorted by from_offset (loaded on first use) */
    uint32_t *nfixups;
    uint32_t fixups_loaded;     /* sections whose fixups were read (the first pin reads them) */
    /* What is added to /granny when it is first listed, after the container's own
     * nodes (gr2_view_add_granny_extra: the object tree, and whoever else registers),
     * and how the object tree's state is freed with the view. */
    struct view_hooks granny_extra;
    void (*extra_free)(void *state);
    void *extra;
    pthread_mutex_t state_lock;  /* items[].err and .expanded (see gr2_secitem) */
    struct gr2_padding *pad;     /* the container's alignment padding, in offset order */
    size_t npad;
    /* -o rw: nodes inside compressed sections and their place in the expanded bytes
     * (gr2_view_set_span), open addressing by inode; grown under the tree lock */
    struct gr2_place {
        uint32_t ino, sec;
        uint64_t off, len;
    } *places;
    size_t nplaces, capplaces;
};

/* A section's expansion state, copied under the state lock: returns expanded (0, 1, -1)
 * and puts the reason it cannot be had (or "") in err. */
int gr2_secitem_state(struct gr2_view *v, uint32_t sec, char *err, size_t errlen);

/* Adds to /granny, when it is first listed, after the container's own nodes and after
 * hooks registered earlier. S3_OK, or S3_ERR_NOMEM. */
typedef void gr2_granny_extra_fn(struct gr2_view *v, uint32_t granny_dir, void *ctx);
enum s3_err gr2_view_add_granny_extra(struct gr2_view *v, gr2_granny_extra_fn *fn, void *ctx);

/* The space the object decoder walks, for one request: the fixups loaded, every
 * section's size, and its bytes pinned on demand (when the decoder first needs them) and
 * held until gr2_view_unpin, except those it has not used since a settle point
 * (gr2_space_settle), which may be let go to make room. The sections held at once stay
 * within cache_mb (at least 1 MiB): a section that does not fit beside those in use, or
 * cannot be had, reads as NULL with a reason (an .error file), and /info says so. IO when
 * the file changed, NOMEM. */
enum s3_err gr2_view_pin(struct gr2_view *v, struct gr2_space *sp);
void gr2_view_unpin(struct gr2_view *v, struct gr2_space *sp);
/* What a build must make the way a measurement made it (an export's size): the sections
 * space sp was refused (1 each, nsections bytes, malloc'd; NULL when out of memory);
 * gr2_view_pin_as pins a request refused exactly those up front; and whether sp was
 * refused a section beyond them (then what it made differs from what was measured). */
uint8_t *gr2_view_refusals(const struct gr2_view *v, const struct gr2_space *sp);
enum s3_err gr2_view_pin_as(struct gr2_view *v, struct gr2_space *sp, const uint8_t *refused);
bool gr2_view_refused_beyond(const struct gr2_view *v, const struct gr2_space *sp, const uint8_t *refused);
uint32_t gr2_view_nsections(const struct gr2_view *v);
/* Tests: the k-th section fetch from now on (process-wide; 0: none) is refused, once, as
 * when it does not fit in the bound. Returns how many fetches the previous setting still
 * had to go (0: it fired, or none was set). */
uint64_t gr2_view_test_refuse_fetch(uint64_t k);
/* Section sec's cache item (and its cache), for what an open file made from its bytes
 * holds (tree_hold); NULL for an empty or unknown section. */
struct cached *gr2_view_section_item(struct gr2_view *v, uint32_t sec, struct cache **cache);
/* Tests: with on, the requests that pin from now on let go of every idle section at each
 * settle point and drop its bytes from the cache (process-wide), so a pointer kept into
 * section bytes across a settle point is a use after free that ASan reports; the count
 * of sections so dropped. */
void gr2_view_test_eager_settle(bool on);
uint64_t gr2_view_test_eager_drops(void);
/* The span xattrs of bytes [off, off+len) of a section: absolute when stored as is,
 * else the section's stored bytes. */
void gr2_view_span(struct gr2_view *v, uint32_t sec, uint64_t off, uint64_t len, uint64_t *abs, uint64_t *alen);

/* The GR2 part, shared by raw GR2 files and wrapped RIGs: the container at `base` of
 * fs's source (NULL with err when its header is unreadable). */
enum s3_err gr2_view_new(struct s3fs *fs, uint64_t base, struct gr2_view **out, char *err, size_t errlen);
/* Adds granny.gr2 and granny/ to dir. */
void gr2_view_add(struct gr2_view *v, uint32_t dir);
/* Adds the container's structures to fs->cover, its facts to fs->facts and its section
 * lines to /info. S3_OK; NOMEM when /info's hook cannot be added. */
enum s3_err gr2_view_describe(struct gr2_view *v);
uint64_t gr2_view_total_size(const struct gr2_view *v);
/* A node's span: where [off, off+len) of section sec lies (gr2_view_span). In a
 * compressed section it is the stored section, and the node's place in the expanded bytes
 * is remembered for -o rw (gr2_view_expanded_at); out of memory it is not (the node then
 * stays read-only). Called while the tree grows (under its lock). */
void gr2_view_set_span(struct gr2_view *v, uint32_t ino, uint32_t sec, uint64_t off, uint64_t len);
/* -o rw: node ino's place in a compressed section's expanded bytes, for the Granny view
 * shown at dir (the directory holding its granny.gr2 and granny/): false when it has none. */
bool gr2_view_expanded_at(struct tree *t, uint32_t dir, uint32_t ino, struct gr2_view **v, uint32_t *sec,
                          uint64_t *off, uint64_t *len);
/* The same asked of view v itself (its object tree declaring a value's length). */
bool gr2_view_place(struct gr2_view *v, uint32_t ino, uint32_t *sec, uint64_t *off, uint64_t *len);
/* -o rw: what v lends rw through the section hook (view.h: its functions, its source and
 * where its data lies) into *out; the Granny views answer the hook with it. */
void gr2_view_sections(struct gr2_view *v, struct view_section *out);

#endif
