#include "expect_t1.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* One section directory against its case. */
static void check_section(const struct probe *p, const char *dir, const struct fxt *sec,
                          const struct fxt_t1_case *c, bool be)
{
    char path[300];
    snprintf(path, sizeof path, "%s/layout", dir);
    char want[64];
    snprintf(want, sizeof want, "%s\n", c->layout);
    ex_text_is(p, path, want);
    if (c->triangles) {
        snprintf(path, sizeof path, "%s/triangles.txt", dir);
        ex_text_is(p, path, c->triangles);
        snprintf(path, sizeof path, "%s/commands.txt", dir);
        ex_text_is(p, path, c->commands);
        snprintf(path, sizeof path, "%s/triangles.error", dir);
        ex_absent(p, path);
    } else {
        snprintf(path, sizeof path, "%s/triangles.error", dir);
        ex_holds(p, path, ") fits neither layout:\n"); /* after the node's name and file offset */
        ex_holds(p, path, " (at file offset ");
        ex_holds(p, path, "16 slots, 4-bit fields, flag bit 12: ");
        ex_holds(p, path, c->err16);
        ex_holds(p, path, "32 slots, 5-bit fields, flag bit 15: ");
        ex_holds(p, path, c->err32);
        snprintf(path, sizeof path, "%s/triangles.txt", dir);
        ex_absent(p, path);
    }
    /* the raw stream, header stripped, in the file's byte order */
    snprintf(path, sizeof path, "%s/pstream.bin", dir);
    uint8_t *buf;
    size_t len;
    assert_int_equal(p->read(p->ctx, path, &buf, &len), 0);
    assert_int_equal(len, 2 * c->nwords);
    for (size_t i = 0; i < c->nwords; i++)
        assert_int_equal(be ? buf[2 * i] << 8 | buf[2 * i + 1] : buf[2 * i + 1] << 8 | buf[2 * i], c->words[i]);
    free(buf);
    /* vertices.bin: the records the fixture wrote, before it split them into planes */
    const struct fxt *vs = sec->child[2];
    snprintf(path, sizeof path, "%s/vertices.bin", dir);
    assert_int_equal(p->read(p->ctx, path, &buf, &len), 0);
    assert_int_equal(len, 16 * (size_t)c->nverts);
    assert_memory_equal(buf, vs->data, len);
    free(buf);
    /* vertices.txt: the fixture's values, signed where the notes say signed */
    char *txt = malloc(64 * (size_t)c->nverts + 1);
    size_t k = 0;
    txt[0] = 0;
    for (uint32_t i = 0; i < c->nverts; i++) {
        struct fxt_t1_vert x = fxt_t1_vertex(c->seed, i);
        k += (size_t)sprintf(txt + k, "%d %d %d %u %d %d %u %u %u %u\n", x.x, x.y, x.z, x.flag, x.s, x.t, x.c[0],
                             x.c[1], x.c[2], x.c[3]);
    }
    snprintf(path, sizeof path, "%s/vertices.txt", dir);
    ex_text_is(p, path, txt);
    free(txt);
    snprintf(path, sizeof path, "%s/section.bin", dir);
    if (strncmp(dir, "/models", 7) == 0) {
        assert_int_equal(p->read(p->ctx, path, &buf, &len), 0);
        assert_int_equal(len, 8);
        assert_memory_equal(buf, sec->child[0]->data, 8);
        free(buf);
    }
}

void ex_t1_models(const struct probe *p, const struct fxt *root, bool be)
{
    size_t ncases;
    const struct fxt_t1_case *cases = fxt_t1_cases(&ncases);
    assert_int_equal(ncases, 7);
    ex_text_is(p, "/models/0/bounds", "min -1.5 -2 -3\nmax 4 5.25 6\n");
    ex_holds(p, "/models/1/bounds.error", "8 bytes, fewer than 2 x 3 f32");
    uint8_t *buf;
    size_t len;
    assert_int_equal(p->read(p->ctx, "/models/1/bounds.bin", &buf, &len), 0);
    assert_int_equal(len, 8);
    assert_memory_equal(buf, "shortbnd", 8);
    free(buf);
    char *target;
    assert_int_equal(p->readlink(p->ctx, "/models/1/raw", &target), 0);
    assert_string_equal(target, "../../root/0/1");
    free(target);
    /* cases 0 and 2 take 16 slots, case 1 32, cases 3-6 neither */
    ex_text_is(p, "/models/0/layout", "16 2\n32 1\nnone 4\nunreadable 0\n");
    ex_text_is(p, "/models/1/layout", "16 1\n32 0\nnone 0\nunreadable 0\n");
    ex_text_is(p, "/models/0/nodes/0/children", "1\n");
    ex_text_is(p, "/models/0/nodes/0/part_indices", "0\n");
    ex_text_is(p, "/models/0/nodes/1/children", "");
    ex_text_is(p, "/models/0/nodes/1/part_indices", "0\n1\n");
    static const struct {
        unsigned object, node, part, section, c;
    } where[] = {{0, 0, 0, 0, 0}, {0, 0, 0, 1, 2}, {0, 1, 0, 0, 1}, {0, 1, 1, 0, 3}, {0, 1, 1, 1, 4},
                 {0, 1, 1, 2, 5}, {0, 1, 1, 3, 6}, {1, 0, 0, 0, 2}};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char dir[200];
        const struct fxt *sec = fxt_t1_sample_section(root, where[i].object, where[i].node, where[i].part,
                                                      where[i].section);
        snprintf(dir, sizeof dir, "/models/%u/nodes/%u/parts/%u/sections/%u", where[i].object, where[i].node,
                 where[i].part, where[i].section);
        check_section(p, dir, sec, &cases[where[i].c], be);
        /* /named shows the same decoding in the section's own directory */
        snprintf(dir, sizeof dir, "/named/isGraphicObjects/%u/isGeometry/isNodes/%u/isParts/%u/%u", where[i].object,
                 where[i].node, where[i].part, where[i].section);
        check_section(p, dir, sec, &cases[where[i].c], be);
    }
}
