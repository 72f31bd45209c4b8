#!/usr/bin/env python3
"""`onnx-prepack generate decoder|encoder`: the models are valid and compute what they should.

- onnx.checker (full check, external data included) accepts every tiny model. The genai form
  (IR 10, opset 21, ONNX Runtime's SimplifiedLayerNormalization in the ONNX domain) is past
  what python3-onnx 1.12 knows: it is checked as a copy at IR 8 / opset 17 (no operator it
  uses changed between 17 and 21) with SimplifiedLayerNormalization moved to a custom domain;
  ONNX Runtime, which resolves the real model, is the check of the rest.
- The genai layout is the builder's: op types, node and value names, inputs/outputs and their
  dim names, GroupQueryAttention and MatMulNBits attributes, the seqlens_k/total_seq_len
  subgraph.
- ONNX Runtime (one node process for all runs) runs the genai decoder on a prompt of 8 tokens
  and 8 greedy steps feeding present back as past, batch 1 and batch 2 with right padding; the
  optimum decoder with the same weights gives the same tokens and logits within 1e-3 of
  max |logit| (accuracy_level 0: dequantized weights equal the int4 ones), with and without
  zero points and with a local window; accuracy_level 4 runs and is sane.
- The encoders (tiny and MiniLM-L6, fp32 and int8) give finite, non-degenerate outputs, int8
  within quantization error of fp32.
- The 7b and bert-base presets' sizes (dry run, nothing written), and bad options exit 2.

usage: generate_llm_test.py ONNX_PREPACK SOURCE_DIR [--keep DIR]
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

FAILURES = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        FAILURES.append(what)


def cli(exe, args, expect=0):
    p = subprocess.run([exe] + args, capture_output=True, text=True)
    if p.returncode != expect:
        raise SystemExit("%s %s: exit %d (expected %d): %s" %
                         (exe, " ".join(args), p.returncode, expect, p.stderr))
    return p


def checker(path, genai):
    try:
        if not genai:
            onnx.checker.check_model(path, full_check=True)
            return True
        m = onnx.load(path)  # external data loaded
        m.ir_version = 8
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = 17
        for n in m.graph.node:
            if n.op_type == "SimplifiedLayerNormalization":
                n.domain = "org.onnxruntime.contrib_in_onnx_domain"
        m.opset_import.add(domain="org.onnxruntime.contrib_in_onnx_domain", version=1)
        onnx.checker.check_model(m, full_check=True)
        return True
    except Exception as e:  # noqa: BLE001
        print("      checker: %s" % str(e).splitlines()[0])
        return False


def dims(vi):
    return [d.dim_param if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def check_genai_layout(path, layers, acc, zero_points):
    m = onnx.load(path, load_external_data=False)
    check(m.ir_version == 10 and {(o.domain, o.version) for o in m.opset_import} ==
          {("", 21), ("com.microsoft", 1)}, "genai: IR 10, opset 21 + com.microsoft 1")
    ins = [(i.name, dims(i)) for i in m.graph.input]
    outs = [(o.name, dims(o)) for o in m.graph.output]
    want_in = [("input_ids", ["batch_size", "sequence_length"]),
               ("attention_mask", ["batch_size", "total_sequence_length"])]
    want_out = [("logits", ["batch_size", "sequence_length", 512])]
    for l in range(layers):
        for kv in ("key", "value"):
            want_in.append(("past_key_values.%d.%s" % (l, kv),
                            ["batch_size", 2, "past_sequence_length", 32]))
            want_out.append(("present.%d.%s" % (l, kv),
                             ["batch_size", 2, "total_sequence_length", 32]))
    check(ins == want_in, "genai: inputs and their dims (no position_ids, as the builder on CPU)")
    check(outs == want_out, "genai: outputs and their dims")
    nodes = {n.name: n for n in m.graph.node}
    mb = "/model/attn_mask_reformat/attn_mask_subgraph/"
    chain = [nodes.get(mb + s) for s in ("ReduceSum", "Sub", "Sub/Cast", "Shape", "Gather",
                                         "Gather/Cast")]
    check(all(chain) and chain[0].input[0] == "attention_mask" and
          attrs(chain[0]).get("keepdims") == 0 and attrs(chain[2]).get("to") == 6 and
          attrs(chain[5]).get("to") == 6 and chain[3].input[0] == "attention_mask",
          "genai: seqlens_k = Cast<int32>(ReduceSum(mask) - 1), total = Cast<int32>(Shape[1])")
    emb = nodes.get("/model/embed_tokens/Gather")
    check(emb is not None and list(emb.input) == ["model.embed_tokens.weight", "input_ids"],
          "genai: embeddings Gather of model.embed_tokens.weight (fp32)")
    ln0 = nodes.get("/model/layers.0/input_layernorm/LayerNorm")
    check(ln0 is not None and ln0.op_type == "SimplifiedLayerNormalization" and ln0.domain == "",
          "genai: layer 0 input norm is SimplifiedLayerNormalization")
    for l in range(layers):
        L = "/model/layers.%d/" % l
        gqa = nodes.get(L + "attn/GroupQueryAttention")
        a = attrs(gqa) if gqa else {}
        check(gqa is not None and gqa.domain == "com.microsoft" and
              list(gqa.input) == [L + "attn/qkv_proj/MatMul/output_0", "", "",
                                  "past_key_values.%d.key" % l, "past_key_values.%d.value" % l,
                                  mb + "Sub/Cast/output_0", mb + "Gather/Cast/output_0",
                                  "cos_cache", "sin_cache"] and
              list(gqa.output)[1:] == ["present.%d.key" % l, "present.%d.value" % l] and
              a.get("num_heads") == 4 and a.get("kv_num_heads") == 2 and
              a.get("do_rotary") == 1 and abs(a.get("scale", 0) - 32 ** -0.5) < 1e-7,
              "genai: layer %d GroupQueryAttention (packed qkv, do_rotary, caches)" % l)
        for proj in ("attn/qkv_proj", "attn/o_proj", "mlp/gate_proj", "mlp/up_proj",
                     "mlp/down_proj"):
            n = nodes.get(L + proj + "/MatMul_Q4")
            w = "model.layers.%d.%s.MatMul.weight" % (l, proj.replace("/", "."))
            want = [w + "_Q4", w + "_scales"] + ([w + "_zero_points"] if zero_points else [])
            a = attrs(n) if n else {}
            check(n is not None and n.op_type == "MatMulNBits" and list(n.input)[1:] == want and
                  a.get("bits") == 4 and a.get("block_size") == 32 and
                  a.get("accuracy_level", 0) == acc and
                  n.output[0] == L + proj + "/MatMul/output_0",
                  "genai: %s%s MatMulNBits (quantizer names, block 32, accuracy_level %d)" %
                  (L, proj, acc))
        if l > 0:
            s = nodes.get(L + "input_layernorm/SkipLayerNorm")
            check(s is not None and s.op_type == "SkipSimplifiedLayerNormalization" and
                  s.output[3] == L + "input_layernorm/output_3",
                  "genai: layer %d input SkipSimplifiedLayerNormalization" % l)
        check(nodes[L + "mlp/act_fn/Sigmoid"].op_type == "Sigmoid" and
              list(nodes[L + "mlp/act_fn/Mul"].input) ==
              [L + "mlp/gate_proj/MatMul/output_0", L + "mlp/act_fn/Sigmoid/output_0"] and
              list(nodes[L + "mlp/Mul"].input) ==
              [L + "mlp/act_fn/Mul/output_0", L + "mlp/up_proj/MatMul/output_0"],
              "genai: layer %d SiLU as Sigmoid + Mul, times up_proj" % l)
    fin = nodes.get("/model/layers.%d/final_norm_layernorm/SkipLayerNorm" % layers)
    head = nodes.get("/lm_head/MatMul_Q4")
    check(fin is not None and head is not None and head.output[0] == "logits" and
          head.input[1] == "lm_head.MatMul.weight_Q4", "genai: final norm and lm_head -> logits")
    inits = {t.name: list(t.dims) for t in m.graph.initializer}
    check(inits.get("cos_cache") == [256, 16] and inits.get("sin_cache") == [256, 16] and
          inits.get("model.layers.0.attn.qkv_proj.MatMul.weight_Q4") == [256, 4, 16],
          "genai: cos/sin caches [max_positions, head_size/2], qkv blobs [N, K/32, 16]")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("source")
    ap.add_argument("--keep")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="generate_llm_")
    os.makedirs(tmp, exist_ok=True)
    try:
        run(a.cli, a.source, tmp)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (CHECKS[0] - len(FAILURES), len(FAILURES)))
    return 1 if FAILURES else 0


CHECKS = [0]


def run(exe, source, tmp):
    global check
    inner = check

    def counted(ok, what):
        CHECKS[0] += 1
        inner(ok, what)

    check = counted
    p = lambda n: os.path.join(tmp, n)  # noqa: E731
    dec = {
        "genai": ["--accuracy-level", "0"],
        "optimum": ["--form", "optimum", "--accuracy-level", "0"],
        "genai_sym": ["--accuracy-level", "0", "--no-zero-points"],
        "optimum_sym": ["--form", "optimum", "--no-zero-points"],
        "genai_win": ["--accuracy-level", "0", "--local-window", "5"],
        "optimum_win": ["--form", "optimum", "--local-window", "5"],
        "genai_acc4": ["--external"],
    }
    for name, extra in dec.items():
        cli(exe, ["generate", "decoder", "--preset", "tiny", "-o", p(name + ".onnx")] + extra)
    enc = {"enc": ["--preset", "tiny"], "enc8": ["--preset", "tiny", "--int8"],
           "minilm": ["--preset", "minilm-l6", "--external"],
           "minilm8": ["--preset", "minilm-l6", "--int8", "--external"]}
    for name, extra in enc.items():
        cli(exe, ["generate", "encoder", "-o", p(name + ".onnx")] + extra)
    check(os.path.exists(p("genai_acc4.onnx.data")) and os.path.exists(p("minilm.onnx.data")),
          "--external writes OUT.onnx.data beside the model")
    again = p("again.onnx")
    cli(exe, ["generate", "decoder", "--preset", "tiny", "-o", again, "--accuracy-level", "0"])
    check(open(again, "rb").read() == open(p("genai.onnx"), "rb").read(),
          "same options, same bytes")

    for name in list(dec) + list(enc):
        check(checker(p(name + ".onnx"), name.startswith("genai")),
              "onnx.checker (full) accepts %s" % name)
    check_genai_layout(p("genai.onnx"), 2, 0, True)
    check_genai_layout(p("genai_acc4.onnx"), 2, 4, True)
    check_genai_layout(p("genai_sym.onnx"), 2, 0, False)
    m = onnx.load(p("optimum.onnx"), load_external_data=False)
    check([i.name for i in m.graph.input][:3] == ["input_ids", "attention_mask", "position_ids"]
          and m.ir_version == 8 and m.opset_import[0].version == 17 and
          {n.op_type for n in m.graph.node} >= {"Pow", "ReduceMean", "Sqrt", "Div", "Softmax",
                                                 "Concat", "Neg", "Slice", "Cos", "Sin"} and
          not any(n.domain for n in m.graph.node),
          "optimum: position_ids input, standard ops only (decomposed RMSNorm, rotary, attention)")
    m8 = onnx.load(p("enc8.onnx"), load_external_data=False)
    ops = [n.op_type for n in m8.graph.node]
    check(ops.count("MatMulInteger") == 12 and ops.count("DynamicQuantizeLinear") == 8 and
          "MatMul_quant" in "".join(n.name for n in m8.graph.node if n.op_type == "MatMulInteger")
          and ops.count("MatMul") == 4,
          "int8 encoder: 6 MatMulInteger a layer, one DynamicQuantizeLinear per quantized input")

    # ONNX Runtime, one node process.
    prompt = [5, 17, 300, 42, 7, 99, 128, 3]
    short = [11, 23, 250, 4, 61]
    jobs = []

    def djob(name, form, prompts):
        out = p("%s_b%d.json" % (name, len(prompts)))
        jobs.append({"kind": "decoder", "model": p(name + ".onnx"), "form": form, "layers": 2,
                     "kv_heads": 2, "head_size": 32, "prompts": prompts, "steps": 8,
                     "out": out})
        return out

    pairs = []
    for g, o in (("genai", "optimum"), ("genai_sym", "optimum_sym"),
                 ("genai_win", "optimum_win")):
        for prompts in ([prompt], [prompt, short]):
            pairs.append((g, o, len(prompts), djob(g, "genai", prompts),
                          djob(o, "optimum", prompts)))
    acc4 = djob("genai_acc4", "genai", [prompt, short])
    rng = np.random.default_rng(3)
    ids = rng.integers(1, 512, size=(2, 12)).tolist()
    mask = [[1] * 12, [1] * 9 + [0] * 3]
    types = [[0] * 6 + [1] * 6, [0] * 12]
    ejobs = {}
    for name in enc:
        ejobs[name] = p(name + "_out.json")
        jobs.append({"kind": "encoder", "model": p(name + ".onnx"),
                     "feeds": {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
                     "out": ejobs[name]})
    with open(p("jobs.json"), "w") as f:
        json.dump(jobs, f)
    js = os.path.join(source, "tests", "runtime", "generate_llm_ort.js")
    r = subprocess.run(["node", js, p("jobs.json")], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("node failed: " + r.stderr)

    def load(path):
        d = json.load(open(path))
        if "error" in d:
            check(False, "ONNX Runtime ran %s: %s" % (os.path.basename(path), d["error"][:300]))
            return None
        return d

    base = {}
    for g, o, b, gp, op in pairs:
        ga, oa = load(gp), load(op)
        if ga is None or oa is None:
            continue
        lg, lo = np.array(ga["logits"]), np.array(oa["logits"])
        check(lg.shape == (b, 9, 512) and np.isfinite(lg).all() and lg.std() > 0.5,
              "%s batch %d: 8-token prompt + 8 greedy steps, finite non-degenerate logits" % (g, b))
        rows = b
        if g == "genai_win" and b == 2:
            # A local window counts keys: GroupQueryAttention those of the sequence itself, the
            # optimum mask (like Hugging Face's sliding-window mask) cache slots, which for a
            # right-padded row include its padding: only the unpadded row is comparable.
            rows = 1
        check(ga["tokens"][:rows] == oa["tokens"][:rows],
              "%s vs %s batch %d: same greedy tokens %s" % (g, o, b, ga["tokens"][:rows]))
        lg, lo = lg[:rows], lo[:rows]
        err = np.abs(lg - lo).max() / np.abs(lo).max()
        check(err <= 1e-3, "%s vs %s batch %d: logits within 1e-3 of max |logit| (%.2e)" %
              (g, o, b, err))
        if b == 1:
            base[g] = lg[0]
        elif g in base:
            e = np.abs(lg[0] - base[g]).max() / np.abs(base[g]).max()
            check(e <= 1e-4, "%s: batch 2 row 0 equals batch 1 (right padding does not leak, %.1e)"
                  % (g, e))
    d = load(acc4)
    if d is not None:
        lg = np.array(d["logits"])
        check(np.isfinite(lg).all() and lg.std() > 0.5 and
              len(set(d["tokens"][0] + d["tokens"][1])) > 4,
              "genai accuracy_level 4 (--external): runs, sane logits, tokens %s" % d["tokens"])
    outs = {}
    for name, path in ejobs.items():
        d = load(path)
        if d is None:
            continue
        y = np.array(d["last_hidden_state"]).reshape(d["dims"])
        outs[name] = y
        check(np.isfinite(y).all() and 0.3 < y.std() < 3.0 and
              np.abs(y[0, 0] - y[0, 1]).max() > 1e-2,
              "encoder %s: finite, sane last_hidden_state %s" % (name, list(y.shape)))
    for f, q in (("enc", "enc8"), ("minilm", "minilm8")):
        if f in outs and q in outs:
            valid = np.array(mask, bool)
            a, b = outs[f][valid], outs[q][valid]
            rel = np.linalg.norm(a - b) / np.linalg.norm(a)
            check(rel < 0.1, "%s int8 vs fp32: relative error %.3f < 0.1" % (f, rel))

    # Sizes, without writing anything.
    j = json.loads(cli(exe, ["generate", "decoder", "--preset", "7b", "--dry-run",
                             "--json"]).stdout)
    h, I, V, L, kb = 4096, 11008, 32000, 32, 4096 // 32

    def nb(k, n, zp=True):
        return n * k // 2 + 4 * n * (k // 32) + (n * ((k // 32 + 1) // 2) if zp else 0)

    want = (V * h * 4 + L * (8 * h + nb(h, 4096 + 2 * 1024) + nb(4096, h) + 2 * nb(h, I) +
                             nb(I, h)) + 4 * h + nb(h, V) + 2 * 4 * 4096 * 64)
    check(j["weight_bytes"] == want and j["external"] and j["head_size"] == 128 and
          j["kv_heads"] == 8 and j["accuracy_level"] == 4 and j["block_size"] == 32 and
          kb == 128, "7b preset: %d bytes (%.2f GiB), external, 32 x 4096, 32/8 heads" %
          (j["weight_bytes"], j["weight_bytes"] / 2 ** 30))
    j = json.loads(cli(exe, ["generate", "encoder", "--preset", "bert-base", "--dry-run",
                             "--json"]).stdout)
    bert = (30522 + 512 + 2) * 768 * 4 + 8 * 768 + 12 * (
        4 * (4 * 768 * 768 + 2 * 768 * 3072) + 4 * (4 * 768 + 3072 + 768) + 16 * 768)
    check(j["weight_bytes"] == bert and j["layers"] == 12 and j["hidden"] == 768,
          "bert-base preset: %d bytes (%.0f MiB)" % (bert, bert / 2 ** 20))
    for kind, extra in (("decoder", []), ("decoder", ["--form", "optimum", "--no-zero-points"]),
                        ("encoder", ["--preset", "tiny", "--int8"]),
                        ("encoder", ["--preset", "minilm-l6"])):
        dry = json.loads(cli(exe, ["generate", kind, "--dry-run", "--json"] + extra).stdout)
        real = json.loads(cli(exe, ["generate", kind, "-o", p("size.onnx"), "--json"] +
                              extra).stdout)
        check(dry["weight_bytes"] == real["weight_bytes"] and
              real["weight_bytes"] > 0,
              "%s %s: --dry-run's weight_bytes (%d) is what is written" %
              (kind, " ".join(extra), dry["weight_bytes"]))
    for bad, msg in ((["--heads", "3"], "not a multiple of --heads"),
                     (["--kv-heads", "3"], "not a multiple of --kv-heads"),
                     (["--block-size", "48"], "power of 2"),
                     (["--hidden", str(2 ** 25)], "not in [1, 2^24]"),
                     (["--form", "hf"], "expected genai or optimum"),
                     (["--preset", "13b"], "unknown decoder preset"),
                     (["--width", "64"], "--width does not apply to decoder"),
                     (["--local-window", "0"], "--local-window must be -1")):
        r = cli(exe, ["generate", "decoder", "-o", p("bad.onnx")] + bad, expect=2)
        check(msg in r.stderr and not os.path.exists(p("bad.onnx")),
              "decoder %s: exit 2, '%s'" % (" ".join(bad), msg))


if __name__ == "__main__":
    sys.exit(main())
