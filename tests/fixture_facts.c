#include "fixture_facts.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_geom.h"
#include "fixture_gr2anim.h"
#include "fixture_gr2model.h"
#include "fixture_rig_clear.h"

/* ---- JSON, just what the facts need ---- */

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* n floats as a JSON array; %.9g gives back the float32 exactly */
static void json_floats(FILE *out, const float *v, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%.9g", i ? ", " : "", (double)v[i]);
    fputc(']', out);
}

static void json_ints(FILE *out, const uint8_t *v, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%u", i ? ", " : "", v[i]);
    fputc(']', out);
}

/* One bone: {"name", "parent", "translation", "rotation" (x y z w), "scale"}; NULL
 * transform parts are left out. */
static void json_bone(FILE *out, bool first, const char *name, int32_t parent, const float *t, const float *q,
                      const float *s)
{
    fprintf(out, "%s\n    {\"name\": ", first ? "" : ",");
    json_str(out, name);
    fprintf(out, ", \"parent\": %d", (int)parent);
    if (t) {
        fprintf(out, ", \"translation\": ");
        json_floats(out, t, 3);
    }
    if (q) {
        fprintf(out, ", \"rotation\": ");
        json_floats(out, q, 4);
    }
    if (s) {
        fprintf(out, ", \"scale\": ");
        json_floats(out, s, 3);
    }
    fputc('}', out);
}

/* ---- the kinds ---- */

static void rig_clear_bones(FILE *out)
{
    fprintf(out, "  \"bones\": [");
    for (int i = 0; i < FXC_BONES; i++) {
        const struct fxc_bone *b = &fxc_bones[i];
        json_bone(out, i == 0, b->name, b->parent, b->pos, b->q, b->s);
    }
    fprintf(out, "]");
}

/* A GEOM of the table mesh: its positions, triangles, bone-hash list (by name) and each
 * vertex's bone bytes and weights as stored (bytes or floats, by the weight declaration). */
static void geom_facts(FILE *out, uint32_t version)
{
    struct fxgeom_opts o = {.version = version};
    struct fxgeom_decl d[FXGEOM_MAX_DECLS];
    uint32_t n = fxgeom_decls(&o, d);
    bool floats = false;
    for (uint32_t i = 0; i < n; i++)
        if (d[i].usage == 5)
            floats = d[i].type == 1;
    fprintf(out, "{\n  \"version\": %u,\n  \"positions\": [", version);
    for (int v = 0; v < FXGEOM_VERTS; v++) {
        fprintf(out, "%s", v ? ", " : "");
        json_floats(out, fxgeom_pos[v], 3);
    }
    fprintf(out, "],\n  \"triangles\": %d,\n  \"hash_names\": [", FXGEOM_TRIS);
    for (int i = 0; i < FXGEOM_HASHES; i++) {
        fprintf(out, "%s", i ? ", " : "");
        json_str(out, fxgeom_rig_names[i]);
    }
    fprintf(out, "],\n  \"vertex_bones\": [");
    for (int v = 0; v < FXGEOM_VERTS; v++) {
        fprintf(out, "%s", v ? ", " : "");
        json_ints(out, fxgeom_bones[v], 4);
    }
    fprintf(out, "],\n  \"weight_type\": \"%s\",\n  \"vertex_weights\": [", floats ? "float" : "byte");
    for (int v = 0; v < FXGEOM_VERTS; v++) {
        fprintf(out, "%s", v ? ", " : "");
        if (floats)
            json_floats(out, fxgeom_wfloats[v], 4);
        else
            json_ints(out, fxgeom_wbytes[v], 4);
    }
    fprintf(out, "],\n  \"rig\": {\n");
    rig_clear_bones(out);
    fprintf(out, "}\n}\n");
}

static void gr2model_facts(FILE *out)
{
    fprintf(out, "{\n  \"bones\": [");
    for (int i = 0; i < FXM_BONES; i++)
        json_bone(out, i == 0, fxm_bones[i].name, fxm_bones[i].parent, NULL, NULL, NULL);
    fprintf(out, "]\n}\n");
}

/* An animation's groups, each with the names of its transform tracks. */
static void json_anims(FILE *out, const struct fxa_result *r)
{
    fprintf(out, "  \"animations\": [");
    for (uint32_t a = 0; a < r->nanims; a++) {
        const struct fxa_anim *an = &r->anim[a];
        fprintf(out, "%s\n    {\"name\": ", a ? "," : "");
        json_str(out, an->name);
        fprintf(out, ", \"duration\": %.9g, \"groups\": [", (double)an->duration);
        for (uint32_t g = 0; g < an->ngroups; g++) {
            const struct fxa_group *gr = &r->group[an->group[g]];
            fprintf(out, "%s{\"name\": ", g ? ", " : "");
            json_str(out, gr->name);
            fprintf(out, ", \"tracks\": [");
            for (uint32_t t = 0; t < gr->ntracks; t++) {
                fprintf(out, "%s", t ? ", " : "");
                json_str(out, gr->track[t].name);
            }
            fprintf(out, "]}");
        }
        fprintf(out, "]}");
    }
    fprintf(out, "]");
}

static int gr2anim_facts(FILE *out, const char *kind)
{
    char sig[8];
    snprintf(sig, sizeof sig, "%.4s", kind + 8);
    struct fxa_opts o = {.sig = sig, .bitknit2 = strstr(kind, "-bk2") != NULL, .remapped = strstr(kind, "-crc") != NULL,
                         .old_layout = strstr(kind, "-old") != NULL, .shear = strstr(kind, "-shear") != NULL,
                         .no_skeleton = strstr(kind, "-noskel") != NULL};
    struct fxa_result r;
    size_t size;
    uint8_t *data = fxa_build(&o, &size, &r);
    if (!data)
        return -1;
    free(data);
    static const float unit[3] = {1, 1, 1};
    fprintf(out, "{\n  \"bones\": [");
    for (int i = 0; !o.no_skeleton && i < FXA_BONES; i++)
        json_bone(out, i == 0, fxa_bones[i].name, fxa_bones[i].parent, fxa_bones[i].position,
                  fxa_bones[i].orientation, unit);
    fprintf(out, "],\n");
    json_anims(out, &r);
    fprintf(out, "\n}\n");
    return 0;
}

static void gr2anim_demo_facts(FILE *out)
{
    static const float zero[3] = {0, 0, 0}, qid[4] = {0, 0, 0, 1}, unit[3] = {1, 1, 1};
    static char names[FXA_DEMO_BONES][8];
    struct fxa_result r = {.ngroups = 1, .nanims = 1};
    r.group[0] = (struct fxa_group){.name = "snake", .ntracks = FXA_DEMO_BONES};
    r.anim[0] = (struct fxa_anim){.name = "sway", .duration = 2, .group = {0}, .ngroups = 1};
    fprintf(out, "{\n  \"bones\": [");
    for (int b = 0; b < FXA_DEMO_BONES; b++) {
        snprintf(names[b], sizeof names[b], "b%d", b);
        r.group[0].track[b].name = names[b];
        json_bone(out, b == 0, names[b], b - 1, b ? fxa_demo_offset : zero, qid, unit);
    }
    fprintf(out, "],\n");
    json_anims(out, &r);
    fprintf(out, "\n}\n");
}

int fx_facts(const char *kind, FILE *out)
{
    if (strncmp(kind, "rig-clear-", 10) == 0) {
        fprintf(out, "{\n");
        rig_clear_bones(out);
        fprintf(out, "\n}\n");
    } else if (strncmp(kind, "geom-v", 6) == 0 && atoi(kind + 6) > 0) {
        geom_facts(out, (uint32_t)atoi(kind + 6));
    } else if (strncmp(kind, "gr2model-", 9) == 0) {
        gr2model_facts(out);
    } else if (strcmp(kind, "gr2anim-demo") == 0) {
        gr2anim_demo_facts(out);
    } else if (strncmp(kind, "gr2anim-", 8) == 0 && strcmp(kind, "gr2anim-long") != 0) {
        return gr2anim_facts(out, kind);
    } else {
        fprintf(stderr, "s3rig-mkfixture: no facts for %s\n", kind);
        return -1;
    }
    return 0;
}
