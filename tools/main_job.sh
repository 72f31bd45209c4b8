#!/usr/bin/env bash
# Issue 7's main job: generate a transformer encoder, compile it, run it cold
# (every weight packed at load) and warm (every weight a compiled hit), print
# both timings and whether the outputs are byte-identical; then the same for a
# small int4 decoder (genai form), generating tokens with `complete` from the
# source and from the compiled model: the same tokens, the first token sooner.
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

echo "== decoder: a small int4 decoder (onnxruntime-genai layout), 24 tokens from a 16-token prompt =="
"$bin" generate decoder --preset tiny --layers 4 --hidden 512 --intermediate 1408 --heads 8 \
  --kv-heads 2 --vocab 8000 -o "$work/decoder.onnx" --external
"$bin" compile "$work/decoder.onnx" -o "$work/decoder_compiled.onnx"
prompt=$(seq -s, 100 115)
"$bin" complete "$work/decoder.onnx" --prompt "$prompt" --max-new-tokens 24 --json >"$work/dec_cold.json"
"$bin" complete "$work/decoder_compiled.onnx" --prompt "$prompt" --max-new-tokens 24 \
  --verify memo --json >"$work/dec_warm.json"
/usr/bin/python3 - "$work/dec_cold.json" "$work/dec_warm.json" <<'PY'
import json, sys
cold, warm = (json.load(open(p)) for p in sys.argv[1:3])
print("tokens:", ",".join(map(str, warm["new_tokens"][0])))
c, w = cold["stats"], warm["stats"]
print(f"first token: source {c['time_to_first_token_ms']:.1f} ms, compiled {w['time_to_first_token_ms']:.1f} ms; "
      f"decode {w['decode_tokens_per_second']:.0f} tokens/s")
if cold["new_tokens"] != warm["new_tokens"]:
    sys.exit("tokens: DIFFERENT (source and compiled)")
print("tokens: identical (source and compiled)")
PY
