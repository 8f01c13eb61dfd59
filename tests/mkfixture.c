/* s3rig-mkfixture KIND OUT: writes a generated sample file (for the demo, benchmarks and
 * manual testing). KIND: rig, gr2-le32-old-v6, gr2-le32-v7, gr2-le64-v7, gr2-be32-v7,
 * gr2-be64-v7. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: s3rig-mkfixture KIND OUT\n");
        return 1;
    }
    size_t size = 0;
    uint8_t *data = NULL;
    struct fx_gr2_layout glay;
    struct fx_rig_layout rlay;
    if (strcmp(argv[1], "rig") == 0) {
        data = fx_sample_rig(&size, &rlay, &glay);
    } else if (strncmp(argv[1], "gr2-", 4) == 0) {
        char sig[32];
        int version;
        const char *v = strrchr(argv[1], '-');
        if (!v || sscanf(v, "-v%d", &version) != 1 || (size_t)(v - argv[1] - 4) >= sizeof sig) {
            fprintf(stderr, "s3rig-mkfixture: bad kind %s\n", argv[1]);
            return 1;
        }
        snprintf(sig, sizeof sig, "%.*s", (int)(v - argv[1] - 4), argv[1] + 4);
        data = fx_sample_gr2(sig, version, &size, &glay);
    } else {
        fprintf(stderr, "s3rig-mkfixture: unknown kind %s\n", argv[1]);
        return 1;
    }
    int rc = fx_write_file(argv[2], data, size);
    free(data);
    if (rc) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
