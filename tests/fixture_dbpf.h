/* Builder of DBPF packages written the way each game's tools write them: The Sims 3
 * (2.0, RefPack, no constant fields) and The Sims 4 (2.1, zlib, constant type or group
 * fields), with stored entries, deleted and null records, repeated keys and name maps.
 * Compression by the test-only RefPack packer and the system zlib. */
#ifndef S3_FIXTURE_DBPF_H
#define S3_FIXTURE_DBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fxp_comp {
    FXP_STORED,     /* the extended word 0x0000 */
    FXP_PLAIN,      /* no extended word at all (sizes equal) */
    FXP_REFPACK,    /* 0xFFFF */
    FXP_STREAMABLE, /* 0xFFFE, RefPack bytes */
    FXP_ZLIB,       /* 0x5A42 */
    FXP_DELETED,    /* 0xFFE0, no data */
    FXP_NULL,       /* size on disk 1, memory size 0xFFFFFFFF */
};

struct fxp_res {
    uint32_t type, group;
    uint64_t instance;
    const uint8_t *data; /* the expanded bytes */
    size_t len;
    enum fxp_comp comp;
};

struct fxp_opts {
    int game;              /* 3 or 4: the minor version and the S3_/S4_ prefix */
    uint32_t index_flags;  /* 0x1 constant type, 0x2 constant group, 0x4 constant instance high */
    bool legacy_position;  /* index position only in the field at 0x28 */
    uint32_t major, minor; /* 0: 2 and the game's */
};

#define FXP_MAX 64 /* entries whose layout is recorded (packages may hold more) */
struct fxp_layout {
    uint64_t offset[FXP_MAX], stored_size[FXP_MAX], record[FXP_MAX];
    uint64_t index_pos, index_size;
    size_t size;
};

/* n bytes that compress a little (zlib has work to do), different per seed. malloc'd. */
uint8_t *fxp_pattern(size_t n, uint32_t seed);
/* Returns a malloc'd package. */
uint8_t *fxp_build(const struct fxp_opts *o, const struct fxp_res *r, size_t n, size_t *size,
                   struct fxp_layout *lay);
/* A name map's bytes: version 1, then {instance, length, name} per name. malloc'd. */
uint8_t *fxp_namemap(const uint64_t *instances, const char *const *names, size_t n, size_t *size);
/* The name the package view gives entry r (its expected directory), written from the
 * naming convention; name NULL when the package has none for it, dup 0 for the first of
 * its key. */
void fxp_expected_name(char *out, size_t size, int game, const struct fxp_res *r, const char *name,
                       unsigned dup);

/* The sample packages of the tests: rigs of every encoding, other resources, a name map,
 * a deleted and a null record, a repeated key. */
struct fxp_sample {
    struct fxp_res res[16];
    size_t n;
    const char *names[16]; /* the name each entry should get from the map (or NULL) */
    unsigned dup[16];
    uint8_t *owned[16];    /* buffers behind res[].data */
    uint8_t *file;
    size_t size;
    struct fxp_layout lay;
    struct fxp_opts opts;
};
/* variant 3: Sims 3 (RefPack); 4: Sims 4 (zlib, constant group); 5: Sims 4, every entry
 * a rig (constant type); 6: meshes and rigs (Sims 4, zlib, constant group): a decoy rig
 * (the wrapped sample rig, whose bones the meshes do not have), the clear RIG fixture
 * (variant major 4, having every hash of the first mesh), a GEOM v14 (fxgeom defaults),
 * a GEOM v5 with a hash no rig has (missing_hash, stored), and a name map. */
void fxp_sample(struct fxp_sample *s, int variant);
/* The instances of variant 6's resources. */
#define FXP_GEOM_DECOY 0x0000000100000010ull
#define FXP_GEOM_RIG 0x0000000100000020ull
#define FXP_GEOM_MESH 0x0000000100000030ull
#define FXP_GEOM_CUSTOM 0x0000000100000040ull
void fxp_sample_free(struct fxp_sample *s);
/* A large package for benchmarks: n resources (a wrapped rig every 100th, the rest
 * 1-4 KiB blobs), RefPack (game 3) or zlib (game 4). 0 or -1. */
int fxp_write_big(const char *path, uint32_t n, int game);
/* The same package in memory, with a rig (the sample wrapped RIG, fx_sample_rig) every
 * rig_every-th resource from the first. malloc'd. */
uint8_t *fxp_build_big(uint32_t n, int game, uint32_t rig_every, size_t *size);

/* A package whose name map repeats one instance: `entries` stored 4-byte resources of
 * type 0x12345678, group i, all of instance FXP_REPEATED_INSTANCE, then a zlib name map
 * of `names` names for that instance, each 100 bytes long, the first FXP_REPEATED_FIRST
 * (which names every entry: the first name read wins) padded with '.', the others
 * "later" and '.'. malloc'd. */
#define FXP_REPEATED_INSTANCE 0x00000001000000AAull
#define FXP_REPEATED_FIRST "repeated_first"
uint8_t *fxp_build_repeated_names(uint32_t entries, uint32_t names, size_t *size);
/* The same with the name map stored as map_comp (FXP_STORED, FXP_REFPACK, FXP_ZLIB). */
uint8_t *fxp_build_repeated_names_as(uint32_t entries, uint32_t names, enum fxp_comp map_comp, size_t *size);

#endif
