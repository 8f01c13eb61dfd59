/* What the Granny exports drop to be made, said to users: rest transforms with a shear
 * made TRS, and the lines of an export's STEM.warnings file (and /info). */
#include "fs/views/gr2/view_gr2notes.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/diag.h"

enum s3_err gr2_drop_rest_shear(struct mdl_skeleton *s, struct mdl_notes *warn, char *err, size_t errlen)
{
    bool any = false;
    for (uint32_t i = 0; i < s->nbones; i++) {
        struct mdl_bone *b = &s->bone[i];
        double d = mdl_drop_shear(&b->has_matrix, b->m, b->r);
        if (d == 0)
            continue;
        any = true;
        if (warn)
            mdl_notes_add(warn, "bone %" PRIu32 " '%.*s': its rest scale/shear has a shear (largest off-diagonal %.9g), "
                          "dropped: its glTF scale is the diagonal", i, b->name ? (int)b->name_len : 0,
                          b->name ? b->name : "", d);
    }
    return any ? mdl_compute_ibm(s, err, errlen) : S3_OK; /* the rest pose as written stays the bind pose */
}

void gr2_add_warnings(struct gr2_view *v, uint32_t dir, const char *stem, const char *what, struct mdl_notes *n)
{
    if (n->lines == 0 && n->more == 0 && !n->oom) {
        mdl_notes_free(n);
        return;
    }
    uint64_t total = n->lines + n->more;
    char *text = mdl_notes_take(n), name[64];
    snprintf(name, sizeof name, "%s.warnings", stem);
    if (!text) { /* the listing fails (ENOMEM), never NAME.warnings short or an error */
        tree_note_oom(v->fs->tree);
        return;
    }
    uint32_t shown = 0;
    enum s3_err e = S3_OK;
    for (const char *p = text; e == S3_OK && *p && shown < GR2_INFO_WARNINGS; shown++) {
        const char *nl = strchr(p, '\n');
        int len = (int)(nl ? nl - p : (ptrdiff_t)strlen(p));
        e = diag_add(&v->fs->diag, "%s: %.*s", what, len, p);
        p += len + (nl != NULL);
    }
    if (e == S3_OK && total > shown)
        e = diag_add(&v->fs->diag, "%s: %" PRIu64 " more in %s", what, total - shown, name);
    if (e) { /* the listing fails (ENOMEM), never an /info without them */
        tree_note_oom(v->fs->tree);
        free(text);
        return;
    }
    tree_add_text(v->fs->tree, dir, name, "text.warnings", text, strlen(text));
}
