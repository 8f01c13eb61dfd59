#!/usr/bin/env bash
# Our .glb exports as a Blender user sees them: builds the fixtures, extracts their exports
# with s3rig, imports each into headless Blender with its own glTF importer and checks the
# scene against the fixture rules (scripts/blender_check.py says what). Optional: not part
# of scripts/test.sh (Blender is large; CI machines are bare). Without `blender` it says so
# and exits 0; any failed check exits 1. Needs Debian's blender and python3-numpy (which
# Blender's importer imports but the package does not pull in).
#   scripts/blender_check.sh [BUILD_DIR]      (default: build)
# The real Granny files of S3RIG_VECTORS (default ../shared/vectors) are imported too when
# that folder exists.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
s3rig=$build/s3rig mkfixture=$build/tests/s3rig-mkfixture
vectors=${S3RIG_VECTORS:-$here/../shared/vectors}
if ! command -v blender >/dev/null; then
    echo "blender_check: blender is not installed (apt-get install blender python3-numpy): skipped"
    exit 0
fi
if [ ! -x "$s3rig" ] || [ ! -x "$mkfixture" ]; then
    echo "blender_check: no $s3rig or $mkfixture: build first (meson setup build && ninja -C build)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/facts" "$work/x"
fail=0
made() { echo "FAIL: blender_check: $*"; fail=1; }

for k in rig-clear-4 geom-v5 geom-v12 geom-v13 geom-v14 geom-v15 gr2model-le32 gr2model-be64-alt \
         gr2model-le32-rough gr2anim-le32 gr2anim-be64 gr2anim-le32-old gr2anim-le64-noskel gr2anim-demo \
         t2fs-turok1 t2fs-turok1-be; do
    "$mkfixture" "$k" "$work/$k.bin" || { made "mkfixture $k"; continue; }
    case $k in t2fs-*) ;; *) "$mkfixture" --facts "$k" >"$work/facts/$k.json" || made "mkfixture --facts $k" ;; esac
    opt=()
    case $k in geom-*) opt=(-o "rig=$work/rig-clear-4.bin") ;; esac
    "$s3rig" "${opt[@]}" extract "$work/$k.bin" "$work/x/$k" >/dev/null 2>&1 || made "s3rig extract $k"
done
trees=()
mkdir -p "$work/vectors"
for f in "$vectors"/gr2/*.gr2; do
    [ -e "$f" ] || continue
    out="$work/vectors/$(basename "$f")"
    "$s3rig" extract "$f" "$out" >/dev/null 2>&1 && trees+=("$out") || made "s3rig extract $f"
done
[ ${#trees[@]} -gt 0 ] || echo "blender_check: no real Granny files in $vectors/gr2: only the fixtures"

# one Blender for every file; its banner and exit lines left out
blender -b --factory-startup --python-exit-code 1 --python "$here/scripts/blender_check.py" -- "$work" "${trees[@]}" \
    2>&1 | grep -v -e '^Blender [0-9]' -e '^Read prefs' -e '^Blender quit' -e '^$'
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && [ "$fail" -eq 0 ]
