/* The community's DBPF resource type table (docs/formats/dbpf-types.md), generated into
 * dbpf_types.c by scripts/gen_dbpf_types.sh: what s3pe (The Sims 3) and s4pe (The Sims 4)
 * call each type id, as a tag ("_RIG") and a file extension (".grannyrig"). */
#ifndef S3_DBPF_TYPES_H
#define S3_DBPF_TYPES_H

#include <stddef.h>
#include <stdint.h>

enum { DBPF_GAME_TS3 = 1, DBPF_GAME_TS4 = 2 };

struct dbpf_type_row {
    uint32_t type;
    /* [0] in a Sims 3 package (DBPF 2.0), [1] in a Sims 4 package (DBPF 2.1): different
     * only where the two tools disagree on the id */
    const char *tag[2], *ext[2];
    unsigned games; /* DBPF_GAME_* bits: the tools that list the id */
};

/* Sorted by type, each type once. */
extern const struct dbpf_type_row dbpf_type_rows[];
extern const size_t dbpf_ntype_rows;

#endif
