"""FLOAT16 CNNs and their float64 references, for tests/runtime/f16_drift_test.py and
bench/f16_drift.py.

unet(blocks, ...) builds a U-Net-like FLOAT16 model as exporters write it: Conv (3x3, pads 1,
BatchNorm folded into weights and bias) + Relu blocks, MaxPool 2x2 down, Resize (nearest or
linear) or ConvTranspose 2x2 up, Concat of the skip, a 1x1 Conv to one channel and Sigmoid.
One output, y: the Sigmoid, or (head="logits") the last Conv itself.
The same graph is kept as a list of steps that reference() evaluates in float64 with numpy,
on the exactly widened FLOAT16 weights and input:
  - round_each=False: float64 throughout, one rounding to float16 at the output (the
    "float32 evaluation" a user compares against, without float32's own error);
  - round_each=True: every node's output rounded to float16 (round to nearest even), the
    ONNX semantics of the FLOAT16 graph computed exactly (each node correctly rounded).
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

F16 = TensorProto.FLOAT16


def _conv(x, w, b, pad):
    """NCHW conv, stride 1, group 1, float64."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
    y = np.einsum("nchwij,mcij->nmhw", win, w, optimize=True)
    return y + b.reshape(1, m, 1, 1)


def _conv_transpose2(x, w, b):
    """ConvTranspose kernel 2 stride 2 (W is [C, M, 2, 2]), float64."""
    n, c, h, wd = x.shape
    m = w.shape[1]
    y = np.einsum("nchw,cmij->nmhiwj", x, w).reshape(n, m, 2 * h, 2 * wd)
    return y + b.reshape(1, m, 1, 1)


def _maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _resize2(x, mode):
    if mode == "nearest":  # asymmetric, round_prefer_floor: each input pixel twice
        return x.repeat(2, axis=2).repeat(2, axis=3)
    # linear, half_pixel, scale 2: taps at (o + 0.5) / 2 - 0.5, edges clamped
    def axis(a, ax):
        n = a.shape[ax]
        pos = (np.arange(2 * n) + 0.5) / 2 - 0.5
        pos = np.clip(pos, 0, n - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)
        f = pos - lo
        shape = [1] * a.ndim
        shape[ax] = 2 * n
        f = f.reshape(shape)
        return np.take(a, lo, axis=ax) * (1 - f) + np.take(a, hi, axis=ax) * f
    return axis(axis(x, 2), 3)


def _f16(a):
    return np.asarray(a, np.float64).astype(np.float16)


class Model:
    def __init__(self, name, proto, steps, inputs, outputs):
        self.name, self.proto, self.steps, self.inputs, self.outputs = name, proto, steps, inputs, outputs

    def reference(self, feeds, round_each, round_outputs=True):
        """float64 evaluation of each output; with round_each every step's output is rounded to
        float16, else only the outputs (as a FLOAT16 graph output must be; round_outputs=False:
        not even those, the float evaluation a user compares with)."""
        env = {k: np.asarray(v, np.float64) for k, v in feeds.items()}
        for out, fn, ins in self.steps:
            y = fn(*[env[i] for i in ins])
            env[out] = _f16(y).astype(np.float64) if round_each else y
        return {o: _f16(env[o]).astype(np.float64) if round_outputs else env[o] for o in self.outputs}


def unet(blocks, width=16, size=32, up="resize_nearest", seed=0, levels=None, head="sigmoid"):
    """A FLOAT16 U-Net of `blocks` Conv+Relu blocks (at least 2 * levels + 1, one per stage).

    up: "resize_nearest", "resize_linear", "convtranspose", or "mixed" (alternating by level).
    head: "sigmoid" (y = Sigmoid of the last Conv) or "logits" (y = the last Conv, whose error
    the Sigmoid does not squeeze).
    """
    rng = np.random.default_rng(seed)
    if levels is None:  # two levels when the blocks allow (5 stages), else one
        levels = 2 if blocks >= 5 else 1
    nodes, inits, steps = [], [], []
    stages = 2 * levels + 1
    assert blocks >= stages
    # Blocks per stage: the first conv of each stage is mandatory (stem, down, mid, the
    # 2C -> C convs after each Concat); the rest are spread evenly.
    per = [1] * stages
    for i in range(blocks - stages):
        per[(i * 2 + levels) % stages] += 1
    count = [0]

    def name(p):
        count[0] += 1
        return f"{p}{count[0]}"

    def conv_relu(x, cin, cout, relu=True, k=3):
        w = rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (cout, cin, k, k))
        b = rng.normal(0, 0.1, cout)
        w16, b16 = _f16(w), _f16(b)
        wn, bn, y = name("w"), name("b"), name("conv")
        inits.extend([numpy_helper.from_array(w16, wn), numpy_helper.from_array(b16, bn)])
        pad = k // 2
        nodes.append(helper.make_node("Conv", [x, wn, bn], [y], kernel_shape=[k, k],
                                      pads=[pad] * 4, name=y))
        wf, bf = w16.astype(np.float64), b16.astype(np.float64)
        steps.append((y, lambda a, wf=wf, bf=bf, pad=pad: _conv(a, wf, bf, pad), [x]))
        if not relu:
            return y
        r = name("relu")
        nodes.append(helper.make_node("Relu", [y], [r], name=r))
        steps.append((r, lambda a: np.maximum(a, 0), [y]))
        return r

    def upsample(x, c, how):
        if how == "convtranspose":
            w16 = _f16(rng.normal(0, np.sqrt(1.0 / c), (c, c, 2, 2)))
            b16 = _f16(rng.normal(0, 0.1, c))
            wn, bn, y = name("wt"), name("bt"), name("convt")
            inits.extend([numpy_helper.from_array(w16, wn), numpy_helper.from_array(b16, bn)])
            nodes.append(helper.make_node("ConvTranspose", [x, wn, bn], [y], kernel_shape=[2, 2],
                                          strides=[2, 2], name=y))
            wf, bf = w16.astype(np.float64), b16.astype(np.float64)
            steps.append((y, lambda a, wf=wf, bf=bf: _conv_transpose2(a, wf, bf), [x]))
            return y
        mode = "nearest" if how == "resize_nearest" else "linear"
        sn, y = name("scales"), name("resize")
        inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), sn))
        attrs = ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                  "nearest_mode": "floor"} if mode == "nearest" else
                 {"mode": "linear", "coordinate_transformation_mode": "half_pixel"})
        nodes.append(helper.make_node("Resize", [x, "", sn], [y], name=y, **attrs))
        steps.append((y, lambda a, mode=mode: _resize2(a, mode), [x]))
        return y

    x = "x"
    stage = iter(per)
    cur, c = x, 3
    skips = []
    for lv in range(levels):  # encoder
        n = next(stage)
        for i in range(n):
            cur = conv_relu(cur, c, width)
            c = width
        skips.append(cur)
        p = name("pool")
        nodes.append(helper.make_node("MaxPool", [cur], [p], kernel_shape=[2, 2], strides=[2, 2],
                                      name=p))
        steps.append((p, _maxpool2, [cur]))
        cur = p
    for i in range(next(stage)):  # bottleneck
        cur = conv_relu(cur, c, width)
    for lv in reversed(range(levels)):  # decoder
        how = up if up != "mixed" else ("convtranspose" if lv % 2 == 0 else "resize_nearest")
        u = upsample(cur, width, how)
        cat = name("concat")
        skip = skips[lv]
        nodes.append(helper.make_node("Concat", [u, skip], [cat], axis=1, name=cat))
        steps.append((cat, lambda a, s: np.concatenate([a, s], axis=1), [u, skip]))
        cur, c = cat, 2 * width
        for i in range(next(stage)):
            cur = conv_relu(cur, c, width)
            c = width
    logits = conv_relu(cur, width, 1, relu=False, k=1)
    if head == "sigmoid":
        nodes.append(helper.make_node("Sigmoid", [logits], ["y"], name="sigmoid"))
        steps.append(("y", lambda a: 1 / (1 + np.exp(-a)), [logits]))
    else:
        nodes.append(helper.make_node("Identity", [logits], ["y"], name="logits"))
        steps.append(("y", lambda a: a, [logits]))
    g = helper.make_graph(nodes, f"unet{blocks}", [helper.make_tensor_value_info("x", F16, [1, 3, size, size])],
                          [helper.make_tensor_value_info("y", F16, [1, 1, size, size])], inits)
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    feeds = {"x": _f16(rng.uniform(-1, 1, (1, 3, size, size)))}
    return Model(f"unet{blocks}_{up}_{head}", proto, steps, feeds, ["y"])


def ordered(h):
    """float16 values as integers in the order of their values (ulp distance = difference)."""
    b = np.asarray(h, np.float16).view(np.uint16).astype(np.int64)
    return np.where(b & 0x8000, -(b & 0x7FFF), b)


def drift(got, ref):
    """max abs error, and the max abs error relative to the reference's largest magnitude."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    err = np.abs(got - ref)
    return float(err.max()), float(err.max() / max(np.abs(ref).max(), 1e-30))


def block(rows=6, width=64, out=96, seed=0):
    """A FLOAT16 transformer block tail: MatMul, Add (bias), Gelu, LayerNormalization (opset 20).
    ONNX Runtime has a float16 LayerNormalization kernel: it rounds the Gelu output, not the
    MatMul's or the Add's."""
    from math import erf
    rng = np.random.default_rng(seed)
    w = _f16(rng.normal(0, 0.2, (width, out)))
    b, s, z = _f16(rng.normal(0, 1, out)), _f16(1 + 0.2 * rng.normal(0, 1, out)), _f16(rng.normal(0, 1, out))
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Gelu", ["a"], ["g"]),
             helper.make_node("LayerNormalization", ["g", "s", "z"], ["y"], epsilon=1e-5)]
    wf, bf, sf, zf = (t.astype(np.float64) for t in (w, b, s, z))
    eps = float(np.float32(1e-5))

    def ln(g):
        mu = g.mean(-1, keepdims=True)
        return (g - mu) / np.sqrt(((g - mu) ** 2).mean(-1, keepdims=True) + eps) * sf + zf
    steps = [("m", lambda x: x @ wf, ["x"]), ("a", lambda m: m + bf, ["m"]),
             ("g", lambda a: 0.5 * a * (1 + np.vectorize(erf)(a / np.sqrt(2))), ["a"]),
             ("y", ln, ["g"])]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", F16, [rows, width])],
                          [helper.make_tensor_value_info("y", F16, [rows, out])],
                          [numpy_helper.from_array(t, n) for t, n in ((w, "w"), (b, "b"), (s, "s"), (z, "z"))])
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    proto.ir_version = 9
    return Model("block_matmul_gelu_layernorm", proto, steps, {"x": _f16(rng.uniform(-2, 2, (rows, width)))}, ["y"])
