#!/usr/bin/env bash
# Install everything Perspecta needs on a fresh Debian machine: the system libraries
# (Mesa's headless EGL for the default renderer, Sweet Home 3D's furniture catalogue,
# Blender's CC0 HDRI skies from blender-data)
# and a virtual environment .venv with the package and its test tools.
# Idempotent: a second run checks and returns quickly.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(libegl1 libegl-mesa0 libgl1-mesa-dri sweethome3d-furniture blender-data chromium)
PYTHON=${PYTHON:-python3}
EXTRAS=${PERSPECTA_EXTRAS:-test,hf,ray,interop,train}

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.perspecta-installed
want="$(sha256sum pyproject.toml | cut -c1-16)-$EXTRAS"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing perspecta[$EXTRAS] into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[$EXTRAS]"
  echo "$want" > "$stamp"
fi
echo "setup: ready ($(.venv/bin/perspecta --help >/dev/null && echo 'perspecta CLI ok'))"
