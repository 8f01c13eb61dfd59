#!/usr/bin/env bash
# Renders a model of a mounted file to a PNG with a headless viewer (f3d under xvfb-run,
# both Debian packages; scripts/setup.sh installs them). The file is mounted with
# mount.s3rig, the export read through the mount, and the mount undone.
#   scripts/render.sh [-u AXIS] [-s WxH] [-t SECONDS] [-o MOUNT_OPTS] [-c ARRAY[:COMP]] FILE OUT.png [PATH]
# PATH: the .glb or .obj inside the mount (default: the first of granny/models/0/model.glb,
# models/0/model.glb, mesh.glb, granny/skeletons/0/skeleton.glb, skeleton.glb). AXIS: the up
# axis (+Y, the glTF convention, by default; many Granny files are +Z). Coordinates are
# shown as stored, so the axis is the viewer's choice, not a conversion. SECONDS: the pose
# of the .glb's first animation at that time (f3d shows the rest pose; scripts/glb_pose.py
# samples the channels by the glTF rules into a copy, which is rendered). MOUNT_OPTS go to
# mount.s3rig's -o (e.g. rig=FILE for a GEOM mesh, skeleton=FILE for an animation);
# ARRAY colours the surface by a vertex attribute, COMP its component (e.g. JOINTS_0:0,
# the first bone of each vertex).
set -eu
up=+Y size=640,480 at= mopts="" color=""
while getopts "u:s:t:o:c:" o; do
    case $o in
    u) up=$OPTARG ;;
    s) size=${OPTARG/x/,} ;;
    t) at=$OPTARG ;;
    o) mopts=$OPTARG ;;
    c) color=$OPTARG ;;
    *) exit 1 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -lt 2 ]; then
    echo "usage: scripts/render.sh [-u AXIS] [-s WxH] [-t SECONDS] [-o MOUNT_OPTS] [-c ARRAY[:COMP]] FILE OUT.png [PATH]" >&2
    exit 1
fi
file=$1 out=$2 path=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
mount=${S3RIG_MOUNT:-$here/build/mount.s3rig}
[ -x "$mount" ] || mount=$(command -v mount.s3rig)
case $out in /*) ;; *) out=$PWD/$out ;; esac
mnt=$(mktemp -d)
posed=$(mktemp -d)
trap 'fusermount3 -u "$mnt" 2>/dev/null; rmdir "$mnt"; rm -rf "$posed"' EXIT
"$mount" ${mopts:+-o "$mopts"} "$file" "$mnt"
if [ -z "$path" ]; then
    for p in granny/models/0/model.glb models/0/model.glb mesh.glb granny/skeletons/0/skeleton.glb skeleton.glb; do
        if [ -f "$mnt/$p" ]; then path=$p; break; fi
    done
fi
if [ -z "$path" ] || [ ! -f "$mnt/$path" ]; then
    echo "render.sh: no model to render in $file${path:+ (no $path)}" >&2
    exit 1
fi
view=$mnt/$path
if [ -n "$at" ]; then
    view=$posed/$(basename "$path")
    python3 "$here/scripts/glb_pose.py" "$mnt/$path" "$view" "$at"
fi
# f3d picks the reader by the name's extension; the mount's file keeps its own name
scalars=() # f3d colours by an attribute only when it reads the geometry alone
[ -z "$color" ] || scalars=(--geometry-only --scalars="${color%%:*}" --comp="${color#*:}")
[ -z "$color" ] || [ "${color#*:}" != "$color" ] || scalars=(--geometry-only --scalars="$color")
xvfb-run -a -s "-screen 0 1280x1024x24" \
    f3d --up="$up" --resolution="$size" --camera-azimuth-angle=25 --camera-elevation-angle=15 \
        "${scalars[@]}" --output="$out" "$view"
echo "render.sh: $path${at:+ at $at s} -> $out"
