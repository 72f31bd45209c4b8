#!/usr/bin/env bash
# Issue 7's main job: generate a transformer encoder, compile it, run it cold
# (every weight packed at load) and warm (every weight a compiled hit), print
# both timings and whether the outputs are byte-identical.
# usage: tools/main_job.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/onnx-prepack-main-job}
bin=$build/src/cli/onnx-prepack
mkdir -p "$work"
export ONNX_PREPACK_MEMO_DIR=$work/memo
"$bin" generate transformer -o "$work/encoder.onnx" --layers 6 --width 512 --heads 8 --seq 64 \
  --vocab 8000 --external
"$bin" compile "$work/encoder.onnx" -o "$work/encoder_compiled.onnx"
echo "== cold: plain model, no compiled entries =="
"$bin" run "$work/encoder.onnx" --input input_ids=random --output-dir "$work/cold" --repeat 5
"$bin" run "$work/encoder.onnx" --input input_ids=random --repeat 5 --json >"$work/cold.json"
echo "== warm: compiled model, verify memo (compile recorded the digests) =="
"$bin" run "$work/encoder_compiled.onnx" --input input_ids=random --verify memo \
  --output-dir "$work/warm" --repeat 5
"$bin" run "$work/encoder_compiled.onnx" --input input_ids=random --verify memo --repeat 5 \
  --json >"$work/warm.json"
/usr/bin/python3 - "$work/cold.json" "$work/warm.json" <<'PY'
import json, sys
cold, warm = (json.load(open(p))["timings_ms"] for p in sys.argv[1:3])
key = "time_to_first_output"
print(f"time to first output: cold {cold[key]:.1f} ms, warm {warm[key]:.1f} ms "
      f"({cold[key] / warm[key]:.1f}x faster warm); steady run cold {cold['steady_run_median']:.1f} ms, "
      f"warm {warm['steady_run_median']:.1f} ms")
PY
if cmp -s "$work/cold/last_hidden_state.npy" "$work/warm/last_hidden_state.npy"; then
  echo "outputs: identical (cold and warm)"
else
  echo "outputs: DIFFERENT" >&2
  exit 1
fi
