#!/usr/bin/env bash
# The generated .glb files against real consumers: every one made from the test fixtures
# (GEOM meshes bound with -o rig= and unbound too) and from the vectors folder's gr2/ passes the
# Khronos glTF validator with no errors
# (validate.js), and loads in assimp with the mesh, vertex, face, bone and node counts
# the source says. Needs node with tests/gltf/node_modules (scripts/setup.sh) and
# assimp-utils; without them it fails, unless S3RIG_NO_GLTF_TOOLS=1 (then it skips).
# Also mounts the model fixture with mount.s3rig (unless S3RIG_NO_MOUNT_TESTS=1) and reads
# the exports through FUSE: the same bytes, sizes known to stat, the /granny/models link.
# The vectors folder is S3RIG_VECTORS, else DEFAULT_VECTORS; without it, the checks of the
# real files report themselves skipped and the fixtures' checks run alone.
# usage: check_exports.sh S3RIG MKFIXTURE DEFAULT_VECTORS MOUNT_S3RIG
set -u
s3rig=$1 mkfixture=$2 vectors=${S3RIG_VECTORS:-$3} mount_s3rig=$4
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null || ! command -v assimp >/dev/null || [ ! -d "$here/node_modules/gltf-validator" ]; then
    echo "node, assimp or tests/gltf/node_modules missing: run scripts/setup.sh"
    [ "${S3RIG_NO_GLTF_TOOLS:-}" = 1 ] && exit 77
    exit 1
fi
tmp=$(mktemp -d)
trap 'fusermount3 -u "$tmp/mnt" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
# one line per check in cmocka's form, so scripts/test.sh counts them
ok() { pass=$((pass + 1)); echo "[       OK ] gltf: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# one number from `assimp info` (FIELD: Meshes, Vertices, Faces, Bones, Nodes); one run
# of assimp per file, kept (RAW: no post-processing, which refuses scenes without meshes)
declare -A info
stat_of() { # FILE FIELD [RAW]
    local key="$1${3:+ raw}"
    [ -n "${info[$key]+set}" ] || info[$key]=$(assimp info "$1" ${3:+-r} 2>/dev/null)
    sed -n "s/^$2: *\([0-9]*\).*/\1/p" <<<"${info[$key]}"
}
expect_stat() { # FILE FIELD WANT [RAW]
    local got
    got=$(stat_of "$1" "$2" "${4:-}")
    if [ "$got" = "$3" ]; then ok "assimp $2 $3 ${1#"$tmp"/x/}"; else bad "$1: assimp $2 $got, expected $3"; fi
}
# elements of an array in an extracted tree: directories 0..N-1, or NAME.csv rows
count_of() {
    if [ -d "$1" ]; then find "$1" -mindepth 1 -maxdepth 1 | wc -l; else echo $(($(wc -l <"$1.csv") - 1)); fi
}

inputs=()
for k in gr2model-le32 gr2model-be64-alt gr2model-le32-rough gr2model-le32-shear rig-clear-4 rig-clear-3-ts3 \
         rig-clear-3-ts4 gr2obj-le32-v7 gr2obj-be64-v6 t2fs-turok1 t2fs-turok1-be gr2anim-le32 gr2anim-be64-crc-bk2 \
         gr2anim-le32-old gr2anim-le64-noskel gr2anim-demo gr2anim-be32-shear gr2anim-le32-loose gr2anim-le64-wild; do
    "$mkfixture" "$k" "$tmp/$k.bin" && inputs+=("$tmp/$k.bin") || bad "mkfixture $k"
done
vector_files=()
if [ -d "$vectors" ]; then
    for f in "$vectors"/gr2/*.gr2; do
        [ -e "$f" ] && vector_files+=("$f")
    done
    [ ${#vector_files[@]} -gt 0 ] || bad "no .gr2 files in $vectors/gr2"
else
    echo "the vectors folder $vectors is absent (S3RIG_VECTORS): skipping the checks of the real files"
    skip=1
fi
glbs=()
mkdir -p "$tmp/x"
extract_all() { # FILE...: each extracted to $tmp/x/NAME, its .glb files added to glbs
    local f out
    for f in "$@"; do
        out="$tmp/x/$(basename "$f")"
        if ! "$s3rig" extract "$f" "$out" >/dev/null 2>&1; then bad "extract $f"; continue; fi
        while IFS= read -r g; do glbs+=("$g"); done < <(find "$out" -name '*.glb' | sort)
    done
}
# the fixtures make at least 35: 3 x (model, skeleton) for the Granny models (4 with the
# sheared rest), 3 clear-RIG skeletons, 2 x 2 Turok 1 models; the animation fixtures 4
# animation.glb and 4 animation_linear.glb each (le32, be64-crc-bk2, le64-noskel, be32-shear,
# le32-loose, le64-wild) with a model and a skeleton but in noskel, and the old layout and
# the demo 1 of each with a model and a skeleton; plus 15 from the GEOM fixtures below
# (6 meshes bound and unbound, the package's 2 meshes and its clear rig's skeleton). Each
# real Granny file at least a model and a skeleton
extract_all "${inputs[@]}"
# GEOM meshes: each version bound to the clear RIG fixture (-o rig=), and unbound; the
# package whose GEOM resource binds to its own rig
"$mkfixture" package-geom "$tmp/package-geom.bin" && inputs+=("$tmp/package-geom.bin") || bad "mkfixture package-geom"
"$s3rig" extract "$tmp/package-geom.bin" "$tmp/x/package-geom.bin" / >/dev/null 2>&1 || bad "extract package-geom"
while IFS= read -r g; do glbs+=("$g"); done < <(find "$tmp/x/package-geom.bin" -name '*.glb' | sort)
for v in 5 12 13 14 15 traps; do
    k=geom-v$v
    [ $v = traps ] && k=geom-traps
    "$mkfixture" "$k" "$tmp/geom-v$v.bin" || { bad "mkfixture $k"; continue; }
    for bind in bound unbound; do
        out="$tmp/x/geom-v$v-$bind"
        opt=()
        [ $bind = bound ] && opt=(-o "rig=$tmp/rig-clear-4.bin")
        if "$s3rig" "${opt[@]}" extract "$tmp/geom-v$v.bin" "$out" >/dev/null 2>&1 && [ -f "$out/mesh.glb" ]; then
            glbs+=("$out/mesh.glb")
        else
            bad "extract geom-v$v ($bind)"
        fi
    done
done
nfix=${#glbs[@]}
[ "$nfix" -ge 50 ] && ok "$nfix .glb files made from the fixtures" || bad "only $nfix .glb files made from the fixtures"
if [ ${#vector_files[@]} -gt 0 ]; then
    extract_all "${vector_files[@]}"
    nvec=$((${#glbs[@]} - nfix))
    [ "$nvec" -ge $((2 * ${#vector_files[@]})) ] && ok "$nvec .glb files made from the real files" ||
        bad "only $nvec .glb files made from ${#vector_files[@]} real files"
fi

# the validator: no errors in any file
if node "$here/validate.js" "${glbs[@]}" >"$tmp/validate.log"; then ok "validator: no errors in ${#glbs[@]} files"; else bad "glTF validator:"; cat "$tmp/validate.log"; fi

# assimp: the fixture model (3 primitives: groups 0 and 1 of body, prop; broken left out)
for k in gr2model-le32 gr2model-be64-alt; do
    m="$tmp/x/$k.bin/granny/root/Models/0/model.glb"
    expect_stat "$m" Meshes 3
    expect_stat "$m" Vertices 11 # 5 and 3 distinct vertices used by the body's groups, 3 of prop
    expect_stat "$m" Faces 5
    expect_stat "$m" Bones 12   # 4 joints per mesh
    expect_stat "$tmp/x/$k.bin/granny/root/Skeletons/0/skeleton.glb" Nodes 5 raw # 4 bones + the common root
done
for k in rig-clear-4 rig-clear-3-ts3 rig-clear-3-ts4; do
    expect_stat "$tmp/x/$k.bin/skeleton.glb" Nodes 6 raw
done
# the animation fixture (fixture_gr2anim.c): walk plays track groups hero (9 tracks on the
# skeleton's bones) and prop (1 track, on a node of its own: no bone is called lid); short
# plays hero and shortgroup (the root bone again: a second animation on the same node)
for k in gr2anim-le32 gr2anim-be64-crc-bk2; do
    a="$tmp/x/$k.bin/granny/root"
    [ "$k" = gr2anim-le32 ] || a="$a/_member11"
    [ "$k" = gr2anim-le32 ] && a="$a/Animations"
    expect_stat "$a/0/animation.glb" Animations 2 raw
    expect_stat "$a/0/animation.glb" "Animation Channels" 10 raw
    expect_stat "$a/0/animation.glb" Nodes 13 raw # 10 bones, prop and lid, and assimp's root
    expect_stat "$a/1/animation.glb" Animations 2 raw
    expect_stat "$a/0/animation_linear.glb" Animations 2 raw
    expect_stat "$a/0/animation_linear.glb" "Animation Channels" 10 raw
    expect_stat "$a/0/animation_linear.glb" Nodes 13 raw
done
# sheared tracks exported (their diagonal), the loose names on the skeleton's bones (ghost
# on a node of its own under one named hero), the wild curve's file made all the same
for k in gr2anim-be32-shear gr2anim-le32-loose gr2anim-le64-wild; do
    a="$tmp/x/$k.bin/granny/root/Animations"
    for f in animation.glb animation_linear.glb; do
        expect_stat "$a/0/$f" Animations 2 raw
        expect_stat "$a/1/$f" Animations 2 raw
    done
done
expect_stat "$tmp/x/gr2anim-le32-loose.bin/granny/root/Animations/0/animation_linear.glb" "Animation Channels" 11 raw
expect_stat "$tmp/x/gr2anim-le32-loose.bin/granny/root/Animations/0/animation_linear.glb" Nodes 15 raw # 10 bones, prop, lid, hero holding ghost, ghost, assimp's root
expect_stat "$tmp/x/gr2model-le32-shear.bin/granny/root/Skeletons/0/skeleton.glb" Nodes 5 raw
# the demo: a tube skinned to a 6-bone chain, its animation in model.glb too
d="$tmp/x/gr2anim-demo.bin/granny/root"
expect_stat "$d/Animations/0/animation.glb" "Animation Channels" 6 raw
expect_stat "$d/Models/0/model.glb" Animations 1 raw
expect_stat "$d/Models/0/model.glb" Bones 6
# the Turok 1 fixture (fxt_t1_sample). Object 0: node 0's part 0 (cases 0 and 2) and node
# 1's part 0 (case 1) are drawn, node 1's part 1 (4 broken streams) is left out; object 1:
# case 2. Counts from the cases' hand-written triangles: 8, 4 and 6 triangles using 21, 9
# and 13 distinct vertices (post-processed assimp keeps the vertices faces use). Raw, a
# glTF primitive is an assimp mesh (3) and an OBJ object one (2); assimp's OBJ reader
# makes a vertex per face corner (54 = 3 x 18).
for k in t2fs-turok1 t2fs-turok1-be; do
    m="$tmp/x/$k.bin/models"
    expect_stat "$m/0/model.glb" Meshes 3 raw
    expect_stat "$m/0/model.glb" Vertices 43
    expect_stat "$m/0/model.glb" Faces 18
    expect_stat "$m/0/model.glb" Nodes 5 raw # object 0, nodes 0 and 1, a node per drawn part
    expect_stat "$m/1/model.glb" Meshes 1 raw
    expect_stat "$m/1/model.glb" Vertices 9
    expect_stat "$m/1/model.glb" Faces 4
    expect_stat "$m/0/model.obj" Meshes 2 raw
    expect_stat "$m/0/model.obj" Vertices 54 raw
    expect_stat "$m/0/model.obj" Faces 18 raw
    expect_stat "$m/1/model.obj" Faces 4 raw
done
# GEOM: 6 vertices, 4 triangles; bound, a joint per bone of the clear RIG fixture (6). The
# traps (a zero normal, a missing hash, weights off 1, a triangle past the vertices) still
# give a valid file (above), with 3 triangles
expect_stat "$tmp/x/geom-vtraps-bound/mesh.glb" Faces 3
expect_stat "$tmp/x/geom-vtraps-bound/mesh.glb" Bones 6
for v in 5 12 13 14 15; do
    for bind in bound unbound; do
        m="$tmp/x/geom-v$v-$bind/mesh.glb"
        expect_stat "$m" Meshes 1
        expect_stat "$m" Vertices 6
        expect_stat "$m" Faces 4
        expect_stat "$m" Bones "$([ $bind = bound ] && echo 6 || echo 0)"
    done
    o="$tmp/x/geom-v$v-bound/mesh.obj"
    expect_stat "$o" Faces 4 raw
    expect_stat "$o" Vertices 12 raw # one per face corner
done
m=$(find "$tmp/x/package-geom.bin" -path '*yfBody*/geom/mesh.glb' | head -1)
[ -n "$m" ] && expect_stat "$m" Bones 6 || bad "package-geom: no yfBody geom/mesh.glb"
# the vectors: counts from the tree itself
for f in "${vector_files[@]}"; do
    r="$tmp/x/$(basename "$f")/granny/root"
    verts=$(count_of "$r/VertexDatas/0/Vertices")
    faces=$(($(count_of "$r/TriTopologies/0/Indices") / 3))
    bones=$(count_of "$r/Skeletons/0/Bones")
    expect_stat "$r/Models/0/model.glb" Meshes 1
    expect_stat "$r/Models/0/model.glb" Vertices "$verts"
    expect_stat "$r/Models/0/model.glb" Faces "$faces"
    expect_stat "$r/Models/0/model.glb" Bones "$bones"
    expect_stat "$r/Skeletons/0/skeleton.glb" Nodes "$bones" raw
done
# through a real mount: same bytes as in-process, stat's size before the first read
if [ "${S3RIG_NO_MOUNT_TESTS:-}" != 1 ]; then
    mnt="$tmp/mnt"
    mkdir -p "$mnt"
    if "$mount_s3rig" "$tmp/gr2model-le32.bin" "$mnt"; then
        x="$tmp/x/gr2model-le32.bin/granny/root"
        [ "$(readlink "$mnt/granny/models")" = root/Models ] && ok "mount: granny/models link" || bad "mount: granny/models link"
        for f in Models/0/model.glb Skeletons/0/skeleton.glb Meshes/0/mesh.obj Models/0/meshes.error Meshes/2/mesh.error; do
            size=$(stat -c %s "$mnt/granny/root/$f")
            if [ "$size" = "$(stat -c %s "$x/$f")" ] && cmp -s "$mnt/granny/root/$f" "$x/$f"; then ok "mount: $f"; else bad "mount: $f differs"; fi
        done
        cmp -s "$mnt/granny/models/0/model.glb" "$x/Models/0/model.glb" && ok "mount: models/0/model.glb" || bad "mount: models/0/model.glb"
        [ ! -e "$mnt/granny/root/Meshes/2/mesh.obj" ] && ok "mount: no mesh.obj for the broken mesh" || bad "mount: a broken mesh has mesh.obj"
        fusermount3 -u "$mnt" || bad "unmount"
    else
        bad "mount.s3rig $tmp/gr2model-le32.bin"
    fi
    if "$mount_s3rig" "$tmp/t2fs-turok1-be.bin" "$mnt"; then
        x="$tmp/x/t2fs-turok1-be.bin/models"
        for f in 0/model.glb 0/model.obj 0/sections.error 1/model.glb 1/model.obj; do
            size=$(stat -c %s "$mnt/models/$f")
            if [ "$size" = "$(stat -c %s "$x/$f")" ] && cmp -s "$mnt/models/$f" "$x/$f"; then ok "mount: models/$f"; else bad "mount: models/$f differs"; fi
        done
        fusermount3 -u "$mnt" || bad "unmount"
    else
        bad "mount.s3rig $tmp/t2fs-turok1-be.bin"
    fi
fi

echo "gltf: ${#glbs[@]} .glb files; $pass passed, $fail failed"
# cmocka's summary lines, which scripts/test.sh counts
echo "[==========] Running $((pass + fail + skip)) test(s)."
echo "[  PASSED  ] $pass test(s)."
[ "$skip" -eq 0 ] || echo "[  SKIPPED ] $skip test(s)."
[ "$fail" -eq 0 ]
