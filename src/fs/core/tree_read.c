/* The tree (tree.h): Reading files and extended attributes. */
#include "fs/core/tree_impl.h"
#include "fs/core/sbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A node's span, when it has one. */
static bool node_span(const struct node *n, struct tree_span *s)
{
    if (!(n->flags & NODE_HAS_SPAN))
        return false;
    if (n->type == NODE_DIR)
        *s = (struct tree_span){n->size, n->u.dir.span_len};
    else if (n->content == CONTENT_RANGE && !(n->flags & NODE_EXT))
        *s = (struct tree_span){n->u.range.off, n->size};
    else if (n->content == CONTENT_RANGE || n->content == CONTENT_GEN || n->content == CONTENT_VOLATILE)
        *s = n->u.ext->span;
    else
        *s = *n->u.text.span;
    return true;
}

/* ---- reading files ---- */

char *tree_render(struct tree *t, uint32_t ino, size_t *len)
{
    struct node *n = node_at(t, ino);
    *len = 0;
    if (!n || n->content != CONTENT_VOLATILE)
        return NULL;
    struct sbuf b = {0};
    if (n->u.ext->arg == VOLATILE_UNLOCKED) {
        n->u.ext->fn.vol(t, n->u.ext->ctx, &b); /* it locks what it reads (tree.h) */
    } else {
        pthread_mutex_lock(&t->lock); /* the text reads state that populate callbacks extend */
        n->u.ext->fn.vol(t, n->u.ext->ctx, &b);
        pthread_mutex_unlock(&t->lock);
    }
    return sb_take(&b, len);
}

uint64_t tree_size(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    if (!n || n->type == NODE_DIR)
        return 0;
    if (n->content != CONTENT_VOLATILE)
        return n->size;
    size_t len;
    free(tree_render(t, ino, &len));
    return len;
}

enum s3_err tree_read(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len, size_t *got)
{
    struct node *n = node_at(t, ino);
    *got = 0;
    if (!n)
        return S3_ERR_NOT_FOUND;
    if (n->type == NODE_DIR)
        return S3_ERR_IS_DIR;
    if (n->type != NODE_FILE)
        return S3_ERR_INVALID;
    if (n->content == CONTENT_VOLATILE) {
        size_t tl;
        char *text = tree_render(t, ino, &tl);
        if (!text)
            return S3_ERR_NOMEM;
        size_t k = off < tl ? (len < tl - off ? len : (size_t)(tl - off)) : 0;
        memcpy(buf, text + (off < tl ? off : 0), k);
        free(text);
        *got = k;
        return S3_OK;
    }
    if (off >= n->size)
        return S3_OK;
    if (len > n->size - off)
        len = (size_t)(n->size - off);
    switch (n->content) {
    case CONTENT_RANGE: {
        struct source *s = n->flags & NODE_EXT ? n->u.ext->src : n->u.range.src;
        uint64_t at = n->flags & NODE_EXT ? n->u.ext->off : n->u.range.off;
        enum s3_err rc = s ? source_pread_checked(s, at + off, buf, len) : S3_ERR_IO;
        if (rc)
            return S3_ERR_IO;
        *got = len;
        return S3_OK;
    }
    case CONTENT_TEXT:
        memcpy(buf, n->u.text.p + off, len);
        *got = len;
        return S3_OK;
    case CONTENT_GEN:
        return n->u.ext->fn.gen(t, n->u.ext->ctx, n->u.ext->arg, off, buf, len, got);
    default:
        return S3_OK;
    }
}

enum s3_err tree_read_all(struct tree *t, uint32_t ino, uint8_t **buf, size_t *len)
{
    struct node *n = node_at(t, ino);
    *buf = NULL;
    *len = 0;
    if (!n || n->type != NODE_FILE)
        return S3_ERR_INVALID;
    uint64_t size = tree_size(t, ino);
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return S3_ERR_NOMEM;
    for (uint64_t off = 0; off < size;) {
        size_t k = 0;
        enum s3_err e = tree_read(t, ino, off, b + off, (size_t)(size - off), &k);
        if (e || k == 0) { /* short of the size it stated: it changed */
            free(b);
            return e ? e : S3_ERR_IO;
        }
        off += k;
    }
    *buf = b;
    *len = size;
    return S3_OK;
}

static const char XA_OFFSET[] = "user.s3rig.offset";
static const char XA_LENGTH[] = "user.s3rig.length";
static const char XA_TYPE[] = "user.s3rig.type";

/* getxattr(2)'s reply: size 0 asks for the length only; a shorter buffer is RANGE. */
static enum s3_err xattr_reply(const char *value, size_t vlen, char *buf, size_t size, size_t *len)
{
    *len = vlen;
    if (size == 0)
        return S3_OK;
    if (size < vlen)
        return S3_ERR_RANGE;
    memcpy(buf, value, vlen);
    return S3_OK;
}

enum s3_err tree_getxattr(struct tree *t, uint32_t ino, const char *name, char *buf, size_t size, size_t *len)
{
    *len = 0;
    struct node *n = node_at(t, ino);
    if (!n)
        return S3_ERR_NOT_FOUND;
    char num[32];
    struct tree_span s;
    if (node_span(n, &s)) {
        if (strcmp(name, XA_OFFSET) == 0) {
            int l = snprintf(num, sizeof num, "%" PRIu64, s.off);
            return xattr_reply(num, (size_t)l, buf, size, len);
        }
        if (strcmp(name, XA_LENGTH) == 0) {
            int l = snprintf(num, sizeof num, "%" PRIu64, s.len);
            return xattr_reply(num, (size_t)l, buf, size, len);
        }
    }
    const char *xtype = type_str(t, n->xtype);
    if (strcmp(name, XA_TYPE) == 0 && xtype)
        return xattr_reply(xtype, strlen(xtype), buf, size, len);
    return S3_ERR_NO_ATTR;
}

enum s3_err tree_getxattr_str(struct tree *t, uint32_t ino, const char *name, char *buf, size_t size)
{
    size_t len = 0;
    enum s3_err e = size ? tree_getxattr(t, ino, name, buf, size - 1, &len) : S3_ERR_RANGE;
    if (e == S3_OK && len >= size) /* size 1 asked for the length only */
        e = S3_ERR_RANGE;
    if (size)
        buf[e ? 0 : len] = 0;
    return e;
}

enum s3_err tree_listxattr(struct tree *t, uint32_t ino, char *buf, size_t size, size_t *len)
{
    *len = 0;
    struct node *n = node_at(t, ino);
    if (!n)
        return S3_ERR_NOT_FOUND;
    char list[sizeof XA_OFFSET + sizeof XA_LENGTH + sizeof XA_TYPE];
    size_t used = 0;
    if (n->flags & NODE_HAS_SPAN) {
        memcpy(list + used, XA_OFFSET, sizeof XA_OFFSET);
        used += sizeof XA_OFFSET;
        memcpy(list + used, XA_LENGTH, sizeof XA_LENGTH);
        used += sizeof XA_LENGTH;
    }
    if (type_str(t, n->xtype)) {
        memcpy(list + used, XA_TYPE, sizeof XA_TYPE);
        used += sizeof XA_TYPE;
    }
    return xattr_reply(list, used, buf, size, len);
}
