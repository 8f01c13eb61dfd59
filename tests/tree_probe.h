#ifndef S3_TREE_PROBE_H
#define S3_TREE_PROBE_H

#include "expect.h"
#include "fs/open.h"

struct probe tree_probe(struct s3fs *fs);

#endif
