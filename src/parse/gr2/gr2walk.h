/* The Granny object graph as a walk: what one member element holds (resolution), and
 * where each shared object is first met in a breadth-first walk from the root object
 * (its "first location", a '/'-separated path of member names and indices below it).
 * - Pure: bytes come through struct gr2_space; the walk settles (gr2_space_settle). */
#ifndef S3_GR2WALK_H
#define S3_GR2WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/gr2/gr2obj.h"

enum gr2_elem_kind {
    GR2_EK_VALUE,    /* a scalar, string or Transform: read it in place */
    GR2_EK_INLINE,   /* a struct stored in place (obj, type) */
    GR2_EK_OBJECT,   /* a reference to one struct (obj, type) */
    GR2_EK_ARRAY,    /* count structs of `size` bytes at obj (type) */
    GR2_EK_PTRARRAY, /* count pointer slots of `size` bytes at obj, each to a `type` */
    GR2_EK_NULL,     /* a NULL reference or an empty array: nothing to show */
    GR2_EK_UNTYPED,  /* points at obj, but no type says what is there */
    GR2_EK_ERROR,    /* why, and the reason as a kind */
};

struct gr2_elem {
    enum gr2_elem_kind kind;
    struct gr2_ref type, obj;
    uint32_t count, size;
    const char *why;
    enum s3_err reason; /* GR2_EK_ERROR: FORMAT, RANGE, IO or NOMEM */
    char buf[160];
};

/* What the element of member m stored at (sec, off) holds. Arrays are checked to fit
 * their section; array element types are decoded (through types). */
void gr2_resolve(struct gr2_types *types, const struct gr2_space *sp, const struct gr2_member *m, uint32_t sec,
                 uint32_t off, struct gr2_elem *e);
/* True when e is an array of flat elements (shown as a table, never walked into). */
bool gr2_elem_is_table(struct gr2_types *types, const struct gr2_space *sp, const struct gr2_elem *e);

/* "a/b" (or "b" when a is the root, ""), malloc'd; the paths first locations are made of. */
char *gr2_path_join(const char *a, const char *b);
/* "a/I" for element I. */
char *gr2_path_index(const char *a, uint64_t i);

enum gr2_key { GR2_KEY_SINGLE = 0, GR2_KEY_ARRAY = 1 };

struct gr2_walk_entry {
    uint32_t sec, off;
    uint8_t kind, used;
    char *path;
};

#define GR2_WALK_MAX_INSTANCES 5000000 /* struct instances the walk visits, at most */
#define GR2_WALK_MIN_INSTANCES 65536   /* ... and at least; in between, a quarter of the bytes */
#define GR2_WALK_MAX_PATH 1024         /* deeper first locations are not recorded */

struct gr2_walk {
    struct gr2_types types; /* the decoded types (the walk's and the caller's) */
    bool done;
    struct gr2_walk_entry *map; /* first locations, open addressing */
    size_t nmap, capmap;
    char note[200]; /* a limit the walk reached (empty: none) */
};

/* Walks the object graph once from the root object (later calls do nothing). Objects
 * whose type or bytes are broken, and tables, get no first location. S3_OK, or NOMEM:
 * then nothing of the walk is kept (no first location missing for lack of memory), and
 * the next call walks again. */
enum s3_err gr2_walk_run(struct gr2_walk *w, const struct gr2_space *sp);
/* The first location of the object (GR2_KEY_SINGLE) or array (GR2_KEY_ARRAY) at r:
 * "" is the root object; NULL when it has none. */
const char *gr2_walk_first(const struct gr2_walk *w, struct gr2_ref r, enum gr2_key kind);
void gr2_walk_free(struct gr2_walk *w);

/* The first skeleton's bones (root.Skeletons[0].Bones). */
struct gr2_bones {
    struct gr2_elem arr; /* GR2_EK_ARRAY: count bones of size bytes at obj */
    const char *first;   /* the Bones array's first location (NULL: none recorded) */
    char **names;        /* count entries, malloc'd; NULL where a bone has no name */
    uint32_t nnamed;     /* bones with a name */
    uint32_t ncrc;       /* bones whose Name is a remapped-string CRC */
};
/* Runs the walk first. FORMAT (with why) when the file has no first skeleton's bones;
 * NOMEM. Free with gr2_bones_free. */
enum s3_err gr2_first_bones(struct gr2_walk *w, const struct gr2_space *sp, struct gr2_bones *out, char *why,
                            size_t whylen);
void gr2_bones_free(struct gr2_bones *b);

#endif
