#!/usr/bin/env python3
"""FLOAT16 CNN drift (docs/decisions.md, "FLOAT16 intermediates").

Generated U-Net-like FLOAT16 models (tests/runtime/f16_models.py: Conv+Relu blocks, MaxPool,
Resize nearest/linear, ConvTranspose, Concat, Sigmoid) and a transformer block's MatMul, Add,
Gelu, LayerNormalization (f16_models.block) run with `onnx-prepack run` and with
ONNX Runtime (one node process, tests/runtime/ort_batch.js); float64 numpy evaluations of the
same graph are the references:
  exact: every node's output rounded to float16 (the ONNX semantics, computed exactly);
  f64:   float64 throughout, one rounding at the output (raw: not even that one).
Checked:
  - default (every FLOAT16 output rounded): the mean drift from raw float64 at most
    DEFAULT_DRIFT_RATIO times the exact evaluation's: each operator rounds correctly from
    float arithmetic, so the drift is what ONNX's roundings make, no more; on the shallow
    model, within 1 ulp of the exact evaluation (deeper, one float32-vs-float64 rounding
    flip spreads to the noise level of the roundings themselves);
  - --float16-intermediates float (ONNX Runtime's float chains): within 1 ulp of ONNX Runtime
    (and, for the CNNs, of f64) on at most CHAIN_SHARE of the elements, and drifting less than
    the default (so the test fails if the option changes nothing).

usage: f16_drift_test.py ONNX_PREPACK SOURCE_DIR [--keep DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import f16_models  # noqa: E402

# Default plan: its mean drift from float64 at most this multiple of the exact ONNX
# evaluation's (measured 0.95-1.07 on bench/f16_drift.py's networks, 0.81-1.00 here), and on
# the shallow model (one float32-vs-float64 rounding flip does not spread yet) at most 1 ulp
# from it on at most SHALLOW_SHARE of the elements.
DEFAULT_DRIFT_RATIO = 1.15
SHALLOW_SHARE = 0.02
# Float chains: at most 1 ulp from ONNX Runtime and from float64 rounded once, on at most this
# share of the elements (measured up to 1.6%).
CHAIN_SHARE = 0.03

MODELS = [(4, "resize_linear", "logits"), (10, "mixed", "logits"), (20, "convtranspose", "logits"),
          (20, "resize_nearest", "sigmoid")]


def ulps(a, b):
    d = np.abs(f16_models.ordered(a.astype(np.float16)) - f16_models.ordered(b.astype(np.float16)))
    return int(d.max()), float((d > 0).mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("source_dir")
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="f16_drift.")
    models = [f16_models.unet(b, up=up, width=8, size=16, seed=1, head=h) for b, up, h in MODELS]
    models.append(f16_models.block(seed=2))
    manifest = []
    for m in models:
        d = os.path.join(work, m.name)
        os.makedirs(d, exist_ok=True)
        onnx.save(m.proto, os.path.join(d, "model.onnx"))
        np.save(os.path.join(d, "x.npy"), m.inputs["x"])
        manifest.append({"model": os.path.join(d, "model.onnx"), "out_dir": os.path.join(d, "ort"),
                         "inputs": {"x": os.path.join(d, "x.npy")}})
    with open(os.path.join(work, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    ort = subprocess.Popen(["node", os.path.join(a.source_dir, "tests/runtime/ort_batch.js"),
                            os.path.join(work, "manifest.json")])
    failures = []
    for m in models:
        d = os.path.join(work, m.name)
        for mode in ("float16", "float"):
            p = subprocess.run([a.cli, "run", os.path.join(d, "model.onnx"), "--threads", "1",
                                "--input", "x=" + os.path.join(d, "x.npy"),
                                "--float16-intermediates", mode,
                                "--output-dir", os.path.join(d, "ours_" + mode)],
                               capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                failures.append(f"{m.name} ({mode}): onnx-prepack run failed: {p.stderr.strip()}")
    if ort.wait() != 0:
        print("f16_drift_test: the ONNX Runtime batch failed", file=sys.stderr)
        return 1
    for m in models:
        if failures:
            break
        d = os.path.join(work, m.name)
        each = m.reference(m.inputs, round_each=True)["y"]
        f64 = m.reference(m.inputs, round_each=False)["y"]
        raw = m.reference(m.inputs, round_each=False, round_outputs=False)["y"]
        rounded = np.load(os.path.join(d, "ours_float16", "y.npy")).astype(np.float64)
        chains = np.load(os.path.join(d, "ours_float", "y.npy")).astype(np.float64)
        ort = np.load(os.path.join(d, "ort", "y.npy")).astype(np.float64)
        drift = lambda x: float(np.abs(x - raw).mean())
        ratio = drift(rounded) / drift(each)
        vs_each, vs_f64, vs_ort = ulps(rounded, each), ulps(chains, f64), ulps(chains, ort)
        print(f"{m.name}: mean drift from float64: default {drift(rounded):.2e} (exact ONNX "
              f"{drift(each):.2e}, ratio {ratio:.2f}), float chains {drift(chains):.2e}, ONNX "
              f"Runtime {drift(ort):.2e}; default vs exact {vs_each[0]} ulps on {vs_each[1]:.2%}, "
              f"chains vs float64 {vs_f64[0]} ulps on {vs_f64[1]:.2%}, chains vs ONNX Runtime "
              f"{vs_ort[0]} ulps on {vs_ort[1]:.2%}")
        if ratio > DEFAULT_DRIFT_RATIO:
            failures.append(f"{m.name}: the default plan drifts {ratio:.2f}x the exact ONNX "
                            f"evaluation (bound {DEFAULT_DRIFT_RATIO})")
        if m is models[0] and (vs_each[0] > 1 or vs_each[1] > SHALLOW_SHARE):
            failures.append(f"{m.name}: the default plan is {vs_each[0]} ulps from the exact ONNX "
                            f"evaluation on {vs_each[1]:.2%} (bound 1 ulp, {SHALLOW_SHARE:.0%})")
        # The block's LayerNormalization rounds its input (ONNX Runtime's float16 kernel): that
        # model is float64 rounded once only up to the Gelu, so it is held to ONNX Runtime alone.
        checks = [("ONNX Runtime", vs_ort)] + ([] if m.name.startswith("block") else [("float64", vs_f64)])
        # ONNX Runtime's own FLOAT16 kernels differ per ISA (on AVX-512 its ConvTranspose lands
        # 3 ulps from float64 where ours stays within 1): more than 1 ulp from ONNX Runtime is
        # then no failure when float chains are at least as close to float64 as ONNX Runtime.
        if not m.name.startswith("block") and (vs_ort[0] > 1 or vs_ort[1] > CHAIN_SHARE):
            ort_f64 = ulps(ort, f64)
            print(f"  {m.name}: ONNX Runtime vs float64 {ort_f64[0]} ulps on {ort_f64[1]:.2%}")
            if vs_f64[0] <= ort_f64[0] and vs_f64[1] <= ort_f64[1]:
                checks = checks[1:]
        for what, (mx, share) in checks:
            if mx > 1 or share > CHAIN_SHARE:
                failures.append(f"{m.name}: float chains {mx} ulps from {what} on {share:.2%} "
                                f"(bound 1 ulp, {CHAIN_SHARE:.0%})")
        if drift(chains) >= drift(rounded):
            failures.append(f"{m.name}: float chains drift no less than the rounding plan: "
                            f"the option changed nothing")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("  " + f)
    print(f"f16_drift_test: {len(models)} models, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
