#!/usr/bin/env python3
"""FLOAT16 weights get persisted packs (issue 19).

A FLOAT16 graph with FLOAT16 initializers in every pack-family weight position
(MatMul B, Gemm B transposed, Conv 3x3, depthwise Conv, Conv 1x1,
ConvTranspose): compile writes one entry of an _f16 format for each, explain
and a run of the compiled model hit all of them, and the outputs are bitwise
equal compiled, uncompiled (misses packed from the FLOAT16 source) and
`--weights plain` (no pack), and within FLOAT16 tolerance of ONNX Runtime. A
payload byte flipped is a diagnosed miss, a changed FLOAT16 weight is a miss
(the entry binds to the FLOAT16 tensor's digest), outputs bitwise equal still.

With --baseline-cli (an onnx-prepack built before issue 19), its outputs of
the source model must be bitwise equal too: the float kernels read the same
float values as they did from the widened copy.

usage: float16_weights.py --cli build/src/cli/onnx-prepack [--baseline-cli OLD]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ORT_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime", "ort_run.js")
RNG = np.random.default_rng(19)
WEIGHTS = ["w3", "wd", "w1", "wt", "wm", "wg"]


def f16(name, shape, scale=0.3):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float16), name)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT16, shape)


def float16_model():
    nodes = [
        helper.make_node("Conv", ["x", "w3", "b3"], ["y3"], name="conv3x3", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "wd"], ["yd"], name="depthwise", group=8,
                         pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w1"], ["y1"], name="conv1x1"),
        helper.make_node("ConvTranspose", ["x", "wt"], ["yt"], name="deconv", strides=[2, 2]),
        helper.make_node("MatMul", ["a", "wm"], ["ym"], name="matmul"),
        helper.make_node("Gemm", ["ym", "wg", "cg"], ["yg"], name="gemm", transB=1, alpha=0.5),
    ]
    inits = [f16("w3", [20, 8, 3, 3]), f16("b3", [20]), f16("wd", [8, 1, 3, 3]),
             f16("w1", [18, 8, 1, 1]), f16("wt", [8, 5, 2, 2]), f16("wm", [40, 37], 0.15),
             f16("wg", [19, 37], 0.15), f16("cg", [19])]
    g = helper.make_graph(nodes, "f16", [vi("x", [2, 8, 9, 7]), vi("a", [5, 40])],
                          [vi("y3", [2, 20, 9, 7]), vi("yd", [2, 8, 9, 7]),
                           vi("y1", [2, 18, 9, 7]), vi("yt", [2, 5, 18, 14]),
                           vi("yg", [5, 19])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


class Test:
    def __init__(self, cli, tmp):
        self.cli, self.tmp, self.failures = cli, tmp, []
        self.feeds = []

    def run(self, args, cli=None):
        env = dict(os.environ)
        env["ONNX_PREPACK_MEMO_DIR"] = os.path.join(self.tmp, "memo")
        p = subprocess.run([cli or self.cli] + args, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr}{p.stdout}")
        return p

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)

    def outputs(self, model_path, tag, extra=(), cli=None):
        d = os.path.join(self.tmp, tag)
        os.makedirs(d, exist_ok=True)
        p = self.run(["run", model_path, "--json", "--output-dir", d] + self.feeds + list(extra),
                     cli)
        doc = json.loads(p.stdout)
        outs = {n: open(o["file"], "rb").read() for n, o in doc["outputs"].items()}
        return doc, outs

    def main(self, baseline_cli):
        src = os.path.join(self.tmp, "f16.onnx")
        m = float16_model()
        onnx.checker.check_model(m)
        onnx.save(m, src)
        x = os.path.join(self.tmp, "x.npy")
        a = os.path.join(self.tmp, "a.npy")
        np.save(x, RNG.standard_normal((2, 8, 9, 7)).astype(np.float16))
        np.save(a, RNG.standard_normal((5, 40)).astype(np.float16))
        self.feeds = ["--input", f"x={x}", "--input", f"a={a}"]

        out = os.path.join(self.tmp, "f16.compiled.onnx")
        comp = json.loads(self.run(["compile", src, "-o", out, "--json"]).stdout)
        skipped = [s["name"] for s in comp["skipped"]]
        self.check(comp["entries"] == len(WEIGHTS) and comp["weights"] == len(WEIGHTS) and
                   not any(w in skipped for w in WEIGHTS),
                   f"compile writes an entry per FLOAT16 weight: {comp['entries']} entries, "
                   f"skipped {comp['skipped']}")
        insp = json.loads(self.run(["inspect", out, "--json"]).stdout)
        formats = {}
        for e in insp.get("compiled_tensors", insp.get("entries", [])):
            formats[e.get("source", e.get("name"))] = e.get("format", e.get("struct_type"))
        self.check(len(formats) == 0 or all(str(f).endswith("_f16") for f in formats.values()),
                   f"entries are of _f16 formats: {formats}")

        explain = json.loads(self.run(["explain", out, "--json"]).stdout)
        ex = {w["name"]: w["decision"] for w in explain["weights"]}
        self.check(ex == {w: "hit" for w in WEIGHTS}, f"explain: every weight a hit: {ex}")

        hit_doc, hit = self.outputs(out, "hits")
        rn = {w["name"]: (w["decision"], w["format"]) for w in hit_doc["weights"]}
        self.check(set(rn) == set(WEIGHTS) and all(d == "hit" and f.endswith("_f16")
                                                    for d, f in rn.values()),
                   f"run of the compiled model hits every weight: {rn}")
        miss_doc, miss = self.outputs(src, "misses")
        mn = {w["name"]: (w["decision"], w["format"]) for w in miss_doc["weights"]}
        self.check(set(mn) == set(WEIGHTS) and all(d == "miss" and f.endswith("_f16")
                                                    for d, f in mn.values()),
                   f"run of the source model packs every weight from FLOAT16: {mn}")
        _, plain = self.outputs(src, "plain", ["--weights", "plain"])
        self.check(hit == miss, "outputs: hits bitwise equal to misses")
        self.check(hit == plain, "outputs: hits bitwise equal to --weights plain")
        if baseline_cli:
            _, before = self.outputs(src, "before", cli=baseline_cli)
            self.check(hit == before, "outputs: bitwise equal to the build before FLOAT16 packs")

        # ONNX Runtime, within FLOAT16 tolerance (tests/runtime/control_ort_test.cc).
        ort_dir = os.path.join(self.tmp, "ort")
        os.makedirs(ort_dir, exist_ok=True)
        ort = subprocess.run(["node", ORT_RUN, src, ort_dir, f"x={x}", f"a={a}"],
                             capture_output=True, text=True)
        self.check(ort.returncode == 0, f"ONNX Runtime runs the model {ort.stderr[-400:]}")
        if ort.returncode == 0:
            for name, o in hit_doc["outputs"].items():
                mine = np.load(o["file"]).astype(np.float64)
                theirs = np.load(os.path.join(ort_dir, name + ".npy")).astype(np.float64)
                mx = np.abs(theirs).max()
                worst = np.abs(mine - theirs).max() if mine.shape == theirs.shape else np.inf
                self.check(worst <= 4e-3 * mx + 1e-6,
                           f"ONNX Runtime agrees on {name}: max |diff| {worst:.3g}, "
                           f"max |ort| {mx:.3g}")

        # A flipped payload byte: a diagnosed miss, outputs bitwise equal.
        entries = [e for e in insp.get("compiled_tensors", []) if "offset" in e]
        data = [f["path"] for f in comp["files"] if f["role"] == "data"]
        if entries and data:
            e = entries[0]
            path = os.path.join(os.path.dirname(out), os.path.basename(data[0]))
            bad = os.path.join(self.tmp, "bad")
            os.makedirs(bad, exist_ok=True)
            bad_model = os.path.join(bad, os.path.basename(out))
            with open(out, "rb") as f:
                open(bad_model, "wb").write(f.read())
            blob = bytearray(open(path, "rb").read())
            at = int(e["offset"]) + 5
            blob[at] ^= 0x40
            open(os.path.join(bad, os.path.basename(path)), "wb").write(bytes(blob))
            doc, outs = self.outputs(bad_model, "corrupt", ["--verify", "full"])
            d = {w["name"]: (w["decision"], w["reason"]) for w in doc["weights"]}
            name = e.get("source", e.get("name"))
            self.check(d.get(name, ("", ""))[0] == "miss" and d[name][1] != "" and
                       sum(1 for v in d.values() if v[0] == "hit") == len(WEIGHTS) - 1,
                       f"a flipped payload byte of {name} is a diagnosed miss: {d}")
            self.check(outs == hit, "outputs with a corrupted entry bitwise equal")
        else:
            self.check(False, f"inspect gives entry offsets and compile a data file: {insp} {comp}")

        # A changed FLOAT16 weight: the entry no longer matches its digest.
        cm = onnx.load(out)
        for t in cm.graph.initializer:
            if t.name == "wm":
                arr = numpy_helper.to_array(t).copy()
                arr[0, 0] = np.float16(float(arr[0, 0]) + 1.0)
                t.CopyFrom(numpy_helper.from_array(arr, "wm"))
        changed = os.path.join(self.tmp, "changed.onnx")
        onnx.save(cm, changed)
        sm = onnx.load(src)
        for t in sm.graph.initializer:
            if t.name == "wm":
                t.CopyFrom(numpy_helper.from_array(arr, "wm"))
        changed_src = os.path.join(self.tmp, "changed_src.onnx")
        onnx.save(sm, changed_src)
        doc, outs = self.outputs(changed, "changed")
        _, want = self.outputs(changed_src, "changed-src", ["--weights", "plain"])
        d = {w["name"]: (w["decision"], w["reason"]) for w in doc["weights"]}
        self.check(d.get("wm", ("", ""))[0] == "miss" and
                   all(v[0] == "hit" for k, v in d.items() if k != "wm"),
                   f"a changed FLOAT16 weight is a miss: {d}")
        self.check(outs == want, "outputs with the changed weight equal its plain run")
        return 1 if self.failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--baseline-cli")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Test(os.path.abspath(args.cli), tmp)
        rc = t.main(os.path.abspath(args.baseline_cli) if args.baseline_cli else None)
        print(f"{len(t.failures)} failures")
        return rc


if __name__ == "__main__":
    sys.exit(main())
