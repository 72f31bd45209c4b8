"""onnx_prepack.genai (onnxruntime-genai's Python shape over the engine's Generator) on the
tiny decoders `onnx-prepack generate decoder --preset tiny` writes:

- greedy tokens equal ONNX Runtime's (tests/runtime/llm_ort.py drives it through the same greedy
  loop as decoder_vs_ort.py) for one prompt and for batches of two prompts of different lengths,
  in both forms, and the three frontends (Python, `onnx-prepack complete`, the C API through
  tests/capi/c_api_generator_test.c --tokens) give the same tokens;
- lists, 1-D and 2-D int32 / int64 arrays are the same prompt; ids come back int32, logits
  [batch, vocab] with the greedy token their argmax;
- seeded sampling repeats with the seed and differs across seeds; eos ids stop (the id kept);
  max_new_tokens and max_length bound the sequences;
- genai_config.json's eos_token_id, pad_token_id and max_length are the defaults (the CLI reads
  them the same way), the caller's options override them;
- two generators alive on one model at once (one engine each) give the same tokens;
- bad input raises a clear error naming the problem, never a crash.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import onnx_prepack as op
import onnx_prepack.genai as og

CLI = os.environ.get("ONNX_PREPACK_CLI", "onnx-prepack")
SOURCE = os.environ.get("ONNX_PREPACK_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
# The C API's generator test binary (--tokens mode); next to the CLI's build folder by default.
C_GENERATOR = os.environ.get("ONNX_PREPACK_C_GENERATOR", os.path.join(
    os.path.dirname(os.path.abspath(CLI)), "..", "..", "tests", "capi", "c_api_generator_test"))

sys.path.insert(0, os.path.join(SOURCE, "tests", "runtime"))
import llm_ort  # noqa: E402 - tests/runtime/llm_ort.py

PROMPT = [5, 17, 300, 42, 7, 99, 128, 3]
SHORT = [11, 23, 250, 4, 61]
STEPS = 12  # greedy steps after the prompt step
VOCAB = 512

# name: (form, prompts, padding ONNX Runtime uses for the form)
VARIANTS = {
    "genai_b1": ("genai", [PROMPT], "right"),
    "genai_b2": ("genai", [PROMPT, SHORT], "right"),
    "optimum_b2": ("optimum", [PROMPT, SHORT], "left"),
}


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    d = tmp_path_factory.mktemp("genai")
    models = {}
    for form in ("genai", "optimum"):
        folder = d / form
        folder.mkdir()
        models[form] = folder / "model.onnx"
        p = cli("generate", "decoder", "--preset", "tiny", "--form", form, "-o", models[form])
        assert p.returncode == 0, p.stderr
    jobs = [llm_ort.decoder_job(models[form], form, prompts, STEPS, d / f"{name}_ort.json",
                                padding)
            for name, (form, prompts, padding) in VARIANTS.items()]
    ort = {}
    for name, result in zip(VARIANTS, llm_ort.run(SOURCE, jobs, d)):
        assert "error" not in result, f"{name}: ONNX Runtime failed: {result.get('error')}"
        ort[name] = result["tokens"]
    return {"dir": d, "models": models, "ort": ort}


@pytest.fixture(scope="module")
def genai_model(decoders):
    return og.Model(decoders["models"]["genai"], threads=1)


def loop(model, prompts, **options):
    """The onnxruntime-genai loop; returns (new tokens per prompt, the generator)."""
    params = og.GeneratorParams(model)
    params.set_search_options(**options)
    gen = og.Generator(model, params)
    gen.append_tokens(prompts)
    while not gen.is_done():
        gen.generate_next_token()
    arr = np.asarray(prompts[0]) if len(prompts) else None
    rows = [prompts] if arr is None or arr.ndim == 0 else list(prompts)
    return [gen.get_sequence(b)[len(p):].tolist() for b, p in enumerate(rows)], gen


def cli_tokens(model, prompts, *extra):
    args = ["complete", model, "--threads", 1, "--json", *extra]
    for p in prompts:
        args += ["--prompt", ",".join(map(str, p))]
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def c_api_tokens(model, prompts, max_new_tokens):
    p = subprocess.run([C_GENERATOR, "--tokens", str(model), str(max_new_tokens),
                        *(",".join(map(str, x)) for x in prompts)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return [[int(t) for t in line.split(",")] for line in p.stdout.splitlines()]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_greedy_tokens_are_onnx_runtimes_in_every_frontend(decoders, name):
    form, prompts, _ = VARIANTS[name]
    model_path = decoders["models"][form]
    model = og.Model(model_path, threads=1)
    want = decoders["ort"][name]
    assert len(want) == len(prompts) and all(len(t) == STEPS + 1 for t in want)

    ours, gen = loop(model, prompts, max_new_tokens=STEPS + 1)
    assert ours == want, "og.Generator's greedy tokens differ from ONNX Runtime's"
    assert gen.form == form
    st = gen.stats()
    assert st["prompt_tokens"] == sum(map(len, prompts))
    assert st["new_tokens"] == len(prompts) * (STEPS + 1) and st["decode_steps"] == STEPS
    assert st["first_token_ms"] > 0 and st["decode_tokens_per_second"] > 0

    seqs = og.generate(model, prompts, max_new_tokens=STEPS + 1)
    assert seqs == [p + t for p, t in zip(prompts, want)]

    j = cli_tokens(model_path, prompts, "--max-new-tokens", STEPS + 1)
    assert j["new_tokens"] == want and j["form"] == form

    if not os.path.exists(C_GENERATOR):
        pytest.skip(f"no C API test binary at {C_GENERATOR}")
    assert c_api_tokens(model_path, prompts, STEPS + 1) == want


def test_lists_and_int32_int64_arrays_are_one_prompt(genai_model, decoders):
    want = decoders["ort"]["genai_b1"][0][:4]
    for tokens in (PROMPT, tuple(PROMPT), np.array(PROMPT, np.int32), np.array(PROMPT, np.int64),
                   np.array([PROMPT], np.int64), [np.array(PROMPT, np.int32)]):
        got, _ = loop(genai_model, tokens, max_new_tokens=4)
        assert got == [want], type(tokens)
    params = og.GeneratorParams(genai_model)
    params.set_search_options(max_new_tokens=2)
    gen = og.Generator(genai_model, params)
    gen.append_tokens(np.array([PROMPT, PROMPT[::-1]], np.int32))  # 2-D: a batch of 2
    nxt = gen.get_next_tokens()
    assert nxt.dtype == np.int32 and nxt.shape == (2,)
    assert nxt[0] == want[0]
    logits = gen.get_logits()
    assert logits.dtype == np.float32 and logits.shape == (2, VOCAB)
    assert np.argmax(logits, axis=1).tolist() == nxt.tolist()
    seq = gen.get_sequence(1)
    assert seq.dtype == np.int32 and seq.tolist() == PROMPT[::-1] + [int(nxt[1])]


def test_seeded_sampling_repeats_and_differs_across_seeds(genai_model):
    sample = dict(max_new_tokens=STEPS, do_sample=True, temperature=1.5, top_k=50, top_p=0.95)
    a, _ = loop(genai_model, PROMPT, random_seed=7, **sample)
    b, _ = loop(genai_model, PROMPT, random_seed=7, **sample)
    c, _ = loop(genai_model, PROMPT, random_seed=8, **sample)
    assert a == b and a != c
    assert og.generate(genai_model, PROMPT, random_seed=7, **sample) == [PROMPT + a[0]]
    # The CLI's sampler is the same one: the same seed, the same tokens.
    j = cli_tokens(genai_model.path, [PROMPT], "--max-new-tokens", STEPS, "--sample",
                   "--temperature", 1.5, "--top-k", 50, "--top-p", 0.95, "--seed", 7)
    assert j["new_tokens"] == a


def test_eos_ids_stop_and_lengths_bound(genai_model, decoders):
    greedy = decoders["ort"]["genai_b1"][0]
    stop = greedy[2]
    got, gen = loop(genai_model, PROMPT, max_new_tokens=STEPS + 1, eos_token_id=stop)
    assert got == [greedy[:greedy.index(stop) + 1]] and gen.is_done()
    got, _ = loop(genai_model, PROMPT, max_new_tokens=STEPS + 1, eos_token_id=[VOCAB - 1, stop])
    assert got == [greedy[:greedy.index(stop) + 1]]
    got, _ = loop(genai_model, PROMPT, max_new_tokens=3)
    assert got == [greedy[:3]]
    got, gen = loop(genai_model, PROMPT, max_length=len(PROMPT) + 5)
    assert got == [greedy[:5]] and gen.params["max_length"] == len(PROMPT) + 5
    # A batch: the stopped row waits (pad ids, not in its sequence) while the other goes on.
    got, _ = loop(genai_model, [PROMPT, SHORT], max_new_tokens=STEPS + 1, eos_token_id=stop)
    want_short = decoders["ort"]["genai_b2"][1]
    assert got[0] == greedy[:greedy.index(stop) + 1]
    assert got[1] == (want_short[:want_short.index(stop) + 1] if stop in want_short
                      else want_short)


def test_genai_config_gives_the_defaults_and_options_override(decoders, tmp_path):
    greedy = decoders["ort"]["genai_b1"][0]
    stop = greedy[3]
    folder = tmp_path / "builder_out"
    folder.mkdir()
    os.symlink(decoders["models"]["genai"], folder / "decoder.onnx")
    config = {"model": {"type": "llama", "eos_token_id": [VOCAB - 1, stop], "pad_token_id": 3,
                        "decoder": {"filename": "decoder.onnx", "session_options": {}}},
              "search": {"max_length": len(PROMPT) + 10, "do_sample": False, "top_k": 1}}
    (folder / "genai_config.json").write_text(json.dumps(config))
    model = og.Model(folder, threads=1)
    assert model.config_path == str(folder / "genai_config.json")
    assert model.path == str(folder / "decoder.onnx")
    got, gen = loop(model, PROMPT)
    p = gen.params
    assert p["stop_ids"] == [VOCAB - 1, stop] and p["pad_token_id"] == 3
    assert p["max_length"] == len(PROMPT) + 10
    assert got == [greedy[:greedy.index(stop) + 1]]
    # The caller's options override: no eos ids, another length.
    got, gen = loop(model, PROMPT, eos_token_id=[], max_new_tokens=6, pad_token_id=0)
    assert got == [greedy[:6]] and gen.params["max_length"] == 0
    # The CLI on the folder: the same defaults, the same tokens; its flags override too.
    j = cli_tokens(folder, [PROMPT])
    assert j["genai_config"] == str(folder / "genai_config.json")
    assert j["new_tokens"] == [greedy[:greedy.index(stop) + 1]]
    assert cli_tokens(folder, [PROMPT], "--stop-id", VOCAB - 2)["new_tokens"] == [greedy[:10]]
    # A malformed config is an error naming the file and the byte (or the key), for both.
    (folder / "genai_config.json").write_text('{"model": {"eos_token_id": [1, "x"]}}')
    with pytest.raises(op.InvalidArgument, match="model.eos_token_id must be an integer"):
        og.Model(folder)
    (folder / "genai_config.json").write_text('{"model": ')
    with pytest.raises(op.InvalidArgument, match=r"genai_config.json: not JSON: at byte 10"):
        og.Model(folder / "decoder.onnx")
    p = cli("complete", folder, "--prompt", "1,2", "--max-new-tokens", 2)
    assert p.returncode == 2 and "genai_config.json: not JSON: at byte 10" in p.stderr


def test_two_generators_at_once_each_with_its_engine(genai_model, decoders):
    want = decoders["ort"]["genai_b1"][0]
    params = og.GeneratorParams(genai_model)
    params.set_search_options(max_new_tokens=STEPS + 1)
    a, b = og.Generator(genai_model, params), og.Generator(genai_model, params)
    a.append_tokens(PROMPT)
    b.append_tokens(PROMPT)
    while not a.is_done():
        a.generate_next_token()
        b.generate_next_token()
    assert a.get_sequence(0).tolist() == b.get_sequence(0).tolist() == PROMPT + want
    a.close()
    with pytest.raises(op.InvalidArgument, match="closed"):
        a.is_done()
    del b


def _expect(exc, words, fn, *args, **kwargs):
    with pytest.raises(exc) as e:
        fn(*args, **kwargs)
    assert words in str(e.value), f"'{words}' not in '{e.value}'"


def test_bad_input_is_a_clear_error(genai_model, decoders, tmp_path):
    m = genai_model
    gen = lambda prompts, **o: og.generate(m, prompts, **{"max_new_tokens": 2, **o})  # noqa: E731
    IA = op.InvalidArgument
    _expect(IA, "row 0 of the tokens is empty", gen, [])
    _expect(IA, "row 1 of the tokens is empty", gen, [[1, 2], []])
    _expect(IA, "token id 512 in row 0", gen, [1, VOCAB])
    _expect(IA, "token id -1 in row 0", gen, [1, -1])
    _expect(IA, "does not fit in 64 bits", gen, [1, 2 ** 70])
    _expect(IA, "token id 9223372036854775807 in row 0", gen, [1, 2 ** 63 - 1])
    _expect(IA, "must be an integer, got float", gen, [1.5])
    _expect(IA, "must be an integer, got bool", gen, [True])
    _expect(IA, "integer ids, got an array of float32", gen, np.zeros(3, np.float32))
    _expect(IA, "got 3-D", gen, np.zeros((1, 2, 2), np.int64))
    _expect(IA, "got str", gen, "1,2,3")
    _expect(IA, "leaves no room", og.generate, m, PROMPT, max_length=4)
    _expect(IA, "top_p 0 must be in (0, 1]", gen, PROMPT, top_p=0)
    _expect(IA, "temperature 0 must be finite and > 0", gen, PROMPT, do_sample=True,
            temperature=0)
    _expect(IA, "temperature -1 must be", gen, PROMPT, do_sample=True, temperature=-1.0)
    _expect(IA, "seed -1 is negative", gen, PROMPT, random_seed=-1)
    _expect(IA, "top_k -2 is negative", gen, PROMPT, top_k=-2)
    _expect(IA, "set max_length or max_new_tokens", og.generate, m, PROMPT)
    _expect(IA, "temperature must be a number, got str", gen, PROMPT, temperature="hot")
    _expect(IA, "search option 'tmperature' is not known; did you mean 'temperature'?", gen,
            PROMPT, tmperature=0.5)
    params = og.GeneratorParams(m)
    _expect(IA, "search option 'beam_width' is not known", params.set_search_options,
            beam_width=4)
    _expect(op.NotImplemented, "num_beams=4 is not supported", params.set_search_options,
            num_beams=4)
    params.set_search_options(num_beams=1, early_stopping=True, max_new_tokens=2)  # neutral
    _expect(IA, "Generator needs an onnx_prepack.genai.GeneratorParams", og.Generator, m, {})
    _expect(IA, "GeneratorParams needs an onnx_prepack.genai.Model", og.GeneratorParams, "m")
    g = og.Generator(m, params)
    _expect(IA, "append_tokens (the prompt) comes first", g.generate_next_token)
    _expect(IA, "no logits yet", g.get_logits)
    _expect(IA, "index 0 is past the batch of 0", g.get_sequence, 0)
    g.append_tokens(PROMPT)
    _expect(IA, "index 5 is past the batch of 1", g.get_sequence, 5)
    _expect(IA, "index -1 is past the batch", g.get_sequence, -1)
    while not g.is_done():
        g.generate_next_token()
    _expect(IA, "every sequence is done", g.generate_next_token)
    g.close()
    # Models: a folder without one, a file that is no decoder.
    _expect(op.OnnxPrepackError, "a folder without model.onnx", og.Model, tmp_path)
    mlp = tmp_path / "mlp.onnx"
    assert cli("generate", "mlp", "-o", mlp).returncode == 0
    not_decoder = og.Model(mlp)
    params = og.GeneratorParams(not_decoder)
    params.set_search_options(max_new_tokens=2)
    _expect(IA, "is none the generator feeds", og.Generator, not_decoder, params)
