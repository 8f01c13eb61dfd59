/* s3rig-mkfixture KIND OUT [ARGS]: writes a generated sample file (for the demo,
 * benchmarks, fuzz seeds and manual testing). fx_kind (fixture_kinds.c), which the tests
 * call too, makes every kind but t2fs-big and package-big. KIND:
 *   rig                      a wrapped Sims 3 RIG with an uncompressed GR2 inside
 *   gr2-SIG-vN               a raw GR2 (SIG: le32-old le32 le64 be32 be64 be32-old; N: 6, 7)
 *   gr2obj-SIG-vN            a GR2 with type definitions and a 5-bone skeleton
 *   gr2-big PIXELS VERTS BONES   a texture-like GR2 (le32): a PIXELS-byte pixel array, a
 *                            VERTS-vertex mesh, a BONES-bone skeleton (tables; bench.sh)
 *   gr2-remapped             a small texture-like GR2 whose strings are remapped CRCs
 *   bk2obj-SIG-vN            the same with its sections and tables BitKnit2-compressed
 *   bitknit2-V               a fuzz seed: 3 bytes of output size, a BitKnit2 stream (V 0-3)
 *   gr2model-SIG             a GR2 with a skeleton, three meshes and a model (SIG: le32
 *                            le64 be32 be64; -alt after SIG: LocalTransform/InverseWorld4x4;
 *                            -rough: orientations off unit as real files store them; -shear:
 *                            the root bone's rest scale/shear a shear)
 *   gr2anim-SIG[-bk2][-crc][-old][-shear][-noskel][-loose][-wild]   a GR2 with a skeleton and
 *                            animations using every curve format (fixture_gr2anim.c; SIG: le32
 *                            le64 be32 be64; -bk2 BitKnit2-compressed, -crc every name remapped,
 *                            -old the old inline curves, -shear scale/shears that are not
 *                            diagonal, -noskel no skeleton, -loose tracks named as bones only
 *                            up to case and prefixes, and one naming none, -wild a curve bent
 *                            beyond animation_linear.glb's key bound)
 *   gr2anim-demo             the README's animation: a tube skinned to a 6-bone chain that sways
 *   gr2anim-long TRACKS SECONDS KPS   a long animation (bench.sh): TRACKS tracks of degree-2
 *                            curves with KPS knots a second over SECONDS, on a TRACKS-bone chain
 *   rig-clear-4 | rig-clear-3-ts3 | rig-clear-3-ts4   a clear RIG of that variant
 *   t2fs | t2fs-be           a t2fs file with 3 models, some nodes RNC-compressed
 *   t2fs-turok1 | t2fs-turok1-be   a Turok 1 file: 2 graphic objects, sections of both
 *                            stream layouts and broken streams (fxt_t1_sample)
 *   t2fs-big MODELS VERTS MB a large t2fs file: MODELS models, VERTS vertices per mesh,
 *                            plus one raw leaf of MB MiB
 *   gr2-oodle0               a GR2 (le32-old, v6) whose object section is Oodle0-compressed
 *   oodle0 | oodle0-be       an Oodle0 section (a GR2 object section packed by the test encoder,
 *                            three stages) after the oodle0 fuzz target's 8-byte prefix
 *   geom-vN                  a GEOM (RCOL-wrapped) of version N (5, 12, 13, 14, 15): 6 vertices,
 *                            4 triangles, the clear RIG fixture's bones (fixture_geom.c)
 *   geom-big VERTS           a GEOM v14 grid of about VERTS vertices (64 a row) bound to the clear
 *                            RIG fixture's bones (scripts/bench.sh geom)
 *   geom-figure              a GEOM v14 shaped like a figure, its rings weighted along a chain of
 *                            the clear RIG fixture's bones (the README's picture)
 *   geom-traps               a GEOM v15 with a zero normal, a hash no rig has, weights that do
 *                            not sum to 1 and an index past the vertices
 *   package-s3 | package-s4 | package-s4-rigs   the sample packages of the tests
 *   package-geom             GEOM resources beside a rig covering one and a decoy (fxp_sample 6)
 *   package-big N [3|4]      a package of N resources (RefPack, or zlib with 4)
 *   package-one MB           a Sims 4 package of one zlib resource expanding to MB MiB
 *   gr2-sections N MB        a GR2 of N sections (2 to 16): the objects, then N-1 BitKnit2
 *                            sections of MB MiB (1 to 4095), each holding one object and a
 *                            table (fxg_build_sections)
 *   gr2-members N same|distinct   a GR2 whose root type has N UInt32 members, all named
 *                            "Bone" or each its own (fxg_build_members)
 *   gr2-repeated-string SLOTS LEN   a GR2 whose String array of SLOTS slots all point at one
 *                            LEN-byte string (a SLOTS×LEN value file: fxg_build_repeated_string)
 *   package-repeated-names ENTRIES NAMES   a Sims 4 package of ENTRIES resources of one
 *                            instance and a name map naming it NAMES times (fxp_build_repeated_names)
 *   t2fs-big-mesh VERTS      a t2fs file of one Turok 2 model whose mesh has VERTS vertices
 *   refpack                  the sample rig packed by the test-only RefPack packer
 *   folder DIR [nocfg]       a Mods folder (fixture_folder.c) written into DIR (made if
 *                            missing); nocfg leaves out Resource.cfg
 *   folder-big DIR NPKG NRES [FIRST] a large Mods folder (fxf_write_big_from; scripts/bench.sh
 *                            folder), its packages numbered from FIRST (default 0)
 * s3rig-mkfixture --facts KIND prints, as JSON, the values the builder of KIND writes
 * (fixture_facts.c: bones, a GEOM's vertices and weights, animations and their tracks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"
#include "fixture_dbpf.h"
#include "fixture_facts.h"
#include "fixture_folder.h"
#include "fixture_kinds.h"
#include "fixture_t2fs.h"

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--facts") == 0)
        return fx_facts(argv[2], stdout) ? 1 : 0;
    if (argc == 6 && strcmp(argv[1], "t2fs-big") == 0) {
        if (fxt_write_big(argv[2], (uint32_t)atoi(argv[3]), (uint32_t)atoi(argv[4]),
                          (uint64_t)atoll(argv[5]) << 20, false)) {
            perror(argv[2]);
            return 1;
        }
        return 0;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "package-big") == 0) {
        if (fxp_write_big(argv[2], (uint32_t)atoi(argv[3]), argc == 5 ? atoi(argv[4]) : 3)) {
            perror(argv[2]);
            return 1;
        }
        return 0;
    }
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "folder-big") == 0) {
        mkdir(argv[2], 0755);
        if (fxf_write_big_from(argv[2], (uint32_t)atoi(argv[3]), (uint64_t)atoll(argv[4]),
                               argc == 6 ? (uint32_t)atoi(argv[5]) : 0)) {
            perror(argv[2]);
            return 1;
        }
        return 0;
    }
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "folder") == 0) {
        mkdir(argv[2], 0755);
        if (fxf_build(argv[2], argc == 3 || strcmp(argv[3], "nocfg") != 0)) {
            perror(argv[2]);
            return 1;
        }
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: s3rig-mkfixture KIND OUT [ARGS]\n");
        return 1;
    }
    size_t size = 0;
    uint8_t *data = fx_kind(argv[1], argc - 3, argv + 3, &size);
    if (!data)
        return 1;
    int rc = fx_write_file(argv[2], data, size);
    free(data);
    if (rc) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
