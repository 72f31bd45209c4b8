#!/usr/bin/python3
"""Weight-only QDQ models for tests/runtime/qdq_weight_test.cc and
bench/qdq_bench.py: DequantizeLinear of a constant int8 / uint8 weight read as
B of MatMul or Gemm, each with input "x", output "y", x.npy and ref.npy (the
ONNX semantics in float64: x @ ((W - zp) * scale), numpy).

  ffn        x [S, D] -> DQ(W1 int8 [D, F], per column) -> MatMul -> Sigmoid (--act relu:
             Relu) -> DQ(W2 int8 [F, D], per column) -> MatMul (a transformer FFN; with Relu,
             ONNX Runtime 1.30 leaves the first DequantizeLinear + MatMul unfused)
  batched    x [2, 5, K] -> DQ(W uint8 [K, N], per tensor, zero point) -> MatMul
  gemm       x [M, K] -> DQ(W int8 [K, N], per column, zero point) -> Gemm(bias C [N])
  gemm_t     x [M, K] -> DQ(W int8 [N, K], per row: axis 0) -> Gemm(transB 1, bias C [N])
  gemm_plain x [M, K] -> DQ(W uint8 [K, N], per tensor, no zero point) -> Gemm (no C)
  full       x [M, K] -> QuantizeLinear(uint8) -> [DQ(x_q), DQ(W int8 [K, N], per column)
             -> MatMul -> QuantizeLinear(y uint8)] -> DequantizeLinear -> y: a full QDQ unit
             (activations quantized too); ref.npy is its float64 semantics (the
             quantizations rounded in float64, so within one step of y's scale)
  full_u8    full with W uint8 [K, N], per tensor, zero point 131
  conv       x [1, 4, 9, 9] -> QuantizeLinear(uint8) -> [DQ(x_q), DQ(W int8 [6, 4, 3, 3], per
             output channel), DQ(bias int32 [6], scale x_s * w_s) -> Conv(pads 1, strides 2)
             -> QuantizeLinear(y uint8)] -> DequantizeLinear -> y: a full QDQ Conv unit
  conv_u8    conv with W uint8, per tensor, zero point 129, no bias

The single-unit weight-only cases (batched, gemm, gemm_t, gemm_plain) also write
rowq.npy: `--qdq integer`'s output as numpy computes it (A quantized per row,
DynamicQuantizeLinear's float32 arithmetic, exact integer sums, the float32
epilogue float(C) * (a_scale[r] * w_scale[n]) + bias), which the run matches bit
for bit.

usage: make_qdq_weight_models.py OUT_DIR [--cases a,b,..] [--ffn S,D,F] [--act sigmoid|relu]
                                 [--seed N]
Writes OUT_DIR/<case>/{model.onnx,dqmm.onnx,x.npy,ref.npy} (dqmm.onnx: each
unit written as the com.microsoft DynamicQuantizeMatMul the integer path runs)
and OUT_DIR/cases.json, a manifest tests/runtime/ort_batch.js reads (ONNX
Runtime's outputs go to OUT_DIR/<case>/ort/y.npy and ort_dqmm/y.npy).
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NP2T = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}


def quantized(rng, shape, dtype, axis, per_channel, zero_point):
    """A weight drawn as float, quantized to `dtype` per tensor or per channel
    along `axis`; returns (q, scale, zp or None)."""
    w = rng.standard_normal(shape).astype(np.float64) * 0.05
    lo, hi = (-128, 127) if dtype == np.int8 else (0, 255)
    if per_channel:
        amax = np.abs(w).max(axis=1 - axis)
        scale = (amax / 120.0).astype(np.float32)
    else:
        scale = np.array(np.abs(w).max() / 120.0, np.float32)
    if zero_point:
        zp = (rng.integers(-6, 7, size=scale.shape) + (0 if dtype == np.int8 else 128)).astype(dtype)
    else:
        zp = None
    s = scale if not per_channel else np.expand_dims(scale, 1 - axis)
    z = 0 if zp is None else (zp.astype(np.float64) if not per_channel
                              else np.expand_dims(zp.astype(np.float64), 1 - axis))
    q = np.clip(np.round(w / s + z), lo, hi).astype(dtype)
    return q, scale, zp


def dq_nodes(prefix, q, scale, zp, axis):
    inits = [numpy_helper.from_array(q, prefix), numpy_helper.from_array(scale, prefix + "_scale")]
    ins = [prefix, prefix + "_scale"]
    if zp is not None:
        inits.append(numpy_helper.from_array(zp, prefix + "_zp"))
        ins.append(prefix + "_zp")
    attrs = {"axis": axis} if scale.ndim == 1 else {}
    node = helper.make_node("DequantizeLinear", ins, [prefix + "_f"], name=prefix + "_dq", **attrs)
    return inits, node


def dequant(q, scale, zp, axis):
    s = scale.astype(np.float64)
    z = 0.0 if zp is None else zp.astype(np.float64)
    if scale.ndim == 1:
        s = np.expand_dims(s, 1 - axis)
        if zp is not None:
            z = np.expand_dims(z, 1 - axis)
    return (q.astype(np.float64) - z) * s


def per_row_integer(x, q, scale, zp, bias):
    """The QDQ integer path of x [..., K] @ DQ(q [K, N], scale, zp) (+ bias), in
    float32 as the kernels compute it: each row of A through DynamicQuantizeLinear
    (range including 0, scale (hi - lo) / 255, zero point nearbyint(-lo / scale),
    A' = sat_u8(nearbyint(x / scale) + zp)), the integer sums exact, then
    float(C) * (a_scale[r] * w_scale[n]), then + bias; a_scale 1 for an empty range."""
    f = np.float32
    a = x.reshape(-1, x.shape[-1]).astype(np.float32)
    lo = np.minimum(a.min(axis=1), f(0))
    hi = np.maximum(a.max(axis=1), f(0))
    sa = ((hi - lo) / f(255)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        za = np.where(sa == 0, f(0), np.clip(np.rint(-lo / sa), f(0), f(255))).astype(np.float32)
        qa = np.clip(np.rint(a / sa[:, None]) + za[:, None], 0, 255)
    qa = np.where(sa[:, None] == 0, za[:, None], qa).astype(np.int64)
    zw = np.zeros(q.shape[1], np.int64) if zp is None else np.broadcast_to(
        zp.astype(np.int64), (q.shape[1],))
    c = (qa - za.astype(np.int64)[:, None]) @ (q.astype(np.int64) - zw[None, :])
    c = c.astype(np.int32)  # the sums fit int32 here
    rs = np.where(hi == lo, f(1), sa).astype(np.float32)
    mult = (rs[:, None] * np.broadcast_to(scale, (q.shape[1],))[None, :]).astype(np.float32)
    y = (c.astype(np.float32) * mult).astype(np.float32)
    if bias is not None:
        y = (y + bias.astype(np.float32)[None, :]).astype(np.float32)
    return y.reshape(x.shape[:-1] + (q.shape[1],))


def as_dynamic_quantize_matmul(nodes, inits):
    """The graph with each DequantizeLinear -> MatMul / Gemm written as the
    com.microsoft DynamicQuantizeMatMul the integer path runs (a transB W
    transposed, its per-row scale then per column), and each DQ, DQ -> MatMul
    -> QuantizeLinear as QLinearMatMul."""
    by_out = {n.output[0]: n for n in nodes if n.op_type == "DequantizeLinear"}
    q_of = {n.input[0]: n for n in nodes if n.op_type == "QuantizeLinear"}
    arrays = {t.name: numpy_helper.to_array(t) for t in inits}
    out_nodes, out_inits = [], {t.name: t for t in inits}
    absorbed = set()
    for n in nodes:
        if n.op_type in ("MatMul", "Conv") and n.input[0] in by_out and n.input[1] in by_out:
            a, w, q = by_out[n.input[0]], by_out[n.input[1]], q_of[n.output[0]]
            absorbed.update([a.output[0], w.output[0], q.output[0]] +
                            ([n.input[2]] if len(n.input) > 2 else []))
    for n in nodes:
        if n.op_type == "DequantizeLinear" and n.output[0] in absorbed:
            continue
        if n.op_type == "DequantizeLinear" and n.input[0] not in arrays:
            out_nodes.append(n)  # an activation's DequantizeLinear
            continue
        if n.op_type == "DequantizeLinear" or (n.op_type == "QuantizeLinear" and
                                                n.output[0] in absorbed):
            continue
        if n.op_type == "MatMul" and n.input[0] in by_out and n.input[1] in by_out:
            a, w, q = by_out[n.input[0]], by_out[n.input[1]], q_of[n.output[0]]
            out_nodes.append(helper.make_node("QLinearMatMul", list(a.input) + list(w.input) +
                                              list(q.input[1:]), list(q.output), name=n.name))
        elif n.op_type == "Conv" and n.input[0] in by_out and n.input[1] in by_out:
            a, w, q = by_out[n.input[0]], by_out[n.input[1]], q_of[n.output[0]]
            bias = [by_out[n.input[2]].input[0]] if len(n.input) > 2 else []
            qc = helper.make_node("QLinearConv", list(a.input) + list(w.input) +
                                  list(q.input[1:]) + bias, list(q.output), name=n.name)
            qc.attribute.extend(n.attribute)
            out_nodes.append(qc)
        elif n.op_type in ("MatMul", "Gemm") and n.input[1] in by_out:
            dq = by_out[n.input[1]]
            w = dq.input[0]
            if any(a.name == "transB" and a.i for a in n.attribute):
                out_inits[w + "_t"] = numpy_helper.from_array(
                    np.ascontiguousarray(arrays[w].T), w + "_t")
                w = w + "_t"
            zp = dq.input[2] if len(dq.input) > 2 else ""
            bias = n.input[2] if len(n.input) > 2 else ""
            out_nodes.append(helper.make_node("DynamicQuantizeMatMul",
                                              [n.input[0], w, dq.input[1], zp, bias],
                                              list(n.output), name=n.name,
                                              domain="com.microsoft"))
        else:
            out_nodes.append(n)
    used = {i for n in out_nodes for i in n.input}
    return out_nodes, [t for k, t in out_inits.items() if k in used]


def save(path, name, nodes, inits, x, ref, opset, extra_opsets=()):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(ref.shape))],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, 1) for d in extra_opsets])
    m.ir_version = 7
    if not extra_opsets:
        onnx.checker.check_model(m)
    onnx.save(m, path)


def write(out, name, nodes, inits, x, ref, opset=13):
    """model.onnx and, as the integer path computes it, dqmm.onnx; the two
    manifest entries (ONNX Runtime's outputs in ort/ and ort_dqmm/)."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    save(os.path.join(d, "model.onnx"), name, nodes, inits, x, ref, opset)
    qn, qi = as_dynamic_quantize_matmul(nodes, inits)
    save(os.path.join(d, "dqmm.onnx"), name, qn, qi, x, ref, opset, ["com.microsoft"])
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "ref.npy"), ref)
    inputs = {"x": os.path.join(d, "x.npy")}
    return [{"name": name, "model": os.path.join(d, "model.onnx"), "inputs": inputs,
             "ref": os.path.join(d, "ref.npy"), "out_dir": os.path.join(d, "ort")},
            {"name": name + "/dqmm", "model": os.path.join(d, "dqmm.onnx"), "inputs": inputs,
             "out_dir": os.path.join(d, "ort_dqmm")}]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cases",
                    default="ffn,batched,gemm,gemm_t,gemm_plain,full,full_u8,conv,conv_u8")
    ap.add_argument("--ffn", default="16,64,256", help="S,D,F of the ffn case")
    ap.add_argument("--act", choices=["sigmoid", "relu"], default="sigmoid")
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    cases = []
    for case in o.cases.split(","):
        if case == "ffn":
            s, d, f = (int(v) for v in o.ffn.split(","))
            x = rng.standard_normal((s, d)).astype(np.float32)
            q1, s1, z1 = quantized(rng, (d, f), np.int8, 1, True, False)
            q2, s2, z2 = quantized(rng, (f, d), np.int8, 1, True, False)
            i1, n1 = dq_nodes("W1", q1, s1, z1, 1)
            i2, n2 = dq_nodes("W2", q2, s2, z2, 1)
            nodes = [n1, helper.make_node("MatMul", ["x", "W1_f"], ["h"], name="fc1"),
                     helper.make_node(o.act.capitalize(), ["h"], ["hr"], name="act"), n2,
                     helper.make_node("MatMul", ["hr", "W2_f"], ["y"], name="fc2")]
            h = x.astype(np.float64) @ dequant(q1, s1, z1, 1)
            h = np.maximum(h, 0) if o.act == "relu" else 1 / (1 + np.exp(-h))
            cases.extend(write(o.out, case, nodes, i1 + i2, x, h @ dequant(q2, s2, z2, 1)))
        elif case == "batched":
            k, n = 70, 21
            x = rng.standard_normal((2, 5, k)).astype(np.float32)
            q, sc, zp = quantized(rng, (k, n), np.uint8, 1, False, True)
            i, dn = dq_nodes("W", q, sc, zp, 1)
            nodes = [dn, helper.make_node("MatMul", ["x", "W_f"], ["y"], name="mm")]
            cases.extend(write(o.out, case, nodes, i, x, x.astype(np.float64) @ dequant(q, sc, zp, 1)))
            np.save(os.path.join(o.out, case, "rowq.npy"), per_row_integer(x, q, sc, zp, None))
        elif case in ("gemm", "gemm_t", "gemm_plain"):
            m, k, n = 6, 45, 33
            x = rng.standard_normal((m, k)).astype(np.float32)
            trans = case == "gemm_t"
            axis = 0 if trans else 1
            dtype = np.uint8 if case == "gemm_plain" else np.int8
            q, sc, zp = quantized(rng, (n, k) if trans else (k, n), dtype, axis,
                                  case != "gemm_plain", case == "gemm")
            i, dn = dq_nodes("W", q, sc, zp, axis)
            ins = ["x", "W_f"]
            bias = None
            if case != "gemm_plain":
                bias = rng.standard_normal(n).astype(np.float32)
                i.append(numpy_helper.from_array(bias, "C"))
                ins.append("C")
            nodes = [dn, helper.make_node("Gemm", ins, ["y"], name="gemm",
                                          **({"transB": 1} if trans else {}))]
            wf = dequant(q, sc, zp, axis)
            ref = x.astype(np.float64) @ (wf.T if trans else wf)
            if bias is not None:
                ref = ref + bias.astype(np.float64)
            cases.extend(write(o.out, case, nodes, i, x, ref))
            np.save(os.path.join(o.out, case, "rowq.npy"),
                    per_row_integer(x, np.ascontiguousarray(q.T) if trans else q, sc, zp, bias))
        elif case in ("full", "full_u8"):
            m, k, n = 7, 48, 40
            x = rng.standard_normal((m, k)).astype(np.float32)
            xs, xz = np.float32(5.0 / 255), np.uint8(128)
            if case == "full":
                q, sc, _ = quantized(rng, (k, n), np.int8, 1, True, False)
                wz = np.zeros(n, np.int8)
            else:
                sc = np.array(0.05 * 4 / 120, np.float32)
                wz = np.array(131, np.uint8)
                w = rng.standard_normal((k, n)) * 0.05
                q = np.clip(np.round(w / np.float64(sc)) + 131, 0, 255).astype(np.uint8)
            xq = np.clip(np.round(x.astype(np.float64) / xs) + 128, 0, 255)
            xd = (xq - 128) * np.float64(xs)
            h = xd @ dequant(q, sc, wz, 1)
            ys, yz = np.float32(np.abs(h).max() / 120), np.uint8(125)
            yq = np.clip(np.round(h / np.float64(ys)) + 125, 0, 255)
            ref = (yq - 125) * np.float64(ys)
            c = lambda a, nm: numpy_helper.from_array(np.array(a), nm)
            inits = [c(xs, "x_s"), c(xz, "x_z"), numpy_helper.from_array(q, "W"),
                     numpy_helper.from_array(sc, "W_s"), numpy_helper.from_array(wz, "W_z"),
                     c(ys, "y_s"), c(yz, "y_z")]
            nodes = [
                helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"], name="qx"),
                helper.make_node("DequantizeLinear", ["xq", "x_s", "x_z"], ["xd"], name="dqx"),
                helper.make_node("DequantizeLinear", ["W", "W_s", "W_z"], ["Wd"], name="dqw",
                                 **({"axis": 1} if sc.ndim == 1 else {})),
                helper.make_node("MatMul", ["xd", "Wd"], ["h"], name="mm"),
                helper.make_node("QuantizeLinear", ["h", "y_s", "y_z"], ["hq"], name="qy"),
                helper.make_node("DequantizeLinear", ["hq", "y_s", "y_z"], ["y"], name="dqy"),
            ]
            cases.extend(write(o.out, case, nodes, inits, x, ref))
        elif case in ("conv", "conv_u8"):
            cin, cout, hw = 4, 6, 9
            x = rng.standard_normal((1, cin, hw, hw)).astype(np.float32)
            xs, xz = np.float32(5.0 / 255), np.uint8(128)
            wf = rng.standard_normal((cout, cin, 3, 3)) * 0.2
            if case == "conv":
                sc = (np.abs(wf).reshape(cout, -1).max(axis=1) / 120).astype(np.float32)
                q = np.clip(np.round(wf / sc[:, None, None, None]), -128, 127).astype(np.int8)
                wz = np.zeros(cout, np.int8)
                wd = q.astype(np.float64) * sc[:, None, None, None]
            else:
                sc = np.array(np.abs(wf).max() / 120, np.float32)
                wz = np.array(129, np.uint8)
                q = np.clip(np.round(wf / np.float64(sc)) + 129, 0, 255).astype(np.uint8)
                wd = (q.astype(np.float64) - 129) * np.float64(sc)
            xq = np.clip(np.round(x.astype(np.float64) / xs) + 128, 0, 255)
            xd = (xq - 128) * np.float64(xs)
            pad = np.pad(xd, ((0, 0), (0, 0), (1, 1), (1, 1)))
            ho = (hw + 2 - 3) // 2 + 1
            h = np.zeros((1, cout, ho, ho))
            for i in range(ho):
                for j in range(ho):
                    patch = pad[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
                    h[0, :, i, j] = (wd * patch[None]).sum(axis=(1, 2, 3))
            c = lambda a, nm: numpy_helper.from_array(np.array(a), nm)
            inits = [c(xs, "x_s"), c(xz, "x_z"), numpy_helper.from_array(q, "W"),
                     numpy_helper.from_array(sc, "W_s"), numpy_helper.from_array(wz, "W_z")]
            conv_in = ["xd", "Wd"]
            nodes = [
                helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"], name="qx"),
                helper.make_node("DequantizeLinear", ["xq", "x_s", "x_z"], ["xd"], name="dqx"),
                helper.make_node("DequantizeLinear", ["W", "W_s", "W_z"], ["Wd"], name="dqw",
                                 **({"axis": 0} if sc.ndim == 1 else {})),
            ]
            if case == "conv":
                bs = (xs * sc).astype(np.float32)  # the float product QLinearConv assumes
                bq = rng.integers(-2000, 2000, size=cout).astype(np.int32)
                inits += [numpy_helper.from_array(bq, "B"), numpy_helper.from_array(bs, "B_s")]
                nodes.append(helper.make_node("DequantizeLinear", ["B", "B_s"], ["Bd"],
                                              name="dqb", axis=0))
                conv_in.append("Bd")
                h = h + (bq.astype(np.float64) * bs.astype(np.float64))[None, :, None, None]
            ys, yz = np.float32(np.abs(h).max() / 120), np.uint8(125)
            yq = np.clip(np.round(h / np.float64(ys)) + 125, 0, 255)
            ref = (yq - 125) * np.float64(ys)
            inits += [c(ys, "y_s"), c(yz, "y_z")]
            nodes += [
                helper.make_node("Conv", conv_in, ["h"], name="conv", pads=[1, 1, 1, 1],
                                 strides=[2, 2], kernel_shape=[3, 3]),
                helper.make_node("QuantizeLinear", ["h", "y_s", "y_z"], ["hq"], name="qy"),
                helper.make_node("DequantizeLinear", ["hq", "y_s", "y_z"], ["y"], name="dqy"),
            ]
            cases.extend(write(o.out, case, nodes, inits, x, ref))
        else:
            raise SystemExit(f"unknown case {case}")
    with open(os.path.join(o.out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
