#!/usr/bin/env bash
# Installs what building and testing s3rigfs needs, from Debian's packages.
set -eu
pkgs="gcc clang meson ninja-build pkg-config libfuse3-dev fuse3 libcmocka-dev zlib1g-dev
      libclang-rt-14-dev libjansson-dev libzip-dev nettle-dev attr util-linux xxd python3
      nodejs assimp-utils f3d xvfb xauth"
# npm: Debian's package where the machine has none; some machines' nodejs (NodeSource's
# build) ships npm itself and conflicts with Debian's npm package.
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=$(for p in $pkgs; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"; done)
if [ -n "$missing" ]; then
    as_root apt-get update -qq
    # shellcheck disable=SC2086
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# The Khronos glTF validator (npm gltf-validator, pinned in tests/gltf/package-lock.json)
# checks the generated .glb files; it is not packaged by Debian.
if [ ! -d "$(dirname "$0")/../tests/gltf/node_modules/gltf-validator" ]; then
    (cd "$(dirname "$0")/../tests/gltf" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: all build and test packages are installed"
