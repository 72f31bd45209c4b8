#!/usr/bin/env python3
"""The RMS / fused normalizations, the com.microsoft GELU family and GatherBlockQuantized:
`onnx-prepack run` agrees with ONNX Runtime.

SimplifiedLayerNormalization (default domain and com.microsoft), RMSNormalization (opset 23),
com.microsoft SkipLayerNormalization, SkipSimplifiedLayerNormalization,
EmbedLayerNormalization, Gelu, BiasGelu, FastGelu, QuickGelu and GatherBlockQuantized (int4,
uint4, uint8 with bits 4 and 8), with their optional inputs present and absent, optional outputs
requested, skip broadcast forms, float16, hidden sizes 768 and odd ones (37). One small model per
case (python3-onnx), random inputs fed to both runtimes (ONNX Runtime in one node process,
ort_batch.js), every output compared: float |ours - ort| <= 1e-5 + 1e-4 |ort|, float16 within
1 ulp of float16 (both compute in float and round once), integers (mask_index) and the sums
(input_skip_bias_sum, embedding_sum) bitwise.

usage: contrib_norm_vs_ort.py ONNX_PREPACK SOURCE_DIR [--filter SUBSTRING] [--keep DIR]
Exits 1 when a case disagrees or fails in one runtime only.
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_ort  # noqa: E402

RNG = np.random.default_rng(20)
F, H, I32, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64
MS = "com.microsoft"


class Case:
    def __init__(self, name, node, feeds, outputs, consts=(), opset=17, ort_may_refuse=False):
        self.name, self.node, self.feeds = name, node, feeds
        self.outputs = outputs  # [(name, elem type)], the node's non-empty outputs
        self.consts = consts  # [TensorProto] initializers
        self.opset = opset
        self.ort_may_refuse = ort_may_refuse  # a form ONNX Runtime's CPU provider lacks
        self.ort_node = None  # what ONNX Runtime runs instead (an equivalent node), or None


def elem_type(a):
    return {np.dtype(np.float32): F, np.dtype(np.float16): H, np.dtype(np.int32): I32,
            np.dtype(np.int64): I64}[a.dtype]


def save(case, path, node=None):
    inputs = [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in case.feeds.items()]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in case.outputs]
    g = helper.make_graph([node or case.node], case.name, inputs, outs, list(case.consts))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", case.opset),
                                            helper.make_opsetid(MS, 1)])
    m.ir_version = 10 if case.opset >= 23 else 8
    onnx.save(m, path)


def randn(shape, dtype=np.float32, scale=1.0, offset=0.0):
    return (RNG.standard_normal(shape) * scale + offset).astype(dtype)


def rms_cases():
    for dom in ("", MS):
        tag = "ms" if dom else "onnx"
        for shape, axis, dt in (((2, 5, 768), -1, np.float32), ((3, 37), -1, np.float32),
                                ((2, 3, 4, 5), 2, np.float32), ((2, 7, 64), -1, np.float16),
                                ((4, 37), 1, np.float16)):
            x = randn(shape, dt, 2.0, 0.5)
            sshape = shape[axis:] if axis >= 0 else shape[axis:]
            sc = randn(sshape, dt)
            dname = "f16" if dt == np.float16 else "f32"
            sname = "x".join(map(str, shape))
            for with_inv in (False, True):
                outs = ["Y", "inv"] if with_inv else ["Y"]
                n = helper.make_node("SimplifiedLayerNormalization", ["X", "S"], outs, domain=dom,
                                     axis=axis, epsilon=1e-6)
                c = Case(f"simplified_ln_{tag}_{dname}_{sname}_axis{axis}{'_inv' if with_inv else ''}",
                         n, {"X": x, "S": sc},
                         [("Y", elem_type(x))] + ([("inv", F)] if with_inv else []))
                if dom:
                    # ONNX Runtime registers it in the default domain only: compare with that.
                    c.ort_node = helper.make_node("SimplifiedLayerNormalization", ["X", "S"], outs,
                                                  axis=axis, epsilon=1e-6)
                yield c
    for shape, axis, dt in (((2, 5, 768), -1, np.float32), ((3, 37), -1, np.float32),
                            ((2, 3, 8), 1, np.float32), ((2, 7, 64), -1, np.float16)):
        x = randn(shape, dt, 2.0, 0.5)
        sc = randn(shape[axis:], dt)
        n = helper.make_node("RMSNormalization", ["X", "S"], ["Y"], axis=axis, epsilon=1e-5)
        yield Case(f"rms23_{'f16' if dt == np.float16 else 'f32'}_{'x'.join(map(str, shape))}_axis{axis}",
                   n, {"X": x, "S": sc}, [("Y", elem_type(x))], opset=23)
    # scale given as an initializer, leading 1s
    x = randn((2, 4, 37), np.float32)
    sc = randn((1, 37), np.float32)
    n = helper.make_node("RMSNormalization", ["X", "S"], ["Y"])
    yield Case("rms23_f32_const_scale_1x37", n, {"X": x}, [("Y", F)],
               [numpy_helper.from_array(sc, "S")], opset=23)


def skip_cases():
    forms = [("same", (2, 5, 768), (2, 5, 768)), ("bcast_s_h", (2, 5, 768), (5, 768)),
             ("bcast_1_s_h", (3, 4, 37), (1, 4, 37)), ("rank2", (7, 37), (7, 37)),
             ("odd", (1, 3, 37), (1, 3, 37))]
    for simplified in (False, True):
        op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
        tag = "skip_simplified" if simplified else "skip_ln"
        for fname, xs, ss in forms:
            for dt in (np.float32, np.float16):
                if dt == np.float16 and fname not in ("same", "bcast_s_h", "rank2"):
                    continue
                hid = xs[-1]
                x, sk = randn(xs, dt, 1.5), randn(ss, dt, 1.5)
                g, be, bi = randn((hid,), dt), randn((hid,), dt), randn((hid,), dt, 0.5)
                variants = [("all", True, True, ["Y", "", "", "sum"]),
                            ("nobias", True, False, ["Y"]),
                            ("nobeta", False, True, ["Y", "", "", "sum"]),
                            ("plain", False, False, ["Y"])]
                for vname, with_beta, with_bias, outs in variants:
                    if simplified and with_beta:
                        continue
                    feeds = {"X": x, "K": sk, "G": g}
                    ins = ["X", "K", "G"]
                    if not simplified:
                        ins.append("B" if with_beta else "")
                        if with_beta:
                            feeds["B"] = be
                    if with_bias:
                        ins.append("Bias")
                        feeds["Bias"] = bi
                    while ins and ins[-1] == "":
                        ins.pop()
                    n = helper.make_node(op, ins, outs, domain=MS, epsilon=1e-5)
                    outputs = [(o, elem_type(x)) for o in outs if o]
                    yield Case(f"{tag}_{fname}_{'f16' if dt == np.float16 else 'f32'}_{vname}", n,
                               feeds, outputs)
    # mean and inv_std_var requested (ONNX Runtime's CPU kernel may not write them).
    x, sk = randn((2, 3, 37)), randn((2, 3, 37))
    g, be = randn((37,)), randn((37,))
    n = helper.make_node("SkipLayerNormalization", ["X", "K", "G", "B"], ["Y", "mean", "inv", "sum"],
                         domain=MS, epsilon=1e-5)
    yield Case("skip_ln_stats", n, {"X": x, "K": sk, "G": g, "B": be},
               [("Y", F), ("mean", F), ("inv", F), ("sum", F)])
    n = helper.make_node("SkipSimplifiedLayerNormalization", ["X", "K", "G"], ["Y", "", "inv", "sum"],
                         domain=MS, epsilon=1e-5)
    yield Case("skip_simplified_inv", n, {"X": x, "K": sk, "G": g},
               [("Y", F), ("inv", F), ("sum", F)])
    n = helper.make_node("SkipSimplifiedLayerNormalization", ["X", "K", "G"],
                         ["Y", "mean", "inv", "sum"], domain=MS, epsilon=1e-5)
    yield Case("skip_simplified_mean", n, {"X": x, "K": sk, "G": g},
               [("Y", F), ("mean", F), ("inv", F), ("sum", F)])


def embed_cases():
    for hid, b, s in ((768, 2, 5), (37, 3, 4)):
        vocab, npos, nseg = 50, 16, 2
        word, pos, seg = randn((vocab, hid)), randn((npos, hid)), randn((nseg, hid))
        g, be = randn((hid,)), randn((hid,))
        ids = RNG.integers(0, vocab, (b, s)).astype(np.int32)
        sids = RNG.integers(0, nseg, (b, s)).astype(np.int32)
        mask = (RNG.random((b, s)) < 0.7).astype(np.int32)
        pids = RNG.integers(0, npos, (b, s)).astype(np.int32)
        pids1 = RNG.integers(0, npos, (1, s)).astype(np.int32)
        consts = [numpy_helper.from_array(word, "W"), numpy_helper.from_array(pos, "P"),
                  numpy_helper.from_array(seg, "Sg"), numpy_helper.from_array(g, "G"),
                  numpy_helper.from_array(be, "B")]
        for vname, with_seg, with_mask, pid, with_sum in (
                ("full", True, True, None, True), ("nomask", True, False, None, False),
                ("noseg", False, True, None, False), ("posids", True, True, pids, True),
                ("posids_b1", True, False, pids1, False), ("bare", False, False, None, True)):
            feeds = {"ids": ids}
            ins = ["ids", "seg" if with_seg else "", "W", "P", "Sg" if with_seg else "", "G", "B"]
            if with_seg:
                feeds["seg"] = sids
            if with_mask or pid is not None:
                ins.append("mask" if with_mask else "")
                if with_mask:
                    feeds["mask"] = mask
            if pid is not None:
                ins.append("pids")
                feeds["pids"] = pid
            outs = ["Y", "mi"] + (["sum"] if with_sum else [])
            n = helper.make_node("EmbedLayerNormalization", ins, outs, domain=MS, epsilon=1e-12)
            outputs = [("Y", F), ("mi", I32)] + ([("sum", F)] if with_sum else [])
            used = [c for c in consts if c.name in ins]
            yield Case(f"embed_ln_h{hid}_{vname}", n, feeds, outputs, used)
        # mask values other than 0 and 1
        mask2 = RNG.integers(0, 3, (b, s)).astype(np.int32)
        n = helper.make_node("EmbedLayerNormalization", ["ids", "seg", "W", "P", "Sg", "G", "B", "mask"],
                             ["Y", "mi"], domain=MS)
        yield Case(f"embed_ln_h{hid}_mask012", n, {"ids": ids, "seg": sids, "mask": mask2},
                   [("Y", F), ("mi", I32)], consts)


def gelu_cases():
    for shape in ((2, 5, 768), (3, 37), (37,)):
        sname = "x".join(map(str, shape))
        x = randn(shape, np.float32, 3.0)
        bias = randn((shape[-1],), np.float32)
        yield Case(f"gelu_ms_{sname}", helper.make_node("Gelu", ["X"], ["Y"], domain=MS),
                   {"X": x}, [("Y", F)])
        yield Case(f"bias_gelu_{sname}", helper.make_node("BiasGelu", ["X", "Bi"], ["Y"], domain=MS),
                   {"X": x, "Bi": bias}, [("Y", F)])
        yield Case(f"fast_gelu_{sname}", helper.make_node("FastGelu", ["X"], ["Y"], domain=MS),
                   {"X": x}, [("Y", F)])
        yield Case(f"fast_gelu_bias_{sname}",
                   helper.make_node("FastGelu", ["X", "Bi"], ["Y"], domain=MS),
                   {"X": x, "Bi": bias}, [("Y", F)])
        yield Case(f"quick_gelu_{sname}", helper.make_node("QuickGelu", ["X"], ["Y"], domain=MS),
                   {"X": x}, [("Y", F)])
        yield Case(f"quick_gelu_alpha1_{sname}",
                   helper.make_node("QuickGelu", ["X"], ["Y"], domain=MS, alpha=1.0),
                   {"X": x}, [("Y", F)])


def packed_tensor(name, data_type, values):
    """A 4-bit TensorProto (INT4 22, UINT4 21): values (logical shape), two per byte, low first."""
    flat = (values.astype(np.int64).reshape(-1) & 0x0F).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    t.dims.extend(values.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return t


def gbq_cases():
    for kind in ("int4", "uint4"):
        for (v, k), block, gaxis, qaxis in (((10, 64), 16, 0, 1), ((12, 96), 32, 0, 1),
                                            ((64, 10), 16, 1, 0), ((9, 37), 16, 0, 1)):
            lo, hi, dt = (-8, 8, 22) if kind == "int4" else (0, 16, 21)
            q = RNG.integers(lo, hi, (v, k))
            sshape = [v, k]
            sshape[qaxis] = (sshape[qaxis] + block - 1) // block
            gdim = (v, k)[gaxis]
            for sdt in (np.float32, np.float16):
                for with_zp in (False, True):
                    for idt in (np.int64, np.int32):
                        if idt == np.int32 and (sdt == np.float16 or with_zp):
                            continue
                        sc = (RNG.random(sshape) * 0.1 + 0.01).astype(sdt)
                        idx = RNG.integers(-gdim, gdim, (2, 3)).astype(idt)
                        consts = [packed_tensor("D", dt, q), numpy_helper.from_array(sc, "Sc")]
                        ins = ["D", "I", "Sc"]
                        if with_zp:
                            consts.append(packed_tensor("Z", dt, RNG.integers(lo, hi, sshape)))
                            ins.append("Z")
                        n = helper.make_node("GatherBlockQuantized", ins, ["Y"], domain=MS,
                                             gather_axis=gaxis, quantize_axis=qaxis,
                                             block_size=block, bits=4)
                        name = (f"gbq_{kind}_{v}x{k}_b{block}_g{gaxis}q{qaxis}_"
                                f"{'f16' if sdt == np.float16 else 'f32'}"
                                f"{'_zp' if with_zp else ''}_{np.dtype(idt).name}")
                        yield Case(name, n, {"I": idx}, [("Y", elem_type(sc))], consts)
    for bits in (4, 8):
        comp = 8 // bits
        for (v, k), block in (((10, 64), 16), ((7, 96), 32), ((5, 48), 16)):
            data = RNG.integers(0, 256, (v, k // comp)).astype(np.uint8)
            nb = (k + block - 1) // block
            for sdt in (np.float32, np.float16):
                for with_zp in (False, True):
                    sc = (RNG.random((v, nb)) * 0.1 + 0.01).astype(sdt)
                    idx = RNG.integers(-v, v, (4,)).astype(np.int64)
                    consts = [numpy_helper.from_array(data, "D"), numpy_helper.from_array(sc, "Sc")]
                    ins = ["D", "I", "Sc"]
                    if with_zp:
                        consts.append(numpy_helper.from_array(
                            RNG.integers(0, 256, (v, (nb + comp - 1) // comp)).astype(np.uint8), "Z"))
                        ins.append("Z")
                    n = helper.make_node("GatherBlockQuantized", ins, ["Y"], domain=MS,
                                         gather_axis=0, quantize_axis=1, block_size=block, bits=bits)
                    yield Case(f"gbq_uint8_bits{bits}_{v}x{k}_b{block}_"
                               f"{'f16' if sdt == np.float16 else 'f32'}{'_zp' if with_zp else ''}",
                               n, {"I": idx}, [("Y", elem_type(sc))], consts)


def compare(ours, ort):
    if ours.shape != ort.shape:
        return f"shape {ours.shape} vs ONNX Runtime's {ort.shape}"
    if ours.dtype != ort.dtype:
        return f"type {ours.dtype} vs ONNX Runtime's {ort.dtype}"
    if ours.dtype == np.float16:
        a, b = ours.view(np.int16).astype(np.int64), ort.view(np.int16).astype(np.int64)
        # ulps apart (same sign); NaN equal NaN
        a = np.where(a < 0, -32768 - a, a)
        b = np.where(b < 0, -32768 - b, b)
        d = np.abs(a - b)
        nan = np.isnan(ours.astype(np.float32)) & np.isnan(ort.astype(np.float32))
        d[nan] = 0
        return f"{int(d.max())} ulps of float16 apart" if d.size and d.max() > 1 else ""
    if ours.dtype.kind == "f":
        o, r = ours.astype(np.float64), ort.astype(np.float64)
        bad = ~((np.abs(o - r) <= 1e-5 + 1e-4 * np.abs(r)) | (np.isnan(o) & np.isnan(r)))
        if bad.any():
            i = np.argwhere(bad)[0]
            return (f"{int(bad.sum())} elements differ, first at {tuple(i)}: "
                    f"{o[tuple(i)]} vs {r[tuple(i)]}")
        return ""
    return "" if np.array_equal(ours, ort) else "integer outputs differ"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("source_dir")
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="contrib_norm_vs_ort.")
    cases = [c for c in list(rms_cases()) + list(skip_cases()) + list(embed_cases()) +
             list(gelu_cases()) + list(gbq_cases()) if a.filter in c.name]
    def ort_model(c, d):  # ONNX Runtime lacks some domains' registrations: run its own node
        if c.ort_node is None:
            return None
        save(c, os.path.join(d, "ort_model.onnx"), c.ort_node)
        return os.path.join(d, "ort_model.onnx")

    manifest = vs_ort.write_cases(work, cases, save, ort_model)
    ort = vs_ort.start_ort(a.source_dir, manifest)
    ran = vs_ort.run_ours(a.cli, work, cases, threads=1)
    if ort.wait() != 0:
        print("contrib_norm_vs_ort: ONNX Runtime batch failed", file=sys.stderr)
        return 1
    failures, ort_lacks, compared = [], [], 0
    for c, (rc, err) in zip(cases, ran):
        d = os.path.join(work, c.name)
        ort_err = os.path.join(d, "ort", "error.txt")
        if os.path.exists(ort_err):
            msg = open(ort_err).read().strip().splitlines()[0][:200]
            if c.ort_may_refuse:
                ort_lacks.append(f"{c.name} ({msg})")
            else:
                failures.append(f"{c.name}: ONNX Runtime refuses ({msg})")
            continue
        if rc != 0:
            failures.append(f"{c.name}: we fail: {err.splitlines()[-1] if err else rc}")
            continue
        for name, _ in c.outputs:
            theirs = os.path.join(d, "ort", name + ".npy")
            if not os.path.exists(theirs):
                failures.append(f"{c.name}: ONNX Runtime wrote no {name}")
                continue
            mine, ref = np.load(os.path.join(d, "ours", name + ".npy")), np.load(theirs)
            if name == "sum" and mine.shape == ref.shape and mine.dtype == ref.dtype:
                # input_skip_bias_sum / embedding_sum: the same float additions in the same
                # order as ONNX Runtime, so bitwise equal.
                why = "" if mine.tobytes() == ref.tobytes() else "sums are not bitwise equal"
            else:
                why = compare(mine, ref)
            compared += 1
            if why:
                failures.append(f"{c.name}: {name}: {why}")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"contrib_norm_vs_ort: {len(cases) - len(failures) - len(ort_lacks)} of {len(cases)} "
          f"cases agree with ONNX Runtime ({compared} outputs compared)")
    for f in ort_lacks:
        print("  not in ONNX Runtime's CPU provider (ours runs it): " + f)
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
