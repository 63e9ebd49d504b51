#!/usr/bin/env bash
# Mesa's OpenGL/EGL libraries for the viewer (headless rendering uses EGL + llvmpipe).
# Installs them with apt-get when missing and we are root; otherwise says what to install.
set -euo pipefail
PACKAGES="libegl1 libegl-mesa0 libgl1-mesa-dri libopengl0 libgl1 libglx-mesa0"
missing=()
for lib in libEGL.so.1 libOpenGL.so.0 libGL.so.1; do
  ldconfig -p | grep -q "$lib" || missing+=("$lib")
done
ls /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1 || missing+=("swrast_dri.so")
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing OpenGL libraries (${missing[*]} missing): $PACKAGES"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
else
  echo "warning: OpenGL libraries missing (${missing[*]}); the viewer needs: sudo apt-get install $PACKAGES" >&2
fi
