/* Reads a .glb back for tests: checks the container (header, chunk lengths and padding,
 * buffer views inside BIN and 4-byte aligned) and parses the JSON with jansson. */
#ifndef S3_GLBREAD_H
#define S3_GLBREAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct glbdoc {
    json_t *json;
    const uint8_t *bin;
    size_t binlen;
};

/* 0, or -1 with a message printed (the file is malformed). */
int glb_read(const uint8_t *f, size_t len, struct glbdoc *d);
void glb_doc_free(struct glbdoc *d);

/* The bytes of accessor i (NULL when malformed); *count, *ncomp, *ctype filled. */
const uint8_t *glb_accessor_data(const struct glbdoc *d, size_t i, size_t *count, int *ncomp, int *ctype);
/* Accessor i as floats (F32 only): malloc'd count×ncomp values. */
float *glb_accessor_floats(const struct glbdoc *d, size_t i, size_t *count, int *ncomp);
/* Accessor i as unsigned integers (U8/U16/U32): malloc'd. */
uint32_t *glb_accessor_uints(const struct glbdoc *d, size_t i, size_t *count, int *ncomp);
/* json_array_get(json_object_get(obj, key), i) as a double (NAN when missing). */
double glb_num(const json_t *obj, const char *key, size_t i);
/* True when node's rotation is the stored q divided by its length (computed in double;
 * within 1e-7 each), every component in [-1, 1] and the whole unit within 1e-6: how the
 * exports write a rotation stored off unit. Else false, with why. */
bool glb_rotation_normalised(const json_t *node, const float q[4], char *why, size_t whylen);
/* True when node parent lists node child among its children. */
bool glb_has_child(const struct glbdoc *d, size_t parent, size_t child);

#endif
