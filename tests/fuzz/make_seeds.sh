#!/usr/bin/env bash
# Regenerates the seed corpora of the load-path fuzz targets from real output:
#   tests/fuzz/make_seeds.sh BUILD_DIR FUZZ_BUILD_DIR
# resolve:     the fixed model (written by fuzz_resolve) compiled for each target by the CLI
# cache_entry: the entries a `run --cache` writes for it
# run:         small ONNX backend node-test models (python3-onnx test data) and the fixed model
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cli="$(cd "$1" && pwd)/src/cli/onnx-prepack"
fuzz="$(cd "$2" && pwd)/tests/fuzz"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus="$root/tests/fuzz/corpus"
mkdir -p "$corpus/resolve" "$corpus/cache_entry" "$corpus/run"

ONNX_PREPACK_FUZZ_FIXED="$work/fixed.onnx" "$fuzz/fuzz_resolve" >/dev/null 2>&1 || true
for target in host x86_64-avx2-fma x86_64-avx512f; do
  "$cli" compile "$work/fixed.onnx" -o "$work/c-$target.onnx" --target "$target" --no-memo >/dev/null
  ONNX_PREPACK_FUZZ_SEED="$work/c-$target.onnx:$corpus/resolve/compiled-$target" \
    "$fuzz/fuzz_resolve" >/dev/null 2>&1 || true
done

"$cli" run "$work/fixed.onnx" --cache "$work/store" --input x=random >/dev/null
i=0
for e in "$work"/store/entries/*; do
  /usr/bin/python3 - "$e/entry.onnx" "$e/entry.data" "$corpus/cache_entry/entry-$i" <<'PY'
import struct, sys
m = open(sys.argv[1], "rb").read()
d = open(sys.argv[2], "rb").read()
open(sys.argv[3], "wb").write(struct.pack("<I", len(m)) + m + d)
PY
  i=$((i + 1))
done

cp "$work/fixed.onnx" "$corpus/run/mlp"
n=0
for dir in /usr/share/libonnx-testdata/data/node/*/; do
  f="$dir/model.onnx"
  [ -f "$f" ] || continue
  [ "$(stat -c %s "$f")" -lt 2048 ] || continue
  n=$((n + 1))
  [ $((n % 8)) -eq 0 ] || continue  # every 8th small node test: about 60 operators
  cp "$f" "$corpus/run/$(basename "$dir")"
done
ls "$corpus"/resolve "$corpus"/cache_entry | wc -l
ls "$corpus"/run | wc -l
