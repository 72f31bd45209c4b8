"""Input plans for operators whose inputs have structure (issue 18's differential fuzzer).

`build(op, ...)` returns a Plan (inputs as (name, array, is_initializer) or None for an omitted
optional input, attributes the plan fixes, the output count, the rank attributes refer to), a
string (why no model can be made for this operator), or None: then `generic` makes
elementwise-style inputs (the first data input of the random shape, the others that shape or a
broadcast of it). Recipes aim at models that are valid most of the time, so that both runtimes
compute; gen.mutate then breaks a share of them.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from . import gen

F32 = np.float32
I64 = np.int64


class Plan:
    def __init__(self, inputs, attrs=None, outputs=1, rank=None, outer=None):
        self.inputs, self.attrs, self.outputs, self.rank = inputs, attrs or {}, outputs, rank
        self.outer = outer or []  # (name, array): graph inputs a subgraph reads from outer scope


def data(rng, dtype, shape, edge=True):
    return gen.random_data(rng, dtype, shape, edge)


def floats_of(bind, key="T"):
    return bind.get(key) or F32


def generic(op, rng, schema, bind, shape, opset):
    inputs = []
    first = True
    for f in schema.inputs:
        dt = gen.dtype_of(f, bind)
        if f.option == "optional" and rng.random() < 0.4:
            inputs.append(None)
            continue
        if dt is None:
            if f.option == "optional":
                inputs.append(None)
                continue
            return "input '%s' has no type .npy carries (%s)" % (f.name, f.type_str)
        copies = int(rng.integers(1, 4)) if f.option == "variadic" else 1
        for _ in range(copies):
            s = shape if first or rng.random() < 0.6 else gen.broadcast_variant(rng, shape)
            first = False
            inputs.append((f.name, data(rng, dt, s), False))
    outs = len([o for o in schema.outputs if o.option != "optional"]) or 1
    return Plan(inputs, outputs=outs)


def axes_of(rng, rank, k=None):
    if rank == 0:
        return []
    k = k if k is not None else int(rng.integers(1, rank + 1))
    return sorted(int(a) - (rank if rng.random() < 0.3 else 0)
                  for a in rng.permutation(rank)[:k])


def reshape_target(rng, shape):
    n = int(np.prod(shape)) if shape else 1
    choice = rng.random()
    if choice < 0.3:
        return [-1]
    if choice < 0.5 and shape:
        return list(reversed(shape))
    if choice < 0.7 and shape:
        t = [0] + [-1] if len(shape) > 1 else [n]
        return t
    return [n] + [1] * int(rng.integers(0, 2))


def conv_like(op, rng, bind, opset, quant=False):
    dt = floats_of(bind, "T1" if quant else "T")
    nsp = int(rng.integers(1, 3))
    n, g = int(rng.integers(1, 3)), int(rng.choice([1, 1, 2]))
    cin = g * int(rng.integers(1, 3))
    cout = g * int(rng.integers(1, 3))
    spatial = [int(rng.choice([1, 2, 3, 5, 7])) for _ in range(nsp)]
    k = [int(rng.integers(1, min(s, 3) + 1)) for s in spatial]
    # Attributes not chosen stay unset (None): a random kernel_shape would not match W.
    attrs = {"group": g if g > 1 else None, "kernel_shape": None, "strides": None,
             "pads": None, "dilations": None}
    if rng.random() < 0.5:
        attrs["kernel_shape"] = k
    if rng.random() < 0.4:
        attrs["strides"] = [int(rng.integers(1, 3)) for _ in k]
    if rng.random() < 0.3:
        attrs["pads"] = [int(rng.integers(0, 2)) for _ in range(2 * nsp)]
    if rng.random() < 0.3:
        attrs["dilations"] = [1] * nsp
    attrs.update({"output_padding": None, "output_shape": None, "auto_pad": None})
    if op in ("Conv", "ConvTranspose"):
        w = [cout, cin // g] + k if op == "Conv" else [cin, cout // g] + k
        ins = [("X", data(rng, dt, [n, cin] + spatial), False),
               ("W", data(rng, dt, w, edge=False), rng.random() < 0.6)]
        if rng.random() < 0.5:
            ins.append(("B", data(rng, dt, [cout]), True))
        return Plan(ins, attrs, rank=nsp + 2)
    # ConvInteger / QLinearConv: uint8 / int8 codes
    xt = np.uint8 if rng.random() < 0.7 else np.int8
    wt = np.uint8 if rng.random() < 0.5 else np.int8
    x = data(rng, xt, [n, cin] + spatial)
    w = data(rng, wt, [cout, cin // g] + k, edge=False)
    if op == "ConvInteger":
        ins = [("x", x, False), ("w", w, True)]
        if rng.random() < 0.5:
            ins += [("x_zero_point", np.array(3, xt), True), ("w_zero_point", np.array(1, wt), True)]
        return Plan(ins, attrs, rank=nsp + 2)
    yt = xt
    ins = [("x", x, False), ("x_scale", np.array(0.05, F32), True),
           ("x_zero_point", np.array(2, xt), True), ("w", w, True),
           ("w_scale", np.array(0.1, F32), True), ("w_zero_point", np.array(0, wt), True),
           ("y_scale", np.array(0.2, F32), True), ("y_zero_point", np.array(5, yt), True)]
    if rng.random() < 0.4:
        ins.append(("B", data(rng, np.int32, [cout], edge=False), True))
    return Plan(ins, attrs, rank=nsp + 2)


def pool(op, rng, bind, opset):
    dt = floats_of(bind)
    nsp = int(rng.integers(1, 3))
    spatial = [int(rng.choice([1, 2, 3, 5, 7])) for _ in range(nsp)]
    x = data(rng, dt, [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + spatial)
    attrs = {}
    if not op.startswith("Global"):
        attrs["kernel_shape"] = [int(rng.integers(1, s + 1)) for s in spatial]
        attrs["pads"] = [0] * (2 * nsp) if rng.random() < 0.6 else [
            int(rng.integers(0, min(k, 2))) for k in attrs["kernel_shape"] * 2]
        attrs["strides"] = [int(rng.integers(1, 3)) for _ in spatial]
        attrs["dilations"] = None if op != "MaxPool" or rng.random() < 0.6 else [1] * nsp
        attrs["auto_pad"] = None
        if op == "LpPool":
            attrs["p"] = int(rng.integers(1, 4))
    outs = 2 if op == "MaxPool" and rng.random() < 0.3 and bind.get("T") != np.int8 else 1
    return Plan([("X", x, False)], attrs, outputs=outs, rank=nsp + 2)


def rnn(op, rng, bind, opset):
    dt = floats_of(bind)
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    seq, batch, inp, hid = [int(rng.integers(1, 4)) for _ in range(4)]
    direction = ["forward", "reverse", "bidirectional"][int(rng.integers(0, 3))]
    nd = 2 if direction == "bidirectional" else 1
    ins = [("X", data(rng, dt, [seq, batch, inp], edge=False), False),
           ("W", data(rng, dt, [nd, gates * hid, inp], edge=False), True),
           ("R", data(rng, dt, [nd, gates * hid, hid], edge=False), True)]
    if rng.random() < 0.6:
        ins.append(("B", data(rng, dt, [nd, 2 * gates * hid], edge=False), True))
    else:
        ins.append(None)
    if rng.random() < 0.3:
        ins.append(("sequence_lens", rng.integers(1, seq + 1, batch).astype(np.int32), True))
    else:
        ins.append(None)
    if rng.random() < 0.4:
        ins.append(("initial_h", data(rng, dt, [nd, batch, hid], edge=False), False))
    attrs = {"hidden_size": hid, "direction": direction, "activations": None,
             "activation_alpha": None, "activation_beta": None, "clip": None}
    if op == "GRU" and rng.random() < 0.5:
        attrs["linear_before_reset"] = 1
    return Plan(ins, attrs, outputs=int(rng.integers(1, 3 if op != "LSTM" else 4)), rank=3)


def subgraph_op(op, rng, bind, opset, shape):
    x = data(rng, F32, shape)
    vi = lambda n, s=None: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
    if op == "If":
        def branch(kind, name):
            n = helper.make_node(kind, ["outer"], ["o"])
            return helper.make_graph([n], name, [], [vi("o")])
        cond = np.array(rng.random() < 0.5)
        return Plan([("cond", cond, False)], {
            "then_branch": branch("Neg", "then"), "else_branch": branch("Abs", "else")},
            outer=[("outer", x)])
    if op == "Loop":
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Add", ["v_in", "outer"], ["v_out"]),
             helper.make_node("Mul", ["v_in", "v_in"], ["scan_out"])], "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), vi("v_in")],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), vi("v_out"),
             vi("scan_out")])
        trips = np.array(int(rng.integers(0, 4)), I64)
        return Plan([("M", trips, rng.random() < 0.5), ("cond", np.array(True), True),
                     ("v", data(rng, F32, shape), False)], {"body": body}, outputs=2,
                    rank=len(shape), outer=[("outer", x)])
    if op == "Scan":
        s = shape if shape else [2]
        if s[0] == 0:
            s = [2] + s[1:]
        body = helper.make_graph(
            [helper.make_node("Add", ["st_in", "x_in"], ["st_out"]),
             helper.make_node("Identity", ["st_out"], ["y_out"])], "body",
            [vi("st_in"), vi("x_in")], [vi("st_out"), vi("y_out")])
        ins = [("state", data(rng, F32, s[1:]), False), ("xs", data(rng, F32, s), False)]
        attrs = {"body": body, "num_scan_inputs": 1}
        return Plan(ins, attrs, outputs=2, rank=len(s))
    return None


def einsum(rng, bind):
    eqs = [("ij,jk->ik", [[2, 3], [3, 4]]), ("bij,bjk->bik", [[2, 2, 3], [2, 3, 2]]),
           ("ii->i", [[3, 3]]), ("ii", [[3, 3]]), ("ij->ji", [[2, 5]]), ("...ij,...jk", [[2, 1, 3], [3, 2]]),
           ("i,i", [[5], [5]]), ("i,j->ij", [[2], [3]]), ("bii->bi", [[2, 3, 3]]),
           ("ij,ij->", [[0, 3], [0, 3]]), ("abc,cd->abd", [[1, 2, 3], [3, 2]])]
    eq, shapes = eqs[int(rng.integers(0, len(eqs)))]
    dt = floats_of(bind)
    return Plan([("Inputs", data(rng, dt, s), False) for s in shapes], {"equation": eq})


def build(op, rng, schema, bind, shape, opset):
    r = len(shape)
    dt = bind.get("T") or bind.get("T1") or F32
    if op in ("Conv", "ConvTranspose", "ConvInteger", "QLinearConv"):
        return conv_like(op, rng, bind, opset, quant=op in ("ConvInteger", "QLinearConv"))
    if op in ("AveragePool", "MaxPool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
              "GlobalLpPool"):
        return pool(op, rng, bind, opset)
    if op in ("RNN", "GRU", "LSTM"):
        return rnn(op, rng, bind, opset)
    if op in ("If", "Loop", "Scan"):
        return subgraph_op(op, rng, bind, opset, shape)
    if op == "Einsum":
        return einsum(rng, bind)
    if op == "Reshape":
        x = data(rng, dt, shape)
        return Plan([("data", x, False), ("shape", np.array(reshape_target(rng, shape), I64),
                                           rng.random() < 0.7)])
    if op == "Expand":
        target = gen.broadcast_variant(rng, shape)
        x = data(rng, dt, target)
        return Plan([("input", x, False), ("shape", np.array(shape, I64), rng.random() < 0.7)])
    if op == "Tile":
        return Plan([("input", data(rng, dt, shape), False),
                     ("repeats", rng.integers(0, 4, r).astype(I64), True)])
    if op == "ConstantOfShape":
        return Plan([("input", np.array(shape, I64), rng.random() < 0.5)],
                    {"value": numpy_helper.from_array(
                        data(rng, [np.float32, np.int64, np.int32, np.float64][int(rng.integers(0, 4))],
                             [1]), "value") if rng.random() < 0.7 else None})
    if op == "Slice" and opset >= 10:
        axes = axes_of(rng, r)
        starts = [int(rng.integers(-shape[a] - 1, shape[a] + 2)) for a in axes]
        ends = [int(rng.integers(-shape[a] - 1, shape[a] + 2)) if rng.random() < 0.8 else 2 ** 62
                for a in axes]
        steps = [int(rng.choice([1, 1, 2, -1, -2])) for _ in axes]
        return Plan([("data", data(rng, dt, shape), False), ("starts", np.array(starts, I64), True),
                     ("ends", np.array(ends, I64), True), ("axes", np.array(axes, I64), True),
                     ("steps", np.array(steps, I64), True)], rank=r)
    if op in ("Squeeze", "Unsqueeze") and opset >= 13:
        if op == "Squeeze":
            ones = [i for i, d in enumerate(shape) if d == 1]
            axes = ones[:int(rng.integers(0, len(ones) + 1))]
        else:
            axes = sorted(set(int(rng.integers(0, r + 1)) for _ in range(int(rng.integers(1, 3)))))
        ins = [("data", data(rng, dt, shape), False)]
        if axes or rng.random() < 0.5:
            ins.append(("axes", np.array(axes, I64), True))
        return Plan(ins, rank=r)
    if op == "ReduceSum" and opset >= 13 or op.startswith("Reduce") and opset >= 18:
        ins = [("data", data(rng, dt, shape), False)]
        if rng.random() < 0.7:
            ins.append(("axes", np.array(axes_of(rng, r), I64), True))
        return Plan(ins, rank=r)
    if op == "Pad" and opset >= 11:
        pads = [int(rng.integers(-1, 3)) for _ in range(2 * r)]
        ins = [("data", data(rng, dt, shape), False), ("pads", np.array(pads, I64), True)]
        if rng.random() < 0.5:
            ins.append(("constant_value", np.array(1, dt), True))
        return Plan(ins, {"pads": None, "value": None}, rank=r)
    if op in ("Gather", "GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND"):
        if r == 0:
            shape, r = [3], 1
        x = data(rng, dt, shape)
        axis = int(rng.integers(-r, r))
        d = shape[axis]
        idt = I64 if rng.random() < 0.7 else np.int32
        if op == "Gather":
            idx = rng.integers(-d, d, random_shape_small(rng)) if d else np.zeros([0], I64)
            return Plan([("data", x, False), ("indices", idx.astype(idt), rng.random() < 0.5)],
                        {"axis": axis}, rank=r)
        if op == "GatherND":
            k = int(rng.integers(1, r + 1))
            lead = random_shape_small(rng)
            idx = np.stack([rng.integers(0, max(shape[j], 1), lead) for j in range(k)], -1)
            return Plan([("data", x, False), ("indices", idx.astype(I64), True)], {"batch_dims": None})
        if op == "ScatterND":
            k = int(rng.integers(1, r + 1))
            lead = [int(rng.integers(1, 3))]
            idx = np.stack([rng.integers(0, max(shape[j], 1), lead) for j in range(k)], -1)
            upd = data(rng, dt, lead + shape[k:])
            return Plan([("data", x, False), ("indices", idx.astype(I64), True), ("updates", upd, False)],
                        {"reduction": None})
        ishape = [int(rng.integers(0, s + 1)) for s in shape]
        idx = rng.integers(-d, max(d, 1), ishape) if d else np.zeros(ishape, I64)
        ins = [("data", x, False), ("indices", idx.astype(idt), True)]
        if op != "GatherElements":
            ins.append(("updates", data(rng, dt, ishape), False))
        return Plan(ins, {"axis": axis, "reduction": None}, rank=r)
    if op == "Split":
        if r == 0:
            shape, r = [5], 1
        axis = int(rng.integers(-r, r))
        d = shape[axis]
        n = int(rng.integers(1, 4))
        cuts = sorted(rng.integers(0, d + 1, n - 1).tolist())
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [d])]
        ins = [("input", data(rng, dt, shape), False)]
        attrs = {"axis": axis, "split": None, "num_outputs": None}
        if rng.random() < 0.6:
            if opset >= 13:
                ins.append(("split", np.array(sizes, I64), True))
            else:
                attrs["split"] = sizes
        elif d % n:
            n = 1
        return Plan(ins, attrs, outputs=n, rank=r)
    if op == "TopK":
        if r == 0:
            shape, r = [4], 1
        axis = int(rng.integers(-r, r))
        k = int(rng.integers(0, shape[axis] + 1))
        x = data(rng, dt, shape)
        if opset >= 10:
            return Plan([("X", x, False), ("K", np.array([k], I64), True)], {"axis": axis}, 2, r)
        return Plan([("X", x, False)], {"axis": axis, "k": k}, 2, r)
    if op in ("MatMul", "MatMulInteger", "QLinearMatMul", "Gemm"):
        m, k, n = [int(rng.choice([0, 1, 2, 3, 5])) for _ in range(3)]
        if op == "Gemm":
            ta, tb = int(rng.integers(0, 2)), int(rng.integers(0, 2))
            a = data(rng, dt, [k, m] if ta else [m, k])
            b = data(rng, dt, [n, k] if tb else [k, n], edge=False)
            ins = [("A", a, False), ("B", b, rng.random() < 0.6)]
            if rng.random() < 0.6:
                ins.append(("C", data(rng, dt, [[n], [m, n], [1], []][int(rng.integers(0, 4))]), True))
            return Plan(ins, {"transA": ta, "transB": tb}, rank=2)
        batch = [int(rng.choice([1, 2]))] if rng.random() < 0.3 else []
        if op == "MatMul":
            a = data(rng, dt, batch + [m, k])
            b = data(rng, dt, [k, n] if rng.random() < 0.7 else [k], edge=False)
            return Plan([("A", a, False), ("B", b, rng.random() < 0.5)])
        at = np.uint8 if rng.random() < 0.6 else np.int8
        bt = np.uint8 if rng.random() < 0.5 else np.int8
        a, b = data(rng, at, batch + [m, k]), data(rng, bt, [k, n])
        if op == "MatMulInteger":
            ins = [("A", a, False), ("B", b, True)]
            if rng.random() < 0.5:
                ins += [("a_zero_point", np.array(1, at), True), ("b_zero_point", np.array(2, bt), True)]
            return Plan(ins)
        return Plan([("a", a, False), ("a_scale", np.array(0.1, F32), True),
                     ("a_zero_point", np.array(3, at), True), ("b", b, True),
                     ("b_scale", np.array(0.05, F32), True), ("b_zero_point", np.array(1, bt), True),
                     ("y_scale", np.array(0.3, F32), True), ("y_zero_point", np.array(4, at), True)])
    if op == "com.microsoft::MatMulNBits":
        k = int(rng.choice([16, 32, 48]))
        n = int(rng.integers(1, 5))
        bs = int(rng.choice([16, 32]))
        bits = int(rng.choice([4, 8]))
        nb = (k + bs - 1) // bs
        blob = bs * bits // 8
        ins = [("A", data(rng, F32, [int(rng.integers(1, 4)), k], edge=False), False),
               ("B", rng.integers(0, 256, [n, nb, blob]).astype(np.uint8), True),
               ("scales", (rng.random(n * nb) * 0.1).astype(F32), True)]
        if rng.random() < 0.5:
            ins.append(("zero_points", rng.integers(0, 256, [n, (nb * bits + 7) // 8]).astype(np.uint8), True))
        return Plan(ins, {"K": k, "N": n, "bits": bits, "block_size": bs, "accuracy_level": None})
    if op in ("BatchNormalization", "InstanceNormalization", "GroupNormalization",
              "LayerNormalization", "LRN", "MeanVarianceNormalization"):
        if r < 2:
            shape = [int(rng.integers(1, 3)), 3] + shape
            r = len(shape)
        c = shape[1]
        x = data(rng, dt, shape)
        if op == "BatchNormalization":
            v = (rng.random(c) + 0.1).astype(dt)
            ins = [("X", x, False)] + [(n, data(rng, dt, [c], edge=False), True)
                                       for n in ("scale", "B", "input_mean")] + [("input_var", v, True)]
            return Plan(ins, {"spatial": None, "consumed_inputs": None, "training_mode": None}, rank=r)
        if op == "InstanceNormalization":
            return Plan([("input", x, False), ("scale", data(rng, dt, [c], edge=False), True),
                         ("B", data(rng, dt, [c], edge=False), True)], rank=r)
        if op == "GroupNormalization":
            g = int(rng.choice([d for d in (1, 3) if c % d == 0]))
            return Plan([("X", x, False), ("scale", data(rng, dt, [g], edge=False), True),
                         ("bias", data(rng, dt, [g], edge=False), True)], {"num_groups": g}, rank=r)
        if op == "LayerNormalization":
            axis = int(rng.integers(-r, r))
            ns = shape[axis:] if axis >= 0 else shape[r + axis:]
            ins = [("X", x, False), ("Scale", data(rng, dt, ns, edge=False), True)]
            if rng.random() < 0.5:
                ins.append(("B", data(rng, dt, ns, edge=False), True))
            return Plan(ins, {"axis": axis}, outputs=1, rank=r)
        if op == "LRN":
            return Plan([("X", x, False)], {"size": int(rng.choice([1, 3, 5]))}, rank=r)
        return Plan([("X", x, False)], {"axes": None if rng.random() < 0.5 else axes_of(rng, r)}, rank=r)
    if op in ("Resize", "Upsample"):
        if r == 0:
            shape, r = [1, 1, 3, 3], 4
        x = data(rng, dt, shape)
        scales = [1.0] * max(r - 2, 0) + [float(rng.choice([0.5, 1.0, 1.5, 2.0, 3.0]))
                                          for _ in range(min(r, 2))]
        scales = scales[-r:]
        if op == "Upsample":
            if opset >= 9:
                return Plan([("X", x, False), ("scales", np.array(scales, F32), True)], rank=r)
            return Plan([("X", x, False)], {"scales": scales}, rank=r)
        if opset < 11:
            return Plan([("X", x, False), ("scales", np.array(scales, F32), True)], rank=r)
        roi = None if rng.random() < 0.7 else ("roi", np.array([0] * r + [1] * r, F32), True)
        if rng.random() < 0.5:
            return Plan([("X", x, False), roi or ("roi", np.zeros([0], F32), True),
                         ("scales", np.array(scales, F32), True)], rank=r)
        sizes = [int(max(0, round(d * s))) for d, s in zip(shape, scales)]
        return Plan([("X", x, False), roi or ("roi", np.zeros([0], F32), True),
                     ("scales", np.zeros([0], F32), True) if opset < 13 or rng.random() < 0.5 else None,
                     ("sizes", np.array(sizes, I64), True)], rank=r)
    if op == "OneHot":
        depth = int(rng.integers(0, 6))
        idx = rng.integers(-depth - 1, depth + 1, shape).astype(bind.get("T1") or I64) \
            if np.dtype(bind.get("T1") or I64).kind != "f" else rng.integers(0, 5, shape).astype(bind["T1"])
        return Plan([("indices", idx, False), ("depth", np.array([depth]).astype(bind.get("T2") or I64), True),
                     ("values", np.array([0, 1]).astype(bind.get("T3") or F32), True)], rank=r + 1)
    if op == "Range":
        t = bind.get("T") or F32
        st, lim, de = (rng.integers(-5, 6) for _ in range(3))
        return Plan([("start", np.array(st).astype(t), False), ("limit", np.array(lim).astype(t), True),
                     ("delta", np.array(de if de else 1).astype(t), True)])
    if op == "Constant":
        v = data(rng, dt, shape)
        return Plan([], {"value": numpy_helper.from_array(v, "value"), "sparse_value": None,
                         "value_float": None, "value_floats": None, "value_int": None,
                         "value_ints": None, "value_string": None, "value_strings": None})
    if op == "EyeLike":
        return Plan([("input", data(rng, bind.get("T1") or F32, random_shape_exact(rng, 2)), False)],
                    {"k": int(rng.integers(-3, 4)), "dtype": None})
    if op == "Trilu":
        s = shape if r >= 2 else [3, 4]
        ins = [("input", data(rng, dt, s), False)]
        if rng.random() < 0.6:
            ins.append(("k", np.array(int(rng.integers(-4, 5)), I64), True))
        return Plan(ins, rank=len(s))
    if op == "CumSum":
        if r == 0:
            shape, r = [4], 1
        return Plan([("x", data(rng, dt, shape), False),
                     ("axis", np.array(int(rng.integers(-r, r)), I64), True)], rank=r)
    if op == "Compress":
        if r == 0:
            shape, r = [4], 1
        axis = int(rng.integers(-r, r)) if rng.random() < 0.7 else None
        n = shape[axis] if axis is not None else int(np.prod(shape))
        cond = rng.random(int(rng.integers(0, n + 1))) < 0.5
        return Plan([("input", data(rng, dt, shape), False), ("condition", cond, True)],
                    {"axis": axis}, rank=r)
    if op in ("DepthToSpace", "SpaceToDepth"):
        b = int(rng.integers(1, 3))
        c = (b * b if op == "DepthToSpace" else 1) * int(rng.integers(1, 3))
        hw = [int(rng.integers(1, 3)) * (b if op == "SpaceToDepth" else 1) for _ in range(2)]
        return Plan([("input", data(rng, dt, [1, c] + hw), False)], {"blocksize": b}, rank=4)
    if op in ("QuantizeLinear", "DequantizeLinear"):
        q = np.uint8 if rng.random() < 0.6 else np.int8
        per_axis = r > 0 and opset >= 13 and rng.random() < 0.4
        axis = int(rng.integers(-r, r)) if per_axis else None
        sshape = [shape[axis]] if per_axis else []
        scale = (rng.random(sshape) * 0.5 + 0.01).astype(F32)
        zp = rng.integers(0, 10, sshape).astype(q)
        x = data(rng, F32 if op == "QuantizeLinear" else q, shape)
        ins = [("x", x, False), ("y_scale" if op == "QuantizeLinear" else "x_scale", scale, True)]
        if rng.random() < 0.7:
            ins.append(("zero_point", zp, True))
        return Plan(ins, {"axis": axis, "saturate": None}, rank=r)
    if op == "DynamicQuantizeLinear":
        return Plan([("x", data(rng, F32, shape), False)], outputs=3)
    if op == "NonMaxSuppression":
        b, c, n = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(0, 6))
        boxes = rng.random([b, n, 4]).astype(F32)
        ins = [("boxes", boxes, False), ("scores", rng.random([b, c, n]).astype(F32), False)]
        if rng.random() < 0.8:
            ins += [("max_output_boxes_per_class", np.array([int(rng.integers(0, 4))], I64), True),
                    ("iou_threshold", np.array([0.5], F32), True),
                    ("score_threshold", np.array([float(rng.random() * 0.5)], F32), True)]
        return Plan(ins)
    if op == "RoiAlign":
        x = data(rng, dt, [1, 2, 5, 5], edge=False)
        n = int(rng.integers(0, 4))
        rois = (rng.random([n, 4]) * 4).astype(dt)
        rois[:, 2:] += rois[:, :2]
        return Plan([("X", x, False), ("rois", rois, False), ("batch_indices", np.zeros(n, I64), True)],
                    {"output_height": int(rng.integers(1, 4)), "output_width": int(rng.integers(1, 4)),
                     "sampling_ratio": int(rng.integers(0, 3))}, rank=4)
    if op == "GridSample":
        x = data(rng, dt, [1, 2, 3, 4], edge=False)
        grid = (rng.random([1, 2, 3, 2]) * 2.4 - 1.2).astype(dt)
        return Plan([("X", x, False), ("grid", grid, False)], {"mode": ["bilinear", "nearest", "bicubic"][
            int(rng.integers(0, 3))]}, rank=4)
    if op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        return Plan([("size", np.array(int(rng.integers(0, 8))).astype(bind.get("T1") or I64), True)],
                    {"output_datatype": int(rng.choice([TensorProto.FLOAT, TensorProto.DOUBLE]))})
    if op == "MelWeightMatrix":
        t = bind.get("T1") or I64
        return Plan([("num_mel_bins", np.array(int(rng.integers(1, 5))).astype(t), True),
                     ("dft_length", np.array(int(rng.choice([4, 8, 16]))).astype(t), True),
                     ("sample_rate", np.array(8000).astype(t), True),
                     ("lower_edge_hertz", np.array(0.0).astype(bind.get("T2") or F32), True),
                     ("upper_edge_hertz", np.array(4000.0).astype(bind.get("T2") or F32), True)])
    if op == "DFT":
        n = int(rng.integers(1, 7))
        x = data(rng, dt, [1, n, int(rng.choice([1, 2]))], edge=False)
        return Plan([("input", x, False)], {"axis": 1, "onesided": int(rng.integers(0, 2)) if x.shape[2] == 1 else 0})
    if op == "STFT":
        sig = data(rng, dt, [1, 16, 1], edge=False)
        ins = [("signal", sig, False), ("frame_step", np.array(int(rng.integers(1, 5)), I64), True)]
        w = int(rng.choice([4, 8]))
        ins.append(("window", np.hanning(w).astype(dt), True) if rng.random() < 0.5 else None)
        ins.append(("frame_length", np.array(w, I64), True))
        return Plan(ins, {"onesided": int(rng.integers(0, 2))})
    if op == "TfIdfVectorizer":
        x = rng.integers(0, 6, [int(rng.integers(1, 3)), int(rng.integers(1, 7))]).astype(I64)
        return Plan([("X", x, False)], {"mode": ["TF", "IDF", "TFIDF"][int(rng.integers(0, 3))],
                                       "min_gram_length": 1, "max_gram_length": 2, "max_skip_count": int(rng.integers(0, 2)),
                                       "ngram_counts": [0, 3], "ngram_indexes": [0, 1, 2, 3, 4],
                                       "pool_int64s": [1, 2, 3, 1, 2, 2, 3], "weights": None,
                                       "pool_strings": None})
    if op == "Det":
        n = int(rng.integers(0, 4))
        return Plan([("X", data(rng, dt, random_shape_small(rng)[:1] + [n, n], edge=False), False)])
    if op == "NegativeLogLikelihoodLoss":
        n, c = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        ins = [("input", data(rng, dt, [n, c], edge=False), False),
               ("target", rng.integers(0, c, [n]).astype(bind.get("Tind") or I64), True)]
        if rng.random() < 0.4:
            ins.append(("weight", data(rng, dt, [c], edge=False), True))
        return Plan(ins, {"reduction": ["none", "sum", "mean"][int(rng.integers(0, 3))],
                          "ignore_index": None if rng.random() < 0.7 else 0})
    if op == "SoftmaxCrossEntropyLoss":
        n, c = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        ins = [("scores", data(rng, dt, [n, c], edge=False), False),
               ("labels", rng.integers(0, c, [n]).astype(bind.get("Tind") or I64), True)]
        return Plan(ins, {"reduction": ["none", "sum", "mean"][int(rng.integers(0, 3))],
                          "ignore_index": None}, outputs=int(rng.integers(1, 3)))
    if op == "MaxUnpool":
        x = data(rng, dt, [1, 1, 2, 2], edge=False)
        idx = rng.permutation(16)[:4].reshape(1, 1, 2, 2).astype(I64)
        return Plan([("X", x, False), ("I", idx, True)], {"kernel_shape": [2, 2], "strides": [2, 2],
                                                        "pads": None})
    if op == "Unique":
        x = rng.integers(-2, 3, shape).astype(dt) if np.dtype(dt).kind != "b" else data(rng, dt, shape)
        axis = int(rng.integers(-r, r)) if r and rng.random() < 0.4 else None
        return Plan([("X", x, False)], {"axis": axis}, outputs=int(rng.integers(1, 5)), rank=r)
    if op == "ReverseSequence":
        b, t = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        x = data(rng, dt, [t, b, 2])
        return Plan([("input", x, False), ("sequence_lens", rng.integers(0, t + 1, b).astype(I64), True)],
                    {"time_axis": 0, "batch_axis": 1})
    if op == "BitShift":
        x = data(rng, dt, shape)
        return Plan([("X", x, False), ("Y", rng.integers(0, 9, shape).astype(dt), False)],
                    {"direction": ["LEFT", "RIGHT"][int(rng.integers(0, 2))]})
    if op == "Mod":
        fm = 1 if np.dtype(dt).kind == "f" else int(rng.integers(0, 2))
        return Plan([("A", data(rng, dt, shape), False), ("B", data(rng, dt, gen.broadcast_variant(rng, shape)), False)],
                    {"fmod": fm})
    if op == "Shape":
        return Plan([("data", data(rng, dt, shape), False)],
                    {"start": int(rng.integers(-r - 1, r + 2)) if opset >= 15 and rng.random() < 0.5 else None,
                     "end": int(rng.integers(-r - 1, r + 2)) if opset >= 15 and rng.random() < 0.5 else None})
    if op == "Clip" and opset >= 11:
        ins = [("input", data(rng, dt, shape), False)]
        for n in ("min", "max"):
            ins.append((n, np.array(rng.integers(-3, 4)).astype(dt), True) if rng.random() < 0.6 else None)
        return Plan(ins)
    if op == "Dropout" and opset >= 12:
        ins = [("data", data(rng, dt, shape), False)]
        if rng.random() < 0.5:
            ins.append(("ratio", np.array(0.5, bind.get("T1") or F32), True))
        return Plan(ins, {"seed": None}, outputs=int(rng.integers(1, 3)))
    if op == "Cast" or op == "CastLike":
        x = data(rng, bind.get("T1") or F32, shape)
        if op == "CastLike":
            return Plan([("input", x, False), ("target_type", data(rng, bind.get("T2") or F32, [1]), True)],
                        {"saturate": None})
        return Plan([("input", x, False)], {"saturate": None})
    if op == "Where":
        return Plan([("condition", rng.random(gen.broadcast_variant(rng, shape)) < 0.5, False),
                     ("X", data(rng, dt, shape), False), ("Y", data(rng, dt, gen.broadcast_variant(rng, shape)), False)])
    if op == "Flatten":
        return Plan([("input", data(rng, dt, shape), False)], {"axis": int(rng.integers(-r, r + 1)) if r else 0}, rank=r)
    if op == "Transpose":
        return Plan([("data", data(rng, dt, shape), False)],
                    {"perm": [int(a) for a in rng.permutation(r)] if rng.random() < 0.7 else None}, rank=r)
    if op == "Concat":
        if r == 0:
            shape, r = [2], 1
        axis = int(rng.integers(-r, r))
        ins = []
        for _ in range(int(rng.integers(1, 4))):
            s = list(shape)
            s[axis] = int(rng.choice(gen.DIMS))
            ins.append(("inputs", data(rng, dt, s), False))
        return Plan(ins, {"axis": axis}, rank=r)
    if op == "Size":
        return Plan([("data", data(rng, dt, shape), False)])
    if op == "Slice":  # opset < 10: attributes
        axes = axes_of(rng, r)
        return Plan([("data", data(rng, dt, shape), False)],
                    {"axes": axes, "starts": [int(rng.integers(0, 3)) for _ in axes],
                     "ends": [int(rng.integers(-1, 4)) for _ in axes]}, rank=r)
    if op == "PRelu":
        return Plan([("X", data(rng, dt, shape), False),
                     ("slope", data(rng, dt, gen.broadcast_variant(rng, shape), edge=False), True)])
    return None


def random_shape_small(rng):
    return [int(rng.choice([0, 1, 2, 3])) for _ in range(int(rng.integers(0, 3)))]


def random_shape_exact(rng, rank):
    return [int(rng.choice(gen.DIMS[:5])) for _ in range(rank)]
