#!/usr/bin/env python3
"""The attention family (com.microsoft RotaryEmbedding, GroupQueryAttention,
MultiHeadAttention and Attention; ONNX opset 23 RotaryEmbedding and Attention;
ONNX opset 24 Attention with and without nonpad_kv_seqlen, Swish and TensorScatter):
`onnx-prepack run` agrees with ONNX Runtime.

Opset-24 models are written with helper.make_model and opset_import 24 set by
hand; python3-onnx 1.12 knows opsets up to 17, so onnx.checker is never run on
them (nor on the other cases).

Builds one small model per case with python3-onnx. A GroupQueryAttention case
is a chain of nodes in one model: a prompt, then decode steps whose past is the
previous node's present (both runtimes feed their own present back), with every
output (output, present_key, present_value of each step) compared:
|ours - ort| <= 1e-5 + 1e-4 |ort| (float16: 2e-3 + 2e-3 |ort|). The rows that
ONNX Runtime leaves undefined (the outputs of right-padded prompt tokens) are
masked out of the comparison; see docs/llm.md.

usage: attention_vs_ort.py ONNX_PREPACK SOURCE_DIR [--filter SUBSTRING] [--keep DIR]
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
F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


class Case:
    def __init__(self, name, nodes, feeds, outputs, opset=23, consts=(), masks=None,
                 out_type=TensorProto.FLOAT):
        self.name, self.nodes, self.feeds, self.outputs = name, nodes, feeds, outputs
        self.out_type = out_type
        self.opset, self.consts = opset, consts
        self.masks = masks or {}  # output name -> bool array (True: compared)


def elem_type(a):
    return helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(
        helper, "np_dtype_to_tensor_dtype") else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]


def save(case, path):
    inputs = [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in case.feeds.items()]
    inits = [numpy_helper.from_array(a, n) for n, a in case.consts]
    outs = [helper.make_tensor_value_info(o, case.out_type, None) for o in case.outputs]
    g = helper.make_graph(case.nodes, case.name, inputs, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", case.opset),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    onnx.save(m, path)


def caches(rows, half, base=10000.0):
    inv = 1.0 / base ** (np.arange(half, dtype=np.float64) / half)
    ang = np.arange(rows, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


# ---- RotaryEmbedding ----

def rotary_cases():
    cos, sin = caches(64, 8)
    # com.microsoft: (input, position_ids, cos_cache, sin_cache)
    ms = [
        # name, input shape, position ids, attrs, cache half
        ("3d_ids", (2, 5, 4 * 16), RNG.integers(0, 60, (2, 5)), {}, 8),
        ("3d_offset_interleaved", (2, 5, 3 * 16), np.array([7]), {"interleaved": 1}, 8),
        ("3d_scalar_offset", (1, 4, 2 * 16), np.array(3), {}, 8),
        ("4d_bnsh", (2, 3, 5, 16), RNG.integers(0, 60, (2, 5)), {}, 8),
        ("4d_bnsh_interleaved", (1, 2, 6, 16), np.array([2]), {"interleaved": 1}, 8),
        ("3d_partial", (2, 4, 4 * 32), RNG.integers(0, 60, (2, 4)),
         {"num_heads": 4, "rotary_embedding_dim": 16}, 8),
        ("3d_partial_interleaved", (1, 4, 2 * 40), RNG.integers(0, 60, (1, 4)),
         {"num_heads": 2, "rotary_embedding_dim": 16, "interleaved": 1}, 8),
        ("3d_num_heads_full", (2, 3, 2 * 16), RNG.integers(0, 60, (2, 3)), {"num_heads": 2}, 8),
        ("4d_partial", (1, 2, 3, 40), RNG.integers(0, 60, (1, 3)),
         {"num_heads": 2, "rotary_embedding_dim": 16}, 8),
    ]
    for name, shape, ids, attrs, half in ms:
        c, s = caches(64, half)
        feeds = {"X": f32(*shape), "P": ids.astype(np.int64), "C": c, "S": s}
        n = helper.make_node("RotaryEmbedding", ["X", "P", "C", "S"], ["Y"], domain="com.microsoft",
                             **attrs)
        yield Case(f"rotary_ms_{name}", [n], feeds, ["Y"])
        if name in ("3d_ids", "4d_bnsh_interleaved", "3d_partial"):  # float16 too
            f16 = {k: (a.astype(np.float16) if a.dtype == np.float32 else a) for k, a in feeds.items()}
            yield Case(f"rotary_ms_f16_{name}", [n], f16, ["Y"], out_type=TensorProto.FLOAT16)
    # ONNX opset 23: (X, cos_cache, sin_cache, position_ids?)
    onnx23 = [
        ("3d_ids", (2, 5, 4 * 16), (2, 5), {"num_heads": 4}),
        ("3d_ids_interleaved", (2, 5, 2 * 16), (2, 5), {"num_heads": 2, "interleaved": 1}),
        ("4d_ids", (2, 3, 5, 16), (2, 5), {}),
        ("4d_partial", (1, 2, 4, 32), (1, 4), {"rotary_embedding_dim": 16}),
        ("3d_partial_interleaved", (2, 3, 2 * 40), (2, 3),
         {"num_heads": 2, "rotary_embedding_dim": 16, "interleaved": 1}),
        ("3d_no_ids", (2, 5, 4 * 16), None, {"num_heads": 4}),
        ("4d_no_ids_interleaved", (2, 3, 5, 16), None, {"interleaved": 1}),
    ]
    for name, shape, ids_shape, attrs in onnx23:
        rot = attrs.get("rotary_embedding_dim", shape[-1] if len(shape) == 4 else
                        shape[-1] // attrs["num_heads"])
        if ids_shape is None:
            b, s_ = shape[0], shape[2] if len(shape) == 4 else shape[1]
            pos = RNG.integers(0, 60, (b, s_))
            c, s = caches(64, rot // 2)
            feeds = {"X": f32(*shape), "C": c[pos], "S": s[pos]}
            ins = ["X", "C", "S"]
        else:
            c, s = caches(64, rot // 2)
            feeds = {"X": f32(*shape), "C": c, "S": s,
                     "P": RNG.integers(0, 64, ids_shape).astype(np.int64)}
            ins = ["X", "C", "S", "P"]
        n = helper.make_node("RotaryEmbedding", ins, ["Y"], **attrs)
        yield Case(f"rotary23_{name}", [n], feeds, ["Y"])


# ---- GroupQueryAttention ----

def gqa_chain(name, B, N, Nkv, H, steps, packed=False, rotary=None, attrs=None, shared_len=0,
              prompt_valid=None, consts_total=False, half=False, extra=()):
    """steps: list of (S, seqlens_k list, total); rotary: None, (half, interleaved)."""
    attrs = dict(attrs or {})
    attrs.update(num_heads=N, kv_num_heads=Nkv)
    feeds, nodes, outputs, masks = {}, [], [], {}
    consts = []
    if rotary is not None:
        rot_half, inter = rotary
        c, s = caches(128, rot_half)
        feeds["cos"], feeds["sin"] = c, s
        attrs.update(do_rotary=1, rotary_interleaved=int(inter))
    past = None
    if shared_len:
        feeds["past_k0"] = np.zeros((B, Nkv, shared_len, H), np.float32)
        feeds["past_v0"] = np.zeros((B, Nkv, shared_len, H), np.float32)
        past = ("past_k0", "past_v0")
    for i, (S, seqlens, total) in enumerate(steps):
        if packed:
            feeds[f"q{i}"] = f32(B, S, (N + 2 * Nkv) * H)
            ins = [f"q{i}", "", ""]
        else:
            feeds[f"q{i}"] = f32(B, S, N * H)
            feeds[f"k{i}"] = f32(B, S, Nkv * H)
            feeds[f"v{i}"] = f32(B, S, Nkv * H)
            ins = [f"q{i}", f"k{i}", f"v{i}"]
        ins += list(past) if past else ["", ""]
        feeds[f"seqlens{i}"] = np.array(seqlens, np.int32)
        tot = np.array(total, np.int32)
        if consts_total:
            consts.append((f"total{i}", tot))
        else:
            feeds[f"total{i}"] = tot
        ins += [f"seqlens{i}", f"total{i}"]
        if rotary is not None:
            ins += ["cos", "sin"]
        if extra:  # inputs 9-11 of newer ONNX Runtime
            ins += [""] * (9 - len(ins)) if rotary is not None else ["", ""]
            if "ids" in extra:
                feeds[f"ids{i}"] = RNG.integers(0, 100, (B, S)).astype(np.int64)
            ins.append(f"ids{i}" if "ids" in extra else "")
            if "bias" in extra:
                feeds[f"ab{i}"] = f32(B, N, S, total)
            ins.append(f"ab{i}" if "bias" in extra else "")
            if "sink" in extra:
                feeds["sink"] = f32(N)
            ins.append("sink" if "sink" in extra else "")
            while ins[-1] == "":
                ins.pop()
        outs = [f"out{i}", f"pk{i}", f"pv{i}"]
        nodes.append(helper.make_node("GroupQueryAttention", ins, outs, domain="com.microsoft",
                                      name=f"gqa{i}", **attrs))
        outputs += outs
        if i == 0 and S == total:  # the first prompt: padded rows' outputs are undefined in ORT
            mo = np.ones((B, S, N * H), bool)
            for b, sk in enumerate(seqlens):
                mo[b, sk + 1:, :] = False
            masks[f"out{i}"] = mo
        past = (f"pk{i}", f"pv{i}")
    if half:  # every float tensor as float16
        feeds = {n: (a.astype(np.float16) if a.dtype == np.float32 else a) for n, a in feeds.items()}
    return Case(f"gqa_{name}", nodes, feeds, outputs, consts=consts, masks=masks,
                out_type=TensorProto.FLOAT16 if half else TensorProto.FLOAT)


def decode_steps(B, prompt, valid, n, shared=False):
    """A prompt of `prompt` tokens (valid[b] of them real), then n decode steps."""
    steps = [(prompt, [v - 1 for v in valid], prompt)]
    cur = list(valid)
    for _ in range(n):
        cur = [c + 1 for c in cur]
        steps.append((1, [c - 1 for c in cur], max(cur)))
    return steps


def gqa_cases():
    yield gqa_chain("sep_h64_decode", 1, 4, 2, 64, decode_steps(1, 6, [6], 3))
    yield gqa_chain("sep_h16_mha", 1, 2, 2, 16, decode_steps(1, 5, [5], 2))
    yield gqa_chain("sep_h40_kv1", 1, 4, 1, 40, decode_steps(1, 7, [7], 3))
    yield gqa_chain("packed_h64", 1, 4, 2, 64, decode_steps(1, 6, [6], 3), packed=True)
    yield gqa_chain("packed_h16_kv1", 2, 4, 1, 16, decode_steps(2, 5, [5, 5], 2), packed=True)
    yield gqa_chain("rotary_h64", 1, 4, 2, 64, decode_steps(1, 6, [6], 3), rotary=(32, False))
    yield gqa_chain("rotary_interleaved_h64", 1, 4, 2, 64, decode_steps(1, 6, [6], 3),
                    rotary=(32, True))
    yield gqa_chain("rotary_partial_h64", 1, 2, 1, 64, decode_steps(1, 5, [5], 2),
                    rotary=(16, False))
    yield gqa_chain("rotary_packed_h16", 1, 4, 2, 16, decode_steps(1, 5, [5], 3), packed=True,
                    rotary=(8, True))
    yield gqa_chain("rotary_packed_h32_nonint", 2, 2, 1, 32, decode_steps(2, 4, [4, 4], 2),
                    packed=True, rotary=(16, False))
    yield gqa_chain("local_window", 1, 4, 2, 16, decode_steps(1, 9, [9], 4),
                    attrs={"local_window_size": 3})
    yield gqa_chain("local_window_rotary_packed", 1, 4, 2, 16, decode_steps(1, 8, [8], 3),
                    packed=True, rotary=(8, False), attrs={"local_window_size": 4})
    yield gqa_chain("softcap", 1, 4, 2, 16, decode_steps(1, 6, [6], 2), attrs={"softcap": 1.5})
    yield gqa_chain("softcap_scale", 1, 4, 2, 64, decode_steps(1, 6, [6], 2),
                    attrs={"softcap": 20.0, "scale": 0.3})
    yield gqa_chain("smooth_softmax", 1, 4, 2, 16, decode_steps(1, 6, [6], 2),
                    attrs={"smooth_softmax": 1})
    yield gqa_chain("smooth_softcap_window", 1, 4, 1, 16, decode_steps(1, 7, [7], 3),
                    attrs={"smooth_softmax": 1, "softcap": 3.0, "local_window_size": 2})
    yield gqa_chain("scale", 1, 2, 1, 40, decode_steps(1, 4, [4], 2), attrs={"scale": 0.05})
    yield gqa_chain("batch2_padding", 2, 4, 2, 16, decode_steps(2, 7, [7, 4], 3))
    yield gqa_chain("batch2_padding_rotary_packed", 2, 4, 2, 64, decode_steps(2, 6, [6, 3], 3),
                    packed=True, rotary=(32, False))
    yield gqa_chain("shared64_total20", 1, 4, 2, 64, decode_steps(1, 20, [20], 3), shared_len=64)
    yield gqa_chain("shared64_batch2_rotary", 2, 4, 2, 16, decode_steps(2, 20, [20, 13], 3),
                    rotary=(8, True), shared_len=64)
    yield gqa_chain("shared64_packed_window", 2, 4, 1, 40, decode_steps(2, 20, [17, 20], 2),
                    packed=True, shared_len=64, attrs={"local_window_size": 5})
    # A later prompt (batch 1): 3 new tokens after a prompt of 5.
    yield gqa_chain("subsequent_prompt", 1, 4, 2, 16, [(5, [4], 5), (3, [7], 8), (1, [8], 9)])
    yield gqa_chain("subsequent_prompt_rotary_shared", 1, 4, 2, 16,
                    [(5, [4], 5), (3, [7], 8), (1, [8], 9)], rotary=(8, False), shared_len=32)
    yield gqa_chain("total_as_constant", 1, 4, 2, 16, decode_steps(1, 5, [5], 2), consts_total=True)
    # Prompts longer than a block of 64 query rows.
    yield gqa_chain("long_prompt_rotary_window", 1, 2, 1, 16, decode_steps(1, 100, [100], 2),
                    rotary=(8, False), attrs={"local_window_size": 70})
    yield gqa_chain("long_prompt_batch2_shared", 2, 2, 2, 32, decode_steps(2, 130, [130, 77], 1),
                    shared_len=160, packed=True)
    # Inputs 9-11 of newer ONNX Runtime: position_ids, attention_bias, head_sink.
    yield gqa_chain("position_ids", 1, 4, 2, 16, decode_steps(1, 5, [5], 2), rotary=(8, False),
                    extra=("ids",))
    yield gqa_chain("attention_bias", 1, 4, 2, 16, decode_steps(1, 5, [5], 2), extra=("bias",))
    yield gqa_chain("attention_bias_softcap", 1, 4, 2, 16, decode_steps(1, 5, [5], 2),
                    attrs={"softcap": 2.0}, extra=("bias",))
    yield gqa_chain("head_sink", 1, 4, 2, 16, decode_steps(1, 6, [6], 2), extra=("sink",))
    yield gqa_chain("head_sink_window_rotary", 2, 4, 1, 16, decode_steps(2, 6, [6, 6], 2),
                    rotary=(8, True), attrs={"local_window_size": 3}, extra=("sink", "ids"))
    # float16 (compared within 2e-3 + 2e-3 |ort|: float16's resolution)
    yield gqa_chain("f16_sep", 1, 4, 2, 64, decode_steps(1, 6, [6], 3), half=True)
    yield gqa_chain("f16_packed_rotary_batch2", 2, 4, 2, 16, decode_steps(2, 7, [7, 4], 3),
                    packed=True, rotary=(8, False), half=True)
    yield gqa_chain("f16_shared64_rotary_interleaved", 1, 4, 1, 32, decode_steps(1, 20, [20], 2),
                    rotary=(16, True), shared_len=64, half=True)


# ---- ONNX Attention (opset 23) ----

def attention23_cases():
    B = 2
    specs = [
        # name, 4-D?, Nq, Nkv, S, L, P, H, Hv, mask (None, "bool", "float", shape), attrs
        ("4d_mha", True, 4, 4, 5, 5, 0, 16, 16, None, {}),
        ("4d_gqa_causal", True, 4, 2, 6, 6, 0, 16, 16, None, {"is_causal": 1}),
        ("3d_gqa", False, 4, 2, 5, 7, 0, 16, 16, None, {}),
        ("3d_hv_differs", False, 2, 1, 4, 6, 0, 16, 24, None, {}),
        ("4d_past_causal", True, 4, 2, 3, 3, 5, 16, 16, None, {"is_causal": 1}),
        ("4d_past_decode", True, 4, 1, 1, 1, 9, 64, 64, None, {"is_causal": 1}),
        ("3d_past", False, 4, 2, 2, 2, 4, 40, 40, None, {}),
        ("4d_bool_mask", True, 2, 2, 4, 4, 0, 16, 16, ("bool", (B, 1, 4, 4)), {}),
        ("4d_float_mask_2d", True, 2, 2, 4, 6, 0, 16, 16, ("float", (4, 6)), {}),
        ("4d_bool_mask_past", True, 2, 1, 3, 3, 4, 16, 16, ("bool", (1, 1, 3, 7)), {}),
        ("4d_scale_softcap", True, 2, 2, 4, 4, 0, 16, 16, None, {"scale": 0.4, "softcap": 2.0}),
        ("4d_softcap_float_mask", True, 2, 2, 4, 4, 0, 16, 16, ("float", (B, 2, 4, 4)),
         {"softcap": 2.0}),
        ("3d_causal_mask_bool", False, 2, 2, 5, 5, 0, 16, 16, ("bool", (5, 5)), {"is_causal": 1}),
        ("4d_long_causal_past", True, 2, 1, 140, 140, 9, 16, 16, ("float", (140, 149)),
         {"is_causal": 1}),
    ]
    for name, four, nq, nkv, S, L, P, H, Hv, mask, attrs in specs:
        if four:
            feeds = {"Q": f32(B, nq, S, H), "K": f32(B, nkv, L, H), "V": f32(B, nkv, L, Hv)}
        else:
            feeds = {"Q": f32(B, S, nq * H), "K": f32(B, L, nkv * H), "V": f32(B, L, nkv * Hv)}
            attrs = dict(attrs, q_num_heads=nq, kv_num_heads=nkv)
        ins = ["Q", "K", "V"]
        if mask is not None:
            kind, shape = mask
            if kind == "bool":
                m = RNG.random(shape) > 0.3
                m[..., 0] = True  # every row sees a key
                feeds["M"] = m
            else:
                feeds["M"] = (RNG.standard_normal(shape) * 2).astype(np.float32)
            ins.append("M")
        else:
            ins.append("")
        outs = ["Y"]
        if P:
            feeds["PK"] = f32(B, nkv, P, H)
            feeds["PV"] = f32(B, nkv, P, Hv)
            ins += ["PK", "PV"]
            outs += ["present_k", "present_v"]
        while ins and ins[-1] == "":
            ins.pop()
        n = helper.make_node("Attention", ins, outs, **attrs)
        yield Case(f"attention23_{name}", [n], feeds, outs)


# ---- ONNX Attention (opset 24): nonpad_kv_seqlen, Swish, TensorScatter ----

def attention24_cases():
    specs = [
        # name, B, 4-D?, Nq, Nkv, S, T (K / V rows), nonpad (None: absent), mask, attrs, f16
        ("4d_mha_plain", 2, True, 4, 4, 5, 5, None, None, {}, False),
        ("4d_gqa_causal_past", 2, True, 4, 2, 3, 3, None, None, {"is_causal": 1}, False),
        ("4d_mha_nonpad", 2, True, 2, 2, 3, 8, [8, 5], None, {}, False),
        ("4d_gqa_nonpad_causal", 3, True, 4, 2, 4, 8, [4, 8, 6], None, {"is_causal": 1}, False),
        ("4d_gqa_nonpad_causal_short", 2, True, 4, 2, 4, 8, [2, 0], None, {"is_causal": 1},
         False),
        ("4d_mqa_nonpad_decode", 2, True, 8, 1, 1, 16, [9, 16], None, {"is_causal": 1}, False),
        ("3d_gqa_nonpad_causal", 2, False, 6, 2, 3, 7, [5, 3], None, {"is_causal": 1}, False),
        ("3d_gqa41_nonpad", 2, False, 8, 2, 2, 9, [1, 9], None, {}, False),
        ("4d_nonpad_bool_mask", 2, True, 2, 2, 3, 6, [6, 4], ("bool", (2, 1, 3, 6)), {}, False),
        ("4d_nonpad_float_mask_causal", 2, True, 4, 2, 3, 6, [5, 6], ("float", (3, 6)),
         {"is_causal": 1}, False),
        ("4d_nonpad_scale_softcap", 2, True, 2, 1, 4, 8, [7, 3], None,
         {"scale": 0.3, "softcap": 3.0, "is_causal": 1}, False),
        ("4d_nonpad_present", 2, True, 4, 2, 2, 6, [3, 6], None, {"is_causal": 1, "present": 1},
         False),
        ("4d_nonpad_long_causal", 1, True, 2, 1, 70, 80, [75], None, {"is_causal": 1}, False),
        ("f16_4d_gqa_nonpad_causal", 2, True, 4, 2, 3, 8, [6, 3], None, {"is_causal": 1}, True),
        ("f16_3d_mha", 2, False, 2, 2, 4, 4, None, None, {}, True),
    ]
    for name, B, four, nq, nkv, S, T, nonpad, mask, attrs, half in specs:
        attrs = dict(attrs)
        present = attrs.pop("present", 0)
        H = 16
        P = 2 if name == "4d_gqa_causal_past" else 0
        if four:
            feeds = {"Q": f32(B, nq, S, H), "K": f32(B, nkv, T, H), "V": f32(B, nkv, T, H)}
        else:
            feeds = {"Q": f32(B, S, nq * H), "K": f32(B, T, nkv * H), "V": f32(B, T, nkv * H)}
            attrs = dict(attrs, q_num_heads=nq, kv_num_heads=nkv)
        ins, outs = ["Q", "K", "V"], ["Y"]
        if mask is not None:
            kind, shape = mask
            if kind == "bool":
                m = RNG.random(shape) > 0.3
                m[..., 0] = True
                feeds["M"] = m
            else:
                feeds["M"] = (RNG.standard_normal(shape) * 2).astype(np.float32)
            ins.append("M")
        else:
            ins.append("")
        if P:
            feeds["PK"], feeds["PV"] = f32(B, nkv, P, H), f32(B, nkv, P, H)
            ins += ["PK", "PV"]
            outs += ["present_k", "present_v"]
        else:
            ins += ["", ""]
        if present:
            outs += ["present_k", "present_v"]
        if nonpad is not None:
            feeds["NP"] = np.array(nonpad, np.int64)
            ins.append("NP")
        while ins and ins[-1] == "":
            ins.pop()
        if half:
            feeds = {k: (a.astype(np.float16) if a.dtype == np.float32 else a)
                     for k, a in feeds.items()}
        n = helper.make_node("Attention", ins, outs, **attrs)
        yield Case(f"attention24_{name}", [n], feeds, outs, opset=24,
                   out_type=TensorProto.FLOAT16 if half else TensorProto.FLOAT)
    # Swish (new at 24)
    for name, alpha, half in [("swish", None, False), ("swish_alpha", 0.6, False),
                              ("swish_f16", 1.7, True)]:
        x = (f32(3, 5, 7) * 6)
        x[0, 0, :3] = [-100.0, 100.0, 0.0]
        feeds = {"X": x.astype(np.float16) if half else x}
        kw = {} if alpha is None else {"alpha": alpha}
        yield Case(f"opset24_{name}", [helper.make_node("Swish", ["X"], ["Y"], **kw)], feeds,
                   ["Y"], opset=24, out_type=TensorProto.FLOAT16 if half else TensorProto.FLOAT)
    # TensorScatter (new at 24): a KV-cache update in both modes, default axis -2 and axis 1
    B, N, M, H = 2, 2, 6, 4
    for name, L, widx, attrs in [("ts_prefill", 3, None, {}),
                                 ("ts_linear", 2, [4, 1], {}),
                                 ("ts_circular", 3, [5, 2], {"mode": "circular"}),
                                 ("ts_axis1", 2, [0, 3], {"axis": 1}),
                                 ("ts_f16_circular", 4, [3, 0], {"mode": "circular"})]:
        if attrs.get("axis") == 1:
            feeds = {"P": f32(B, M, N * H), "U": f32(B, L, N * H)}
        else:
            feeds = {"P": f32(B, N, M, H), "U": f32(B, N, L, H)}
        half = "f16" in name
        if half:
            feeds = {k: a.astype(np.float16) for k, a in feeds.items()}
        ins = ["P", "U"]
        if widx is not None:
            feeds["W"] = np.array(widx, np.int64)
            ins.append("W")
        yield Case(f"opset24_{name}", [helper.make_node("TensorScatter", ins, ["Y"], **attrs)],
                   feeds, ["Y"], opset=24,
                   out_type=TensorProto.FLOAT16 if half else TensorProto.FLOAT)


# ---- com.microsoft::MultiHeadAttention ----

def mha_cases():
    B = 2
    specs = [
        # name, N, S, L, P, H, Hv, bias, key_padding_mask kind, attention_bias shape, attrs, kv 4-D
        ("basic", 2, 4, 6, 0, 16, 16, False, None, None, {}, False),
        ("bias", 4, 3, 5, 0, 16, 16, True, None, None, {}, False),
        ("hv_differs", 2, 3, 5, 0, 16, 24, True, None, None, {}, False),
        ("mask_lengths", 2, 4, 6, 0, 16, 16, False, "1d", None, {}, False),
        ("mask_2d_past", 2, 3, 3, 4, 16, 16, True, "2d", None, {}, False),
        ("mask_3d", 2, 4, 5, 0, 40, 40, False, "3d", None, {}, False),
        ("attention_bias", 2, 4, 6, 0, 16, 16, False, None, (1, 2, 4, 6), {}, False),
        ("attention_bias_full_mask", 2, 4, 6, 0, 16, 16, True, "2d", (B, 2, 4, 6), {}, False),
        ("past_unidirectional", 4, 2, 2, 5, 16, 16, True, None, None, {"unidirectional": 1},
         False),
        ("decode_past", 2, 1, 1, 9, 64, 64, True, "1d", None, {"unidirectional": 1}, False),
        ("scale_filter", 2, 3, 4, 0, 16, 16, False, "2d", None,
         {"scale": 0.2, "mask_filter_value": -100.0}, False),
        ("cross_bnsh", 2, 3, 7, 0, 16, 16, False, "2d", None, {}, True),
        ("long_unidirectional", 2, 130, 130, 3, 16, 16, True, "2d", None, {"unidirectional": 1},
         False),
    ]
    for name, N, S, L, P, H, Hv, bias, mk, ab, attrs, bnsh in specs:
        T = P + L
        feeds = {"Q": f32(B, S, N * H)}
        if bnsh:
            feeds["K"], feeds["V"] = f32(B, N, L, H), f32(B, N, L, Hv)
        else:
            feeds["K"], feeds["V"] = f32(B, L, N * H), f32(B, L, N * Hv)
        ins = ["Q", "K", "V"]
        ins.append("bias" if bias else "")
        if bias:
            feeds["bias"] = f32(2 * N * H + N * Hv)
        if mk == "1d":
            feeds["kpm"] = np.array([T, max(1, T - 2)], np.int32)
        elif mk == "2d":
            m = (RNG.random((B, T)) > 0.3).astype(np.int32)
            m[:, 0] = 1
            feeds["kpm"] = m
        elif mk == "3d":
            m = (RNG.random((B, S, T)) > 0.3).astype(np.int32)
            m[..., 0] = 1
            feeds["kpm"] = m
        ins.append("kpm" if mk else "")
        if ab:
            feeds["ab"] = f32(*ab)
        ins.append("ab" if ab else "")
        outs = ["Y", "present_k", "present_v"]
        if P:
            feeds["PK"], feeds["PV"] = f32(B, N, P, H), f32(B, N, P, Hv)
            ins += ["PK", "PV"]
        while ins[-1] == "":
            ins.pop()
        n = helper.make_node("MultiHeadAttention", ins, outs, domain="com.microsoft", num_heads=N,
                             **attrs)
        yield Case(f"mha_{name}", [n], feeds, outs, opset=21)
        if name in ("bias", "mask_2d_past", "attention_bias", "past_unidirectional"):
            f16 = {k: (a.astype(np.float16) if a.dtype == np.float32 else a) for k, a in feeds.items()}
            yield Case(f"mha_f16_{name}", [n], f16, outs, opset=21, out_type=TensorProto.FLOAT16)


# ---- com.microsoft::Attention (BERT) ----

def bert_attention_cases():
    B, In = 2, 24
    specs = [
        # name, N, S, P, (dq, dk, dv) or None, bias, mask kind, attention_bias, attrs
        ("basic", 2, 5, 0, None, True, None, False, {}),
        # No bias: ONNX Runtime 1.30's CPU kernel crashes (segmentation fault); we add none.
        ("mask_1d", 2, 5, 0, None, True, "1d", False, {}),
        ("mask_1d_start", 2, 6, 0, None, True, "1d2", False, {}),
        ("mask_2d", 2, 5, 0, None, True, "2d", False, {}),
        ("mask_3d", 2, 4, 0, None, True, "3d", False, {}),
        ("qkv_sizes", 2, 4, 0, (32, 32, 48), True, None, False, {}),
        ("unidirectional_past", 2, 3, 4, None, True, "2d", False, {"unidirectional": 1}),
        ("decode_past", 4, 1, 7, None, True, None, False, {"unidirectional": 1}),
        ("attention_bias", 2, 4, 0, None, True, None, True, {"scale": 0.3}),
    ]
    for name, N, S, P, sizes, bias, mk, ab, attrs in specs:
        dq, dk, dv = sizes or (16 * N, 16 * N, 16 * N)
        attrs = dict(attrs)
        if sizes:
            attrs["qkv_hidden_sizes"] = list(sizes)
        H = dq // N
        T = P + S
        feeds = {"X": f32(B, S, In), "W": (f32(In, dq + dk + dv) * 0.3).astype(np.float32)}
        ins = ["X", "W", "bias" if bias else ""]
        if bias:
            feeds["bias"] = f32(dq + dk + dv)
        if mk == "1d":
            feeds["mask"] = np.array([T, T - 2], np.int32)
        elif mk == "1d2":
            feeds["mask"] = np.array([T, T - 1, 1, 2], np.int32)
        elif mk == "2d":
            m = (RNG.random((B, T)) > 0.3).astype(np.int32)
            m[:, 0] = 1
            feeds["mask"] = m
        elif mk == "3d":
            m = (RNG.random((B, S, T)) > 0.3).astype(np.int32)
            m[..., 0] = 1
            feeds["mask"] = m
        ins.append("mask" if mk else "")
        outs = ["Y"]
        if P:
            feeds["past"] = f32(2, B, N, P, H)
            outs.append("present")
        ins.append("past" if P else "")
        if ab:
            feeds["ab"] = f32(1, N, S, T)
        ins.append("ab" if ab else "")
        while ins[-1] == "":
            ins.pop()
        n = helper.make_node("Attention", ins, outs, domain="com.microsoft", num_heads=N, **attrs)
        yield Case(f"bert_attention_{name}", [n], feeds, outs, opset=21)


def compare(ours, ort, mask=None):
    if ours.shape != ort.shape or ours.dtype != ort.dtype:
        return f"{ours.dtype}{list(ours.shape)} vs ORT {ort.dtype}{list(ort.shape)}"
    atol, rtol = (2e-3, 2e-3) if ort.dtype == np.float16 else (1e-5, 1e-4)
    ort = ort.astype(np.float64)
    bad = ~(np.abs(ours.astype(np.float64) - ort) <= atol + rtol * np.abs(ort))
    if mask is not None:
        bad &= mask
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        return f"{int(bad.sum())} of {ort.size} differ, first at {list(i)}: {ours[i]} vs ORT {ort[i]}"
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("source_dir")
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="attention_vs_ort.")
    every = (list(rotary_cases()) + list(gqa_cases()) + list(attention23_cases()) +
             list(attention24_cases()) + list(mha_cases()) + list(bert_attention_cases()))
    cases = [c for c in every if a.filter in c.name]
    manifest = vs_ort.write_cases(work, cases, save)
    # ORT warns that the presents' shapes differ from its inferred ones: kept out of the log.
    ort_log = open(os.path.join(work, "ort.log"), "w")
    ort = vs_ort.start_ort(a.source_dir, manifest, stderr=ort_log)
    ran = vs_ort.run_ours(a.cli, work, cases, threads=2)
    if ort.wait() != 0:
        ort_log.close()
        print(open(os.path.join(work, "ort.log")).read()[-3000:], file=sys.stderr)
        print("attention_vs_ort: ONNX Runtime batch failed", file=sys.stderr)
        return 1
    failures, both_refuse = [], []
    for c, (rc, err) in zip(cases, ran):
        d = os.path.join(work, c.name)
        ort_err = os.path.join(d, "ort", "error.txt")
        if os.path.exists(ort_err):
            msg = open(ort_err).read().strip().splitlines()[0][:300]
            if rc == 0:
                failures.append(f"{c.name}: ONNX Runtime refuses ({msg}), we run it")
            else:
                both_refuse.append(c.name)
            continue
        if rc != 0:
            failures.append(f"{c.name}: we fail: {err.splitlines()[-1] if err else rc}")
            continue
        for o in c.outputs:
            why = compare(np.load(os.path.join(d, "ours", o + ".npy")),
                          np.load(os.path.join(d, "ort", o + ".npy")), c.masks.get(o))
            if why:
                failures.append(f"{c.name} {o}: {why}")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"attention_vs_ort: {len(cases) - len({f.split(':')[0].split(' ')[0] for f in failures}) - len(both_refuse)}"
          f" of {len(cases)} cases agree with ONNX Runtime ({len(both_refuse)} refused by both: "
          f"{', '.join(both_refuse)})")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
