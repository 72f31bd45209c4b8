#!/usr/bin/python3
"""The int8 GEMM's pack consumers (issue 19) through the CLI, for
tests/runtime/int8_consumers_test.cc: one-node models of com.microsoft
MatMulIntegerToFloat and DynamicQuantizeMatMul and ONNX QLinearMatMul, B a
2-D initializer (int8 and uint8, zero points or not, per-column b_scale /
b_zero_point, bias or not, 2-D and 3-D A, odd sizes). Checks

  ort:      the run against onnxruntime-node (every case in one process,
            tests/runtime/ort_batch.js) within
            1e-5 relative (float outputs; reports how many are bitwise); the
            quantized QLinearMatMul output exactly; type combinations
            onnxruntime has no CPU kernel for (int8 A with uint8 B, a
            QLinearMatMul y of another type than a) are listed and skipped
  loops:    QLinearMatMul with B constant (packed kernel) bitwise the same model
            with B a graph input (the loops)
  compile:  `compile` writes one entry per B, `run --json` hits it, the output
            is bitwise the uncompiled run's, also with the kernels capped at
            ref and avx2 (ONNX_PREPACK_MAX_ISA)

usage: int8_consumers_check.py CLI WORK_DIR [--no-ort]
Prints one line per case and a summary; exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_BATCH = os.path.join(HERE, "..", "ort_batch.js")
NP2T = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
        np.dtype(np.float32): TensorProto.FLOAT}


def rand8(rng, t, shape):
    info = np.iinfo(t)
    return rng.integers(info.min, info.max + 1, size=shape).astype(t)


def rand_b(rng, t, shape):
    """B: int8 from [-64, 63]. On hosts without VNNI onnxruntime's uint8 x int8 kernels add
    pairs of products in saturating int16 (vpmaddubsw), inexact at full range; within this
    range no pair saturates, so its result is exact on every host (docs/decisions.md). The
    kernels meet the full range in tests/kernels/i8_gemm_test.cc."""
    if t == np.int8:
        return rng.integers(-64, 64, size=shape).astype(t)
    return rand8(rng, t, shape)


def zp8(rng, t, shape):
    lo, hi = (-10, 10) if t == np.int8 else (118, 138)
    return rng.integers(lo, hi, size=shape).astype(t)


def make_model(op, domain, inputs, consts, out_type, const_b=True):
    """inputs: [(name, array)] graph inputs (in order, "" = absent); consts: name -> array."""
    names, ginputs, inits, feeds = [], [], [], {}
    for name, arr in inputs:
        names.append(name)
        if not name:
            continue
        if name in consts and (const_b or name != "B"):
            inits.append(numpy_helper.from_array(arr, name))
        else:
            ginputs.append(helper.make_tensor_value_info(name, NP2T[arr.dtype], list(arr.shape)))
            feeds[name] = arr
    while names and not names[-1]:
        names.pop()
    node = helper.make_node(op, names, ["y"], name="n0", domain=domain)
    g = helper.make_graph([node], "g", ginputs,
                          [helper.make_tensor_value_info("y", out_type, None)], inits)
    opsets = [helper.make_opsetid("", 17)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 8
    return m, feeds


def cases(rng):
    out = []
    i = 0
    for at in (np.uint8, np.int8):
        for bt in (np.int8, np.uint8):
            for a_shape, k, n in (((5, 37), 37, 19), ((2, 3, 70), 70, 33), ((1, 4), 4, 1)):
                for variant in range(3):  # 0: no zero points, per-tensor; 1: zp; 2: per column
                    i += 1
                    a = rand8(rng, at, a_shape)
                    b = rand_b(rng, bt, (k, n))
                    a_s = np.array(0.01 + 0.02 * rng.random(), np.float32)
                    per_col = variant == 2
                    b_s = (0.005 + 0.01 * rng.random(size=(n,) if per_col else ())).astype(np.float32)
                    bias = (rng.standard_normal(n).astype(np.float32) if variant != 1 else None)
                    ins = [("A", a), ("B", b), ("a_scale", a_s), ("b_scale", b_s)]
                    ins.append(("a_zp", zp8(rng, at, ())) if variant else ("", None))
                    ins.append(("b_zp", zp8(rng, bt, (n,) if per_col else ())) if variant
                               else ("", None))
                    ins.append(("bias", bias) if bias is not None else ("", None))
                    consts = {nm: v for nm, v in ins if nm and nm != "A"}
                    out.append((f"mmitf{i}", "MatMulIntegerToFloat", "com.microsoft", ins, consts,
                                TensorProto.FLOAT))
    i = 0
    for bt in (np.int8, np.uint8):
        # (3, 100, 210): A over several quantize chunks (the split range, threads)
        for a_shape, k, n in (((5, 37), 37, 19), ((2, 3, 70), 70, 33), ((4,), 4, 3),
                              ((3, 100, 210), 210, 40)):
            for variant in range(3):
                i += 1
                a = rng.standard_normal(a_shape).astype(np.float32) * 2
                if variant == 1:
                    a = np.abs(a)  # a range with lo = 0
                b = rand_b(rng, bt, (k, n))
                per_col = variant == 2
                b_s = (0.005 + 0.01 * rng.random(size=(n,) if per_col else ())).astype(np.float32)
                ins = [("A", a), ("B", b), ("b_scale", b_s)]
                ins.append(("b_zp", zp8(rng, bt, (n,) if per_col else ())) if variant != 1
                           else ("", None))
                ins.append(("bias", rng.standard_normal(n).astype(np.float32)) if variant != 0
                           else ("", None))
                consts = {nm: v for nm, v in ins if nm and nm != "A"}
                out.append((f"dqmm{i}", "DynamicQuantizeMatMul", "com.microsoft", ins, consts,
                            TensorProto.FLOAT))
    i = 0
    for at in (np.uint8, np.int8):
        for bt in (np.int8, np.uint8):
            for a_shape, k, n in (((5, 37), 37, 19), ((2, 3, 70), 70, 33), ((6,), 6, 17)):
                for per_col in (False, True):
                    i += 1
                    # y of A's type where onnxruntime has a kernel; the other type on some cases
                    yt = at if i % 3 else (np.int8 if at == np.uint8 else np.uint8)
                    m = a_shape[-2] if len(a_shape) >= 2 else 1
                    a = rand8(rng, at, a_shape)
                    b = rand_b(rng, bt, (k, n))
                    shp_a = (m,) if per_col and len(a_shape) == 2 else ()
                    shp_b = (n,) if per_col else ()
                    ins = [("A", a),
                           ("a_scale", (0.01 + 0.02 * rng.random(size=shp_a)).astype(np.float32)),
                           ("a_zp", zp8(rng, at, shp_a)), ("B", b),
                           ("b_scale", (0.005 + 0.01 * rng.random(size=shp_b)).astype(np.float32)),
                           ("b_zp", zp8(rng, bt, shp_b)),
                           ("y_scale", np.array(0.05 + 0.1 * rng.random(), np.float32)),
                           ("y_zp", zp8(rng, yt, ()))]
                    consts = {nm: v for nm, v in ins if nm != "A"}
                    # Per-row a_scale / a_zero_point: onnxruntime takes them per tensor only.
                    tag = "r" if shp_a else ""
                    out.append((f"qlmm{i}{tag}", "QLinearMatMul", "", ins, consts,
                                NP2T[np.dtype(yt)]))
    return out


def sh(cmd):
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def run_cli(cli, model, feeds, d, tag, extra=""):
    ins = " ".join(f"--input {k}={d}/{k}.npy" for k in feeds)
    od = f"{d}/{tag}"
    rc, log = sh(f"timeout 120 {cli} run {model} {ins} --cache off --json --output-dir {od} {extra}")
    if rc != 0:
        return None, None, log
    doc = json.loads(log[log.index("{"):])
    return np.load(f"{od}/y.npy"), doc, log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("work")
    ap.add_argument("--no-ort", action="store_true")
    o = ap.parse_args()
    rng = np.random.default_rng(19)
    fails, no_kernel, bitwise, floats, max_rel = [], [], 0, 0, 0.0
    built = []
    for name, op, domain, ins, consts, yt in cases(rng):
        d = os.path.join(o.work, name)
        os.makedirs(d, exist_ok=True)
        model, feeds = make_model(op, domain, ins, consts, yt)
        path = f"{d}/model.onnx"
        onnx.save(model, path)
        for k, v in feeds.items():
            np.save(f"{d}/{k}.npy", v)
        built.append((name, op, domain, ins, consts, yt, d, path, feeds))
    # onnxruntime runs every case in one process: one Node start instead of one per case.
    compare = [] if o.no_ort else [b for b in built if not b[0].endswith("r")]
    if compare:
        manifest = os.path.join(o.work, "ort_manifest.json")
        with open(manifest, "w") as f:
            json.dump([{"model": b[7], "out_dir": f"{b[6]}/ort",
                        "inputs": {k: f"{b[6]}/{k}.npy" for k in b[8]}} for b in compare], f)
        rc, log = sh(f"timeout 600 node {ORT_BATCH} {manifest}")
        if rc != 0:
            fails.append(f"ort_batch.js failed: {log[-400:]}")
            compare = []
    compared = {b[0] for b in compare}
    for name, op, domain, ins, consts, yt, d, path, feeds in built:
        y, _, log = run_cli(o.cli, path, feeds, d, "src")
        if y is None:
            fails.append(f"{name}: run failed: {log[-400:]}")
            continue
        if name in compared:
            err = f"{d}/ort/error.txt"
            log = open(err).read() if os.path.exists(err) else ""
            if log and "Could not find an implementation" in log:
                no_kernel.append(name)  # e.g. int8 A with uint8 B: not in onnxruntime's CPU EP
            elif log:
                fails.append(f"{name}: ORT failed: {log[-400:]}")
            else:
                want = np.load(f"{d}/ort/y.npy")
                if want.shape != y.shape or want.dtype != y.dtype:
                    fails.append(f"{name}: ORT {want.dtype}{want.shape} vs {y.dtype}{y.shape}")
                elif y.dtype == np.float32:
                    floats += 1
                    rel = float(np.max(np.abs(y - want) / np.maximum(np.abs(want), 1e-30))) \
                        if y.size else 0.0
                    max_rel = max(max_rel, rel)
                    bitwise += int(np.array_equal(y.view(np.uint32), want.view(np.uint32)))
                    if rel > 1e-5:
                        fails.append(f"{name}: ORT relative difference {rel:g}")
                elif not np.array_equal(y, want):
                    fails.append(f"{name}: ORT differs in {int(np.sum(y != want))} elements")
        if op == "DynamicQuantizeMatMul":  # the split range and quantize pass: any thread count
            for t in (1, 4):
                yt_, _, log = run_cli(o.cli, path, feeds, d, f"t{t}", f"--threads {t}")
                if yt_ is None or yt_.tobytes() != y.tobytes():
                    fails.append(f"{name}: --threads {t} differs {log[-300:]}")
        if op == "QLinearMatMul":  # B a graph input: the loops
            lm, lfeeds = make_model(op, domain, ins, consts, yt, const_b=False)
            lpath = f"{d}/loops.onnx"
            onnx.save(lm, lpath)
            np.save(f"{d}/B.npy", lfeeds["B"])
            yl, _, log = run_cli(o.cli, lpath, lfeeds, d, "loops")
            if yl is None or not np.array_equal(yl, y):
                fails.append(f"{name}: packed != loops {log[-300:] if yl is None else ''}")
        cpath = f"{d}/c.onnx"
        rc, log = sh(f"timeout 120 {o.cli} compile {path} -o {cpath}")
        if rc != 0 or "compiled 1 entries" not in log and "compiled 1 entry" not in log:
            fails.append(f"{name}: compile: {log[-300:]}")
            continue
        yc, doc, log = run_cli(o.cli, cpath, feeds, d, "hit")
        if yc is None:
            fails.append(f"{name}: compiled run failed: {log[-300:]}")
            continue
        ws = [(w["name"], w["decision"]) for w in doc["weights"]]
        if ws != [("B", "hit")]:
            fails.append(f"{name}: compiled run weights {ws}")
        if y.tobytes() != yc.tobytes():
            fails.append(f"{name}: compiled != uncompiled")
        # Every kernel reads the one format: capped hosts hit the entry, same bits.
        for isa in ("ref", "avx2"):
            yi, doc, log = run_cli(f"env ONNX_PREPACK_MAX_ISA={isa} {o.cli}", cpath, feeds, d, isa)
            if yi is None or y.tobytes() != yi.tobytes():
                fails.append(f"{name}: {isa} compiled run differs {log[-300:]}")
        print(f"{name} ok")
    print(f"float outputs vs ORT: {floats}, bitwise {bitwise}, max relative {max_rel:g}")
    print(f"no onnxruntime kernel (ORT part skipped): {' '.join(no_kernel) or '-'}")
    for f in fails:
        print("FAIL", f)
    print(f"{len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
