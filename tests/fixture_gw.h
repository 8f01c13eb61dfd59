/* A writer of Granny object sections for the fixtures (fixture_gr2obj.c, fixture_gr2model.c):
 * bytes in a growing buffer, pointers as fixups, strings and member-definition arrays
 * laid out as shared/formats/gr2.md describes them. */
#ifndef S3_FIXTURE_GW_H
#define S3_FIXTURE_GW_H

#include <stddef.h>
#include <stdint.h>

#include "fixture.h"

/* Granny member types (shared/formats/gr2.md) */
enum { END = 0, INLINE = 1, REF = 2, REF_ARRAY = 3, ARRAY_REFS = 4, VARIANT = 5, REF_VARIANT_ARRAY = 7, STRING = 8,
       TRANSFORM = 9, REAL32 = 10, INT8 = 11, UINT8 = 12, BINORMAL8 = 13, NORMAL8 = 14, INT16 = 15, UINT16 = 16,
       BINORMAL16 = 17, NORMAL16 = 18, INT32 = 19, UINT32 = 20, REAL16 = 21, EMPTY_REF = 22 };

#define NO_TYPE 0xFFFFFFFFu

struct gw {
    struct fxbuf b;
    int p; /* pointer size */
    struct fx_fixup fix[4096];
    uint32_t nfix;
};

/* n zero bytes at the end; their offset. */
uint32_t gw_alloc(struct gw *w, size_t n);
/* Values at `at`, in the buffer's byte order. */
void gw_u32(struct gw *w, uint32_t at, uint32_t v);
void gw_u16(struct gw *w, uint32_t at, uint16_t v);
void gw_f32(struct gw *w, uint32_t at, float f);
/* A pointer slot stays zero; the fixup says where it points. */
void gw_ptr(struct gw *w, uint32_t at, uint32_t target);
/* A NUL-terminated string at the end; its offset. */
uint32_t gw_str(struct gw *w, const char *s);

struct mdef {
    uint32_t type;
    const char *name; /* NULL: unnamed */
    uint32_t ref;     /* member-definition array, or NO_TYPE */
    int32_t width;
};

/* A member-definition array (4-aligned, names first, an END entry last); its offset. */
uint32_t gw_type(struct gw *w, const struct mdef *m, int n);

/* Bytes member m takes in a struct (element size × max(width, 1); Inline members are 0:
 * their size is their struct's); a packed struct's size; the offset of the member called name (aborts when
 * there is none). */
uint32_t gw_member_size(const struct gw *w, const struct mdef *m);
uint32_t gw_struct_size(const struct gw *w, const struct mdef *m, int n);
uint32_t gw_offset(const struct gw *w, const struct mdef *m, int n, const char *name);

#endif
