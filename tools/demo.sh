#!/usr/bin/env bash
# The main job (README command 1): set up, build, then generate a transformer
# encoder, compile its weights into packed entries, run it cold (every weight
# packed at load) and warm (every weight a mapped compiled entry), and show
# both timings and that the outputs are byte-identical; then a small decoder
# generating tokens from the source and the compiled model (tools/main_job.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target onnx-prepack
exec bash tools/main_job.sh build "${1:-/tmp/onnx-prepack-main-job}"
