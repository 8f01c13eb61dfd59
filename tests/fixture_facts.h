/* What a fixture kind holds, as JSON, from the builders' own tables (the values the
 * builders write, never a decoder's reading of them): for checks outside C, such as
 * scripts/blender_check.py, which compares what Blender shows with the fixture rules.
 * `s3rig-mkfixture --facts KIND` prints it. */
#ifndef S3_FIXTURE_FACTS_H
#define S3_FIXTURE_FACTS_H

#include <stdio.h>

/* The facts of KIND on out; 0, or -1 (a kind without facts, with a message on stderr).
 * Kinds: rig-clear-*, geom-vN, gr2model-*, gr2anim-* (but -long), gr2anim-demo. */
int fx_facts(const char *kind, FILE *out);

#endif
