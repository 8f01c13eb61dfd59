/* A Turok 1 graphic object as a neutral model (parse/base/model.h), for the exports: its
 * nodes the skeleton, each part with something to draw a mesh under its node's bone, one
 * group per section; a section that cannot be drawn is left out and named.
 * - The caller reads the node hierarchy and decodes the sections (t1_section.h) into a
 *   struct t1_object; no tree and no file involved.
 * - Fails (no model) when the hierarchy is not a tree of the object's nodes, or when no
 *   section has a triangle to draw. */
#ifndef S3_T1_MODEL_H
#define S3_T1_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/model.h"
#include "parse/t2fs/t1_section.h"

struct t1_obj_node {
    uint32_t *children; /* usChildNodeIndices (malloc'd) */
    uint32_t nchildren;
};

struct t1_obj_section {
    uint32_t node, part, index; /* nodes/node/parts/part/sections/index */
    bool ok;                    /* s holds the decoded section; false: err says why it was not read */
    struct t1_section s;
    char err[T1_ERR];
};

struct t1_object {
    struct t1_obj_node *node;
    uint32_t nnodes;
    struct t1_obj_section *sec; /* in order: node, part, index */
    size_t nsec, capsec;
    struct mdl_notes missing; /* parts that could not be reached ("nodes/1/parts: why"), one line each */
    bool oom;      /* a helper below ran out of memory */
};

/* Room for nnodes nodes (zeroed): S3_OK, or NOMEM. */
enum s3_err t1_object_nodes(struct t1_object *o, uint32_t nnodes);
/* A new zeroed section entry at (node, part, index), or NULL when out of memory. */
struct t1_obj_section *t1_object_section(struct t1_object *o, uint32_t node, uint32_t part, uint32_t index);
/* Appends "what: why\n" to missing. */
void t1_object_missing(struct t1_object *o, const char *what, const char *why);
void t1_object_free(struct t1_object *o);

/* The model of object o (name: the model node's name). S3_OK, or the reason with err:
 * FORMAT (a hierarchy that is not a tree of the nodes, nothing to draw), LIMIT (more than
 * 32-bit indices hold), NOMEM. out->left_out
 * lists what was left out (o->missing first), one line each, or is NULL. */
enum s3_err t1_object_model(const struct t1_object *o, const char *name, struct mdl_model *out, char *err,
                            size_t errlen);

#endif
