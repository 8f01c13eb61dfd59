/* Every fixture s3rig-mkfixture writes, by its kind name (the kinds are listed in
 * mkfixture.c): the tests that go through every format (test_formats, test_info) make the
 * format table's seeds with it, in-process. */
#ifndef S3_FIXTURE_KINDS_H
#define S3_FIXTURE_KINDS_H

#include <stddef.h>
#include <stdint.h>

/* The file of that kind (malloc'd), with nargs arguments (gr2-big: PIXELS VERTS BONES; gr2anim-long: TRACKS SECONDS KPS);
 * NULL, with a message on stderr, for a kind it does not know or wrong arguments. */
uint8_t *fx_kind(const char *kind, int nargs, char *const *args, size_t *size);

#endif
