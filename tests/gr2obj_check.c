#include "gr2obj_check.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tree_probe.h"

static void expect_absent(const struct probe *p, const char *path)
{
    enum expect_kind k;
    uint64_t size;
    if (p->stat(p->ctx, path, &k, &size) == 0)
        fail_msg("%s: should be absent", path);
}

/* Floats, one or more per line, each within 1e-6 of the expected values. */
static void expect_floats(const struct probe *p, const char *path, const float *want, int n)
{
    uint8_t *buf;
    size_t len;
    if (p->read(p->ctx, path, &buf, &len))
        fail_msg("%s: cannot read", path);
    char *text = strndup((char *)buf, len), *s = text, *end;
    for (int i = 0; i < n; i++) {
        double v = strtod(s, &end);
        if (end == s || fabs(v - (double)want[i]) > 1e-6)
            fail_msg("%s: value %d is %g, expected %g", path, i, v, (double)want[i]);
        s = end;
    }
    while (*s == ' ' || *s == '\n')
        s++;
    if (*s)
        fail_msg("%s: trailing text '%s'", path, s);
    free(text);
    free(buf);
}

static void check_bone(const struct probe *p, const struct fxg_bone *b, uint32_t i)
{
    char base[96], path[160], want[64];
    snprintf(base, sizeof base, "/granny/root/Skeletons/0/Bones/%u", i);
    snprintf(path, sizeof path, "%s/Name", base);
    snprintf(want, sizeof want, "%s\n", b->name);
    ex_text_is(p, path, want);
    snprintf(path, sizeof path, "%s/ParentIndex", base);
    snprintf(want, sizeof want, "%d\n", b->parent);
    ex_text_is(p, path, want);
    snprintf(path, sizeof path, "%s/Transform/flags", base);
    snprintf(want, sizeof want, "0x%08x\n", b->flags);
    ex_text_is(p, path, want);
    snprintf(path, sizeof path, "%s/Transform/position", base);
    expect_floats(p, path, b->position, 3);
    snprintf(path, sizeof path, "%s/Transform/orientation", base);
    expect_floats(p, path, b->orientation, 4);
    snprintf(path, sizeof path, "%s/Transform/scale_shear", base);
    expect_floats(p, path, b->scale_shear, 9);
    snprintf(path, sizeof path, "%s/InverseWorldTransform", base);
    expect_floats(p, path, b->inverse_world, 16);
    snprintf(path, sizeof path, "%s/LODError", base);
    expect_floats(p, path, &b->lod_error, 1);
    snprintf(path, sizeof path, "%s/ExtendedData", base); /* NULL: absent */
    expect_absent(p, path);
}

void check_gr2_objects(const struct probe *p, const struct fxg_result *r, const char *sig)
{
    ex_text_is(p, "/granny/root/FromFileName", "C:\\fixture\\body.max\n");
    ex_text_is(p, "/granny/root/ArtToolInfo/FromArtToolName", "Fixture Studio\n");
    ex_text_is(p, "/granny/root/ArtToolInfo/ArtToolMajorRevision", "2\n");
    ex_text_is(p, "/granny/root/ArtToolInfo/UnitsPerMeter", "100\n");
    ex_text_is(p, "/granny/root/ArtToolInfo/Origin", "1.5\n-2.25\n0\n");
    ex_text_is(p, "/granny/root/ExporterInfo/ExporterName", "s3rigfs fixture\n");
    /* sharing and cycles: the second reach is a link to the first location */
    ex_link_is(p, "/granny/root/ExporterInfo/ArtTool", "../ArtToolInfo");
    ex_link_is(p, "/granny/root/ExtendedData", ".");
    ex_link_is(p, "/granny/skeletons", "root/Skeletons");
    ex_link_is(p, "/granny/root/Skeletons/1/Bones", "../0/Bones");
    ex_text_is(p, "/granny/root/Skeletons/0/Name", "Skeleton\n");
    ex_text_is(p, "/granny/root/Skeletons/1/Name", "SkeletonCopy\n");
    ex_text_is(p, "/granny/root/Skeletons/1/LODType", "1\n");
    for (uint32_t i = 0; i < r->nbones; i++)
        check_bone(p, &r->bones[i], i);
    /* every scalar kind */
    ex_text_is(p, "/granny/root/Misc/i8", "-10\n");
    ex_text_is(p, "/granny/root/Misc/u8", "1\n2\n255\n");
    ex_text_is(p, "/granny/root/Misc/i16", "-2\n");
    ex_text_is(p, "/granny/root/Misc/u16", "65535\n");
    ex_text_is(p, "/granny/root/Misc/half", "1\n-5\n");
    ex_text_is(p, "/granny/root/Misc/bn8", "-128\n");
    ex_text_is(p, "/granny/root/Misc/n8", "200\n");
    ex_text_is(p, "/granny/root/Misc/bn16", "-32768\n");
    ex_text_is(p, "/granny/root/Misc/n16", "40000\n");
    ex_text_is(p, "/granny/root/Misc/u32", "4000000000\n");
    ex_text_is(p, "/granny/root/Misc/Vec/x", "0.5\n");
    ex_text_is(p, "/granny/root/Misc/Vec/z", "1.5\n");
    ex_text_is(p, "/granny/root/Misc/Vecs/0/x", "2\n");
    ex_text_is(p, "/granny/root/Misc/Vecs/1/z", "4.5\n");
    /* an array of flat structs is a table: the bytes as stored, and one CSV row each */
    ex_text_is(p, "/granny/root/Misc/Points.csv", "x,y,z\n0,1,2\n3,4,5\n");
    expect_absent(p, "/granny/root/Misc/Points");
    uint8_t *pts;
    size_t npts;
    assert_int_equal(p->read(p->ctx, "/granny/root/Misc/Points.bin", &pts, &npts), 0);
    assert_int_equal(npts, 24);
    for (int k = 0; k < 6; k++) { /* file byte order: the signature's */
        const uint8_t *q = pts + 4 * k;
        uint32_t u = sig[0] == 'b' ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
                                   : (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
        float f;
        memcpy(&f, &u, 4);
        assert_true(f == (float)k);
    }
    free(pts);
    char ty[256];
    assert_true(p->getxattr(p->ctx, "/granny/root/Misc/Points.bin", "user.s3rig.type", ty, sizeof ty) > 0);
    assert_true(strncmp(ty, "gr2.table[2]x12 type=", 21) == 0);
    /* sanitised names, with the original in the type xattr */
    ex_text_is(p, "/granny/root/Misc/a_b", "11\n");
    char v[256];
    assert_true(p->getxattr(p->ctx, "/granny/root/Misc/a_b", "user.s3rig.type", v, sizeof v) > 0);
    assert_string_equal(v, "gr2.Int32 name=a/b");
    ex_text_is(p, "/granny/root/Misc/dup", "12\n");
    ex_text_is(p, "/granny/root/Misc/dup~2", "13\n");
    ex_text_is(p, "/granny/root/Misc/_member17", "-14\n");
    assert_true(p->getxattr(p->ctx, "/granny/root/Misc/u8", "user.s3rig.type", v, sizeof v) > 0);
    assert_string_equal(v, "gr2.UInt8[3]");
    expect_absent(p, "/granny/root/Misc/Nothing");
    expect_absent(p, "/granny/root/Misc/NoString");
    /* an untyped reference shows where it points */
    uint8_t *buf;
    size_t len;
    assert_int_equal(p->read(p->ctx, "/granny/root/Misc/Opaque", &buf, &len), 0);
    assert_true(len > 2 && buf[0] == '0' && buf[1] == ' ' && buf[len - 1] == '\n');
    free(buf);
    /* one file per distinct type */
    char **names;
    int n = p->list(p->ctx, "/granny/types", &names);
    assert_int_equal(n, 7);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void check_pole_bone(const struct probe *p, const struct fxg_result *r, int chain)
{
    int32_t pole = fx_sample_chains[chain].pole;
    char link[64], want[128], name[128];
    snprintf(link, sizeof link, "/ik_chains/%d/pole.bone", chain);
    snprintf(want, sizeof want, "../../granny/root/Skeletons/0/Bones/%d", pole);
    ex_link_is(p, link, want);
    snprintf(name, sizeof name, "/granny/root/Skeletons/0/Bones/%d/Name", pole); /* where it leads */
    snprintf(want, sizeof want, "%s\n", r->bones[pole].name);
    ex_text_is(p, name, want);
}
