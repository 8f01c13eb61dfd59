#!/usr/bin/env bash
# Builds s3rigfs, writes a generated sample Sims 3 wrapped RIG (no game files needed),
# mounts it, shows a few paths and values, and unmounts.
set -eu
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
work=$(mktemp -d /tmp/s3rig-demo-XXXXXX)
trap 'fusermount3 -u "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/mnt"
build/tests/s3rig-mkfixture rig "$work/sample.rig"
build/mount.s3rig "$work/sample.rig" "$work/mnt"
m=$work/mnt
show() { echo "\$ $*"; "$@"; echo; }
show ls "$m"
show cat "$m/info"
show ls "$m/granny/header" "$m/granny/sections/0"
show cat "$m/granny/header/version" "$m/granny/header/crc" "$m/granny/header/crc_computed"
echo "\$ xxd $m/granny/sections/0/data.bin | head -4"
xxd "$m/granny/sections/0/data.bin" | head -4
echo
show ls "$m/granny/root" "$m/granny/root/Skeletons/0/Bones/1"
show cat "$m/granny/root/Skeletons/0/Bones/1/Name" "$m/granny/root/Skeletons/0/Bones/1/Transform/position"
show ls "$m/ik_chains/0"
show cat "$m/ik_chains/0/pole" "$m/ik_chains/0/info_nodes"
show readlink "$m/ik_chains/0/pole.bone"
show cat "$m/ik_chains/0/pole.bone/Name" "$m/ik_target_slots.names"
show getfattr -d "$m/ik_chains/0/pole"
show ls -l "$m/unparsed"
fusermount3 -u "$m"
echo "unmounted $m"
