#!/usr/bin/env bash
# Build DeepMimic's C++ core (DeepMimicCore + its SWIG Python module) as a test oracle.
#
#   tests/reference_core/build_core.sh <DeepMimic checkout> [python]
#
# Copies <checkout>/DeepMimicCore into .cache/deepmimic_core/<hash>/DeepMimicCore, where <hash> is
# the SHA-256 of the checkout's DeepMimicCore sources, tests/reference_core/core_hooks.patch and
# this script; applies the patch (test hooks: environment variables that pin the core's random
# draws, see the patch's header) and runs `make -j2 python CC=g++` with Debian's library folders.
# A finished build (its .built stamp) is reused: same sources, no rebuild. Prints the build folder
# (holding _DeepMimicCore.so and DeepMimicCore.py) as the last line of stdout.
# Needs: apt-get install libbullet-dev libeigen3-dev swig libglew-dev freeglut3-dev python3.11-dev g++ make
# The core reads its data relative to the checkout root: run it with that as working directory.
set -euo pipefail

CHECKOUT=${1:?usage: build_core.sh <DeepMimic checkout> [python]}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF=$HERE/$(basename "${BASH_SOURCE[0]}")
PROJECT=$(cd "$HERE/../.." && pwd)
PY=${2:-$PROJECT/.venv/bin/python}
PATCH_FILE=$HERE/core_hooks.patch
SRC=$CHECKOUT/DeepMimicCore

if [ ! -f "$SRC/Makefile" ] || [ ! -f "$SRC/DeepMimicCore.i" ]; then
    echo "build_core.sh: $SRC is not DeepMimic's DeepMimicCore folder (no Makefile / DeepMimicCore.i)" >&2
    exit 2
fi
missing=()
for tool in g++ make swig patch sha256sum; do command -v "$tool" >/dev/null || missing+=("$tool"); done
for header in /usr/include/bullet/btBulletDynamicsCommon.h /usr/include/eigen3/Eigen/Dense \
              /usr/include/GL/glew.h /usr/include/GL/freeglut.h; do
    [ -f "$header" ] || missing+=("$header")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "build_core.sh: missing ${missing[*]}" >&2
    echo "  apt-get install libbullet-dev libeigen3-dev swig libglew-dev freeglut3-dev python3.11-dev g++ make patch" >&2
    exit 2
fi

# Hash of the sources (path and content of every source file, build products left out), the patch,
# this script and the Python the module is built for.
PY_INC=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
PY_LIB=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')
HASH=$(
    set -euo pipefail
    cd "$SRC"
    find . -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.c' -o -name '*.i' \
                     -o -name 'Makefile' \) ! -name '*_wrap.*' ! -path './objs/*' -print0 \
        | LC_ALL=C sort -z | xargs -0 sha256sum
    sha256sum < "$PATCH_FILE"
    sha256sum < "$SELF"
    echo "$PY_INC"
)
HASH=$(printf '%s' "$HASH" | sha256sum | cut -c1-16)
CACHE=$PROJECT/.cache/deepmimic_core
OUT=$CACHE/$HASH
BUILD=$OUT/DeepMimicCore

if [ -f "$OUT/.built" ] && [ -f "$BUILD/_DeepMimicCore.so" ] && [ -f "$BUILD/DeepMimicCore.py" ]; then
    echo "build_core.sh: cached build $BUILD" >&2
    echo "$BUILD"
    exit 0
fi

echo "build_core.sh: building DeepMimicCore into $BUILD (about 3 minutes on 2 cores)" >&2
rm -rf "$OUT"
mkdir -p "$OUT"
cp -r "$SRC" "$BUILD"
rm -rf "$BUILD/objs" "$BUILD"/*.o "$BUILD/_DeepMimicCore.so" "$BUILD/DeepMimicCore_wrap.cxx" "$BUILD/DeepMimicCore.py"
patch -p1 --quiet -d "$BUILD" < "$PATCH_FILE"

LIBDIR=/usr/lib/x86_64-linux-gnu
# CFLAGS: the Makefile's, plus EIGEN_MAX_STATIC_ALIGN_BYTES=0. Without it g++ 12 -O3 crashes in
# cSceneHeadingAMP / cSceneTargetAMP's constructors: their virtual base cSceneImitate lands at an
# 8-byte aligned offset while the code assumes Eigen's 16-byte alignment (movaps). Unaligned Eigen
# fixed-size types change no result beyond rounding order; Bullet (a separate library) is untouched.
(
    cd "$BUILD"
    make -j2 python CC=g++ CFLAGS="-std=c++11 -O3 -Wall -fPIC -DEIGEN_MAX_STATIC_ALIGN_BYTES=0" \
        EIGEN_DIR=/usr/include/eigen3 BULLET_INC_DIR=/usr/include/bullet \
        GLEW_INC_DIR=/usr/include FREEGLUT_INC_DIR=/usr/include \
        BULLET_LIB_DIR=$LIBDIR GLEW_LIB_DIR=$LIBDIR FREEGLUT_LIB_DIR=$LIBDIR \
        PYTHON_INC="$PY_INC" PYTHON_LIB="$PY_LIB"
) > "$OUT/build.log" 2>&1 || {
    echo "build_core.sh: make failed; the last lines of $OUT/build.log:" >&2
    tail -n 30 "$OUT/build.log" >&2
    exit 1
}
if [ ! -f "$BUILD/_DeepMimicCore.so" ] || [ ! -f "$BUILD/DeepMimicCore.py" ]; then
    echo "build_core.sh: make finished without _DeepMimicCore.so / DeepMimicCore.py (see $OUT/build.log)" >&2
    exit 1
fi
# Object files are not needed to import the module.
rm -rf "$BUILD/objs" "$BUILD"/*.o
touch "$OUT/.built"
echo "$BUILD"
