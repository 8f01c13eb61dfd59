/* The Granny sections one request holds: pinned on demand, within a bound, let go at
 * settle points; the provider of a lazy struct gr2_space (gr2obj.h).
 * - The holder's cache is reached only through struct gr2_broker_ops and its ctx.
 * - One request per broker, on one thread; the ops may lock what they share.
 * - gr2_broker_open, then gr2_broker_set_size for every section before the walk, then
 *   gr2_broker_close (unpins what is still pinned, frees; also after a failed open). */
#ifndef S3_GR2BROKER_H
#define S3_GR2BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"
#include "parse/gr2/gr2obj.h"

struct gr2_broker_ops {
    /* Optional (NULL: none): a reason to refuse section sec before anything else (tests);
     * refused as for the bound. */
    const char *(*veto)(void *ctx, uint32_t sec);
    /* Section sec's bytes, pinned until unpin: NULL with why and the reason (NOMEM, IO,
     * LIMIT, ...) when they cannot be had. */
    const uint8_t *(*pin)(void *ctx, uint32_t sec, size_t *size, enum s3_err *reason, char *why, size_t whylen);
    void (*unpin)(void *ctx, uint32_t sec);
    /* Eager mode only (tests): drop the bytes of a section just let go. */
    void (*forget)(void *ctx, uint32_t sec);
    /* A section refused for the bound (the holder may say so in /info). */
    void (*refused)(void *ctx, uint32_t sec);
};

/* Sets up sp over g's sections: bound is what the sections pinned at once may weigh;
 * eager lets go of every idle section at each settle point (and forgets it). */
enum s3_err gr2_broker_open(struct gr2_space *sp, const struct gr2_file *g, uint64_t bound, bool eager,
                            const struct gr2_broker_ops *ops, void *ctx);
/* Section sec's expanded size as the walk weighs it (0: it will not expand). */
void gr2_broker_set_size(struct gr2_space *sp, uint32_t sec, size_t size);
void gr2_broker_close(struct gr2_space *sp);

#endif
