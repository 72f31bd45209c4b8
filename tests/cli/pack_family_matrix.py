#!/usr/bin/env python3
"""The pack-family matrix: for every pack family x compile target set x
ONNX_PREPACK_MAX_ISA, `explain --json` must give every weight the decision and
reason `run --json` records, and a run on the compiled model (hits) must give
the same output bytes as a run on the source model (misses).

Also the cases compile used to skip silently: Constant-node weights (lifted by
default), initializers that are also graph inputs (packed; a fed input is
computed from), and an empty weight (not packed, with a reason; run computes,
equal to ONNX Runtime's answer); main-graph weights read inside If bodies
(packed and hits; a body's own initializer is reported as not packed); and
lineage-bound packs (MatMulNBits) written back to the cache store and found
there only for the same scales and zero points.

usage: pack_family_matrix.py --cli build/src/cli/onnx-prepack
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

RNG = np.random.default_rng(7)
ORT_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime", "ort_run.js")


def init(name, shape, dtype=np.float32):
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(dtype), name)


def model(nodes, inputs, outputs, inits, opset=17, extra_opsets=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def gemm_models():
    """gemm_b: MatMul (kn) and Gemm transB (nk)."""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm"),
             helper.make_node("Gemm", ["h", "w2"], ["y"], name="gemm", transB=1)]
    return model(nodes, [vi("x", [3, 20])], [vi("y", [3, 40])],
                 [init("w1", [20, 36]), init("w2", [40, 36])])


def conv_models():
    """conv_filter: blocked, depthwise and transposed filters."""
    nodes = [helper.make_node("Conv", ["x", "wc"], ["a"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["a", "wd"], ["b"], name="dw", group=16, pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["b", "wt"], ["y"], name="deconv", strides=[2, 2])]
    return model(nodes, [vi("x", [1, 3, 9, 9])], [vi("y", [1, 5, 18, 18])],
                 [init("wc", [16, 3, 3, 3]), init("wd", [16, 1, 3, 3]), init("wt", [16, 5, 2, 2])])


def nbits_models():
    """q_gemm_b: a 4-bit MatMulNBits with zero points (lineage-bound)."""
    k, n, block = 64, 24, 32
    blocks = k // block
    b = numpy_helper.from_array(RNG.integers(0, 256, (n, blocks, block // 2), dtype=np.uint8), "qb")
    scales = numpy_helper.from_array((RNG.random(n * blocks) * 0.1 + 0.01).astype(np.float32), "qs")
    zp = numpy_helper.from_array(RNG.integers(0, 256, (n * ((blocks + 1) // 2),), dtype=np.uint8),
                                 "qz")
    node = helper.make_node("MatMulNBits", ["x", "qb", "qs", "qz"], ["y"], name="nbits",
                            domain="com.microsoft", K=k, N=n, bits=4, block_size=block)
    return model([node], [vi("x", [2, k])], [vi("y", [2, n])], [b, scales, zp],
                 extra_opsets=[("com.microsoft", 1)])


def integer_models():
    """i8_gemm_b: quantize_dynamic MatMulIntegers, int8 B with a zero point and uint8 B
    without (K and N not multiples of 4 and 16), then a group-1 ConvInteger, uint8 W."""
    k, n1, n2 = 30, 21, 17
    b1 = numpy_helper.from_array(RNG.integers(-128, 128, (k, n1), dtype=np.int8), "ib")
    z1 = numpy_helper.from_array(np.array(3, np.int8), "iz")
    b2 = numpy_helper.from_array(RNG.integers(0, 256, (n1, n2), dtype=np.uint8), "ub")
    s = numpy_helper.from_array(np.array(0.05, np.float32), "ws")
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dq1"),
             helper.make_node("MatMulInteger", ["xq", "ib", "xz", "iz"], ["i1"], name="mmi1"),
             helper.make_node("Cast", ["i1"], ["f1"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["xs", "ws"], ["s1"]),
             helper.make_node("Mul", ["f1", "s1"], ["h"]),
             helper.make_node("DynamicQuantizeLinear", ["h"], ["hq", "hs", "hz"], name="dq2"),
             helper.make_node("MatMulInteger", ["hq", "ub", "hz"], ["i2"], name="mmi2"),
             helper.make_node("Cast", ["i2"], ["g"], to=TensorProto.FLOAT),
             # A group-1 ConvInteger (the i8_conv_w formats): g [3, 17] as [1, 3, 17, 1].
             helper.make_node("Reshape", ["g", "gshape"], ["g4"]),
             helper.make_node("DynamicQuantizeLinear", ["g4"], ["gq", "gs", "gz"], name="dq3"),
             helper.make_node("ConvInteger", ["gq", "cw", "gz", "cz"], ["i3"], name="convi",
                              pads=[1, 0, 1, 0]),
             helper.make_node("Cast", ["i3"], ["y"], to=TensorProto.FLOAT)]
    cw = numpy_helper.from_array(RNG.integers(0, 256, (6, 3, 3, 1), dtype=np.uint8), "cw")
    cz = numpy_helper.from_array(np.array(130, np.uint8), "cz")
    gshape = numpy_helper.from_array(np.array([1, 3, n2, 1], np.int64), "gshape")
    return model(nodes, [vi("x", [3, k])], [vi("y", [1, 6, n2, 1])],
                 [b1, z1, b2, s, cw, cz, gshape])


def constant_node_model():
    w = RNG.standard_normal((12, 10)).astype(np.float32)
    nodes = [helper.make_node("Constant", [], ["wk"], value=numpy_helper.from_array(w)),
             helper.make_node("MatMul", ["x", "wk"], ["y"], name="mm")]
    return model(nodes, [vi("x", [2, 12])], [vi("y", [2, 10])], [])


def graph_input_model():
    nodes = [helper.make_node("MatMul", ["x", "wi"], ["y"], name="mm")]
    return model(nodes, [vi("x", [2, 12]), vi("wi", [12, 10])], [vi("y", [2, 10])],
                 [init("wi", [12, 10])])


def empty_weight_model():
    nodes = [helper.make_node("MatMul", ["x", "we"], ["y"], name="mm")]
    return model(nodes, [vi("x", [2, 0])], [vi("y", [2, 5])],
                 [numpy_helper.from_array(np.zeros((0, 5), np.float32), "we")])


def subgraph_model():
    """An If on a fed condition: both branches read main-graph weight ws;
    the else branch also a body initializer wb."""
    wb = init("wb", [10, 10])
    then_g = helper.make_graph([helper.make_node("MatMul", ["x", "ws"], ["t"], name="then_mm")],
                               "then", [], [vi("t", [2, 10])])
    else_g = helper.make_graph([helper.make_node("MatMul", ["x", "ws"], ["e0"], name="else_mm"),
                                helper.make_node("MatMul", ["e0", "wb"], ["e"], name="else_mm2")],
                               "else", [], [vi("e", [2, 10])], [wb])
    node = helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_g,
                            else_branch=else_g)
    return model([node], [vi("x", [2, 12]), vi("c", [], TensorProto.BOOL)], [vi("y", [2, 10])],
                 [init("ws", [12, 10])])


def float16_model():
    """A graph computing in FLOAT16: a MatMul and a Conv with FLOAT16 weights."""
    nodes = [helper.make_node("Conv", ["x", "wc16"], ["a"], name="conv16", pads=[1, 1, 1, 1]),
             helper.make_node("Flatten", ["a"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "wm16"], ["y"], name="mm16")]
    return model(nodes, [vi("x", [1, 3, 4, 4], TensorProto.FLOAT16)],
                 [vi("y", [1, 6], TensorProto.FLOAT16)],
                 [init("wc16", [2, 3, 3, 3], np.float16), init("wm16", [32, 6], np.float16)])


FAMILIES = {"gemm_b": gemm_models, "conv_filter": conv_models, "q_gemm_b": nbits_models,
            "i8_gemm_b": integer_models}
TARGETS = [["host"], ["x86_64-v3"], ["x86_64-v4"], ["x86_64-v3", "x86_64-v4"]]
ISAS = ["avx512", "avx2", "ref"]


class Matrix:
    def __init__(self, cli, tmp):
        self.cli, self.tmp, self.cases, self.failures = cli, tmp, 0, []

    def run(self, args, isa=None, check=True):
        env = dict(os.environ)
        env["ONNX_PREPACK_MEMO_DIR"] = os.path.join(self.tmp, "memo")
        if isa:
            env["ONNX_PREPACK_MAX_ISA"] = isa
        p = subprocess.run([self.cli] + args, capture_output=True, text=True, env=env)
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr}{p.stdout}")
        return p

    def fail(self, what):
        self.failures.append(what)
        print("FAIL " + what)

    def outputs(self, model_path, isa, tag, extra=()):
        d = os.path.join(self.tmp, tag)
        os.makedirs(d, exist_ok=True)
        p = self.run(["run", model_path, "--json", "--seed", "3", "--output-dir", d] + list(extra),
                     isa)
        doc = json.loads(p.stdout)
        outs = {n: open(o["file"], "rb").read() for n, o in doc["outputs"].items()}
        return doc, outs

    def check_model(self, name, m, targets, isa, expect_all_hits):
        src = os.path.join(self.tmp, f"{name}.onnx")
        onnx.save(m, src)
        tag = f"{name}-{'+'.join(targets)}-{isa}"
        out = os.path.join(self.tmp, tag + ".onnx")
        args = ["compile", src, "-o", out, "--json"]
        for t in targets:
            args += ["--target", t]
        comp = json.loads(self.run(args).stdout)
        if comp["entries"] == 0:
            self.fail(f"{tag}: compile wrote no entry ({comp['skipped']})")
            return
        explain = json.loads(self.run(["explain", out, "--json"], isa).stdout)
        run_doc, hit_out = self.outputs(out, isa, tag + "-hits")
        _, miss_out = self.outputs(src, isa, tag + "-misses")
        self.cases += 1
        ex = {(w["name"], w["decision"], w["reason"] or "") for w in explain["weights"]}
        rn = {(w["name"], w["decision"], w["reason"] or "") for w in run_doc["weights"]}
        if ex != rn:
            self.fail(f"{tag}: explain {sorted(ex)} != run {sorted(rn)}")
        if hit_out != miss_out:
            self.fail(f"{tag}: outputs with compiled entries differ from the source model's")
        if expect_all_hits and run_doc["totals"]["misses"] != 0:
            self.fail(f"{tag}: expected all hits, got {sorted(rn)}")
        print(f"ok {tag}: {run_doc['totals']['hits']} hits, {run_doc['totals']['misses']} misses")

    def special_cases(self):
        # Constant-node weights: lifted by default, packed, hits.
        src = os.path.join(self.tmp, "const.onnx")
        onnx.save(constant_node_model(), src)
        out = os.path.join(self.tmp, "const.compiled.onnx")
        comp = json.loads(self.run(["compile", src, "-o", out, "--json"]).stdout)
        doc, hit = self.outputs(out, None, "const-hit")
        _, miss = self.outputs(src, None, "const-miss")
        self.cases += 1
        if comp["lifted_constants"] != 1 or comp["entries"] < 1 or doc["totals"]["hits"] != 1:
            self.fail(f"constant node: {comp} {doc['totals']}")
        if hit != miss:
            self.fail("constant node: outputs differ")
        kept = json.loads(self.run(["compile", src, "-o", out + "2", "--json", "--no-lift-constants"]
                                   ).stdout)
        text = self.run(["compile", src, "-o", out + "3", "--no-lift-constants"]).stdout
        if kept["entries"] != 0 or "--no-lift-constants" not in text:
            self.fail(f"--no-lift-constants: {kept} {text!r}")

        # An initializer that is also a graph input: packed, a hit when not
        # fed; fed, the fed value is computed from (a miss overridden_by_input).
        src = os.path.join(self.tmp, "gi.onnx")
        onnx.save(graph_input_model(), src)
        out = os.path.join(self.tmp, "gi.compiled.onnx")
        comp = json.loads(self.run(["compile", src, "-o", out, "--json"]).stdout)
        doc, _ = self.outputs(out, None, "gi-hit", ["--input", "x=random"])
        self.cases += 1
        if comp["entries"] < 1 or doc["totals"]["hits"] != 1:
            self.fail(f"graph-input initializer: {comp} {doc['totals']}")
        wfeed = os.path.join(self.tmp, "wi.npy")
        np.save(wfeed, np.ones((12, 10), np.float32))
        xfeed = os.path.join(self.tmp, "x.npy")
        np.save(xfeed, np.full((2, 12), 0.5, np.float32))
        doc, outs = self.outputs(out, None, "gi-fed", ["--input", f"wi={wfeed}", "--input",
                                                       f"x={xfeed}"])
        y = np.load(doc["outputs"]["y"]["file"])
        if doc["totals"]["hits"] != 0 or not np.array_equal(y, np.full((2, 10), 6.0, np.float32)):
            self.fail(f"fed graph input: {doc['totals']} {y}")

        # An empty weight: compile says why it is not packed; run computes zeros.
        src = os.path.join(self.tmp, "empty.onnx")
        onnx.save(empty_weight_model(), src)
        out = os.path.join(self.tmp, "empty.compiled.onnx")
        comp = json.loads(self.run(["compile", src, "-o", out, "--json"]).stdout)
        self.cases += 1
        if comp["entries"] != 0 or not any(s["name"] == "we" for s in comp["skipped"]):
            self.fail(f"empty weight compile: {comp}")
        for path in (src, out):
            doc, _ = self.outputs(path, None, "empty-" + os.path.basename(path))
            y = np.load(doc["outputs"]["y"]["file"])
            if y.shape != (2, 5) or np.any(y != 0):
                self.fail(f"empty weight run of {path}: {y}")
        explain = json.loads(self.run(["explain", out, "--json"]).stdout)
        ex = {(w["name"], w["decision"], w["reason"]) for w in explain["weights"]}
        rn = {(w["name"], w["decision"], w["reason"]) for w in doc["weights"]}
        if ex != rn:
            self.fail(f"empty weight: explain {ex} != run {rn}")
        xfeed = os.path.join(self.tmp, "xe.npy")
        np.save(xfeed, np.zeros((2, 0), np.float32))
        ort_dir = os.path.join(self.tmp, "empty-ort")
        os.makedirs(ort_dir, exist_ok=True)
        ort = subprocess.run(["node", ORT_RUN, src, ort_dir, f"x={xfeed}"], capture_output=True,
                             text=True)
        if ort.returncode != 0:
            self.fail(f"empty weight: ONNX Runtime failed: {ort.stderr}")
        else:
            doc, _ = self.outputs(out, None, "empty-fed", ["--input", f"x={xfeed}"])
            mine = np.load(doc["outputs"]["y"]["file"])
            theirs = np.load(os.path.join(ort_dir, "y.npy"))
            if mine.shape != theirs.shape or not np.array_equal(mine, theirs):
                self.fail(f"empty weight: {mine} != ONNX Runtime's {theirs}")

        self.subgraph_case()
        self.lineage_cache_case()
        self.float16_case()

    def float16_case(self):
        # FLOAT16 weights: an entry of an _f16 format each (the f32 layout of the
        # exactly widened values), explain and run agree, a compiled run hits them
        # where a target's kernels run, and outputs are bitwise equal to the
        # source model's (misses packed from FLOAT16) and to --weights plain at
        # every capped level (tests/cli/float16_weights.py covers every position).
        src = os.path.join(self.tmp, "f16.onnx")
        onnx.save(float16_model(), src)
        for targets in TARGETS:
            tag = "f16-" + "+".join(targets)
            out = os.path.join(self.tmp, tag + ".onnx")
            args = ["compile", src, "-o", out, "--json"]
            for t in targets:
                args += ["--target", t]
            comp = json.loads(self.run(args).stdout)
            skipped = {s["name"] for s in comp["skipped"]}
            if comp["entries"] < 2 or skipped & {"wc16", "wm16"}:
                self.fail(f"{tag} compile: {comp}")
                continue
            for isa in ISAS:
                self.cases += 1
                explain = json.loads(self.run(["explain", out, "--json"], isa).stdout)
                doc, hit = self.outputs(out, isa, f"{tag}-{isa}-compiled")
                _, miss = self.outputs(src, isa, f"{tag}-{isa}-source")
                _, plain = self.outputs(src, isa, f"{tag}-{isa}-plain", ["--weights", "plain"])
                ex = {(w["name"], w["decision"], w["reason"] or "") for w in explain["weights"]}
                rn = {(w["name"], w["decision"], w["reason"] or "") for w in doc["weights"]}
                names = {w["name"] for w in doc["weights"]}
                formats = {w["format"] for w in doc["weights"] if w["decision"] == "hit"}
                if ex != rn or names != {"wc16", "wm16"} or hit != miss or hit != plain or \
                        not all(f.endswith("_f16") for f in formats):
                    self.fail(f"float16 {tag} {isa}: explain {sorted(ex)} != run {sorted(rn)}, "
                              f"formats {formats}, or outputs differ")
                else:
                    print(f"ok float16 {tag}-{isa}: {doc['totals']['hits']} hits")

    def subgraph_case(self):
        # Main-graph weights read inside If bodies: entries, hits in both
        # branches, explain = run; the body's own initializer: reported.
        src = os.path.join(self.tmp, "if.onnx")
        onnx.save(subgraph_model(), src)
        out = os.path.join(self.tmp, "if.compiled.onnx")
        comp = json.loads(self.run(["compile", src, "-o", out, "--json"]).stdout)
        self.cases += 1
        if comp["entries"] < 1 or not any(s["name"] == "wb" and "body" in s["reason"]
                                          for s in comp["skipped"]):
            self.fail(f"subgraph compile: {comp}")
        explain = json.loads(self.run(["explain", out, "--json"]).stdout)
        ex = {(w["name"], w["decision"], w["reason"] or "") for w in explain["weights"]}
        for cond in (True, False):
            cfeed = os.path.join(self.tmp, f"c{int(cond)}.npy")
            np.save(cfeed, np.array(cond))
            xfeed = os.path.join(self.tmp, "xif.npy")
            np.save(xfeed, RNG.standard_normal((2, 12)).astype(np.float32))
            feeds = ["--input", f"c={cfeed}", "--input", f"x={xfeed}"]
            doc, hit = self.outputs(out, None, f"if-hit-{cond}", feeds)
            _, miss = self.outputs(src, None, f"if-miss-{cond}", feeds)
            rn = {(w["name"], w["decision"], w["reason"] or "") for w in doc["weights"]}
            if doc["totals"]["hits"] < 1 or ex != rn:
                self.fail(f"subgraph run (cond {cond}): explain {ex} != run {rn} {doc['totals']}")
            if hit != miss:
                self.fail(f"subgraph run (cond {cond}): outputs differ")

    def lineage_cache_case(self):
        # A MatMulNBits miss is written back to the cache store and is a hit
        # from there on the next load; other scales in the same weight's
        # place are a miss (the store's key binds the lineage).
        src = os.path.join(self.tmp, "nbits.onnx")
        m = nbits_models()
        onnx.save(m, src)
        cache = os.path.join(self.tmp, "lineage-cache")
        first, out1 = self.outputs(src, None, "lin-1", ["--cache", cache])
        second, out2 = self.outputs(src, None, "lin-2", ["--cache", cache])
        self.cases += 1
        w1 = {w["name"]: w for w in first["weights"]}
        w2 = {w["name"]: w for w in second["weights"]}
        if not w1.get("qb", {}).get("stored") or w2.get("qb", {}).get("decision") != "hit":
            self.fail(f"lineage cache: first {first['weights']} second {second['weights']}")
        if out1 != out2:
            self.fail("lineage cache: a hit from the store differs from the pack")
        for t in m.graph.initializer:
            if t.name == "qs":
                t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 2, "qs"))
        other = os.path.join(self.tmp, "nbits-other-scales.onnx")
        onnx.save(m, other)
        third, out3 = self.outputs(other, None, "lin-3", ["--cache", cache])
        _, fresh = self.outputs(other, None, "lin-4")
        w3 = {w["name"]: w for w in third["weights"]}
        if w3.get("qb", {}).get("decision") != "miss" or out3 != fresh:
            self.fail(f"lineage cache, other scales: {third['weights']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        m = Matrix(os.path.abspath(args.cli), tmp)
        host_isa = "avx512" if "avx512f" in open("/proc/cpuinfo").read() else "avx2"
        for fam, make in FAMILIES.items():
            for targets in TARGETS:
                for isa in ISAS:
                    # A target the capped host runs natively: every weight hits
                    # (MatMulNBits' and MatMulInteger's baseline formats: at every level).
                    level = {"ref": 0, "avx2": 1, "avx512": 2}
                    cap = min(level[isa], level[host_isa])
                    tl = {"host": level[host_isa], "x86_64-v3": 1, "x86_64-v4": 2}
                    all_hits = fam in ("q_gemm_b", "i8_gemm_b") or (
                        cap >= 1 and any(tl[t] <= cap for t in targets))
                    m.check_model(fam, make(), targets, isa, all_hits)
        m.special_cases()
        print(f"{m.cases} cases, {len(m.failures)} failures")
        print(f"{m.cases - len(m.failures)} passed, {len(m.failures)} failed")
        return 1 if m.failures else 0


if __name__ == "__main__":
    sys.exit(main())
