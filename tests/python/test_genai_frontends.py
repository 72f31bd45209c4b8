"""The three generation frontends against ONNX Runtime on the tiny decoders
`onnx-prepack generate decoder --preset tiny` writes (both forms): Python's onnx_prepack.genai,
`onnx-prepack complete` and the C API (tests/capi/c_api_generator_c.c --tokens) give the greedy
tokens ONNX Runtime gives through the same greedy loop as decoder_vs_ort.py
(tests/runtime/llm_ort.py), for one prompt and for batches of two prompts of different lengths.
Also: lists and int32 / int64 arrays are the same prompt, max_new_tokens and max_length bound
the sequences, and the bad inputs of the issue raise clear errors (test_genai.py has the rest)."""
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
# The C program's --tokens mode; next to the CLI's build folder by default.
C_GENERATOR = os.environ.get("ONNX_PREPACK_C_GENERATOR", os.path.join(
    os.path.dirname(os.path.abspath(CLI)), "..", "..", "tests", "capi", "c_api_generator_c"))

sys.path.insert(0, os.path.join(SOURCE, "tests", "runtime"))
import llm_ort  # noqa: E402 - tests/runtime/llm_ort.py

PROMPT = [5, 17, 300, 42, 7, 99, 128, 3]
SHORT = [11, 23, 250, 4, 61]
STEPS = 12  # greedy steps after the prompt step
VOCAB = 512

# name: (form, prompts, the padding ONNX Runtime's loop uses for the form)
VARIANTS = {
    "genai_b1": ("genai", [PROMPT], "right"),
    "genai_b2": ("genai", [PROMPT, SHORT], "right"),
    "optimum_b2": ("optimum", [PROMPT, SHORT], "left"),
}


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    d = tmp_path_factory.mktemp("frontends")
    models = {}
    for form in ("genai", "optimum"):
        models[form] = d / f"{form}.onnx"
        p = cli("generate", "decoder", "--preset", "tiny", "--form", form, "-o", models[form])
        assert p.returncode == 0, p.stderr
    jobs = [llm_ort.decoder_job(models[form], form, prompts, STEPS, d / f"{name}_ort.json",
                                padding)
            for name, (form, prompts, padding) in VARIANTS.items()]
    ort = {}
    for name, result in zip(VARIANTS, llm_ort.run(SOURCE, jobs, d)):
        assert "error" not in result, f"{name}: ONNX Runtime failed: {result.get('error')}"
        ort[name] = result["tokens"]
    return {"models": models, "ort": ort}


def loop(model, prompts, **options):
    """onnxruntime-genai's loop; the new tokens of each prompt."""
    params = og.GeneratorParams(model)
    params.set_search_options(**options)
    gen = og.Generator(model, params)
    gen.append_tokens(prompts)
    while not gen.is_done():
        gen.generate_next_token()
    flat = len(prompts) > 0 and np.ndim(prompts[0]) == 0  # one row of ids
    lens = [len(prompts)] if flat else [len(p) for p in prompts]
    return [np.asarray(gen.get_sequence(b))[n:].tolist() for b, n in enumerate(lens)]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_greedy_tokens_are_onnx_runtimes_in_every_frontend(decoders, name):
    form, prompts, _ = VARIANTS[name]
    path = decoders["models"][form]
    want = decoders["ort"][name]
    assert len(want) == len(prompts) and all(len(t) == STEPS + 1 for t in want)
    model = og.Model(path, threads=1)
    assert loop(model, prompts, max_new_tokens=STEPS + 1) == want, "Python"
    seqs = og.generate(model, prompts, max_new_tokens=STEPS + 1)
    assert [s.tolist() for s in seqs] == [p + t for p, t in zip(prompts, want)], "og.generate"
    args = ["complete", path, "--threads", 1, "--json", "--max-new-tokens", STEPS + 1]
    for p in prompts:
        args += ["--prompt", ",".join(map(str, p))]
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert j["new_tokens"] == want and j["form"] == form, "CLI"
    if not os.path.exists(C_GENERATOR):
        pytest.skip(f"no C program at {C_GENERATOR}")
    c = subprocess.run([C_GENERATOR, "--tokens", str(path), str(STEPS + 1),
                        *(",".join(map(str, x)) for x in prompts)], capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    assert [[int(t) for t in line.split(",")] for line in c.stdout.splitlines()] == want, "C API"


def test_prompt_forms_and_length_bounds(decoders):
    model = og.Model(decoders["models"]["genai"], threads=1)
    greedy = decoders["ort"]["genai_b1"][0]
    for tokens in (PROMPT, np.array(PROMPT, np.int32), np.array(PROMPT, np.int64),
                   np.array([PROMPT], np.int32)):
        assert loop(model, tokens, max_new_tokens=4) == [greedy[:4]], type(tokens)
    assert loop(model, PROMPT, max_new_tokens=3) == [greedy[:3]]
    assert loop(model, PROMPT, max_length=len(PROMPT) + 5) == [greedy[:5]]
    stop = greedy[2]
    assert loop(model, PROMPT, max_new_tokens=STEPS + 1, stop_token_ids=[stop]) == \
        [greedy[:greedy.index(stop) + 1]]


def test_bad_input_is_a_clear_error(decoders):
    model = og.Model(decoders["models"]["genai"], threads=1)

    def gen(prompts, **o):
        return og.generate(model, prompts, **{"max_new_tokens": 2, **o})

    cases = [
        (lambda: gen([[1, 2], []]), "row 1 of the tokens is empty"),
        (lambda: gen([1, VOCAB]), "token id 512 in row 0"),
        (lambda: gen([1, -1]), "token id -1 in row 0"),
        (lambda: gen(np.array([1, 2 ** 40], np.int64)), "token id 1099511627776 in row 0"),
        (lambda: og.generate(model, PROMPT, max_length=4), "leaves no room"),
        (lambda: gen(PROMPT, top_p=0.0), "top_p 0 must be in (0, 1]"),
        (lambda: gen(PROMPT, do_sample=True, temperature=0.0), "temperature 0 must be"),
        (lambda: gen(PROMPT, do_sample=True, temperature=-1.0), "temperature -1 must be"),
        (lambda: og.generate(model, PROMPT), "set max_length or max_new_tokens"),
    ]
    for fn, words in cases:
        with pytest.raises(op.InvalidArgument) as e:
            fn()
        assert words in str(e.value), f"'{words}' not in '{e.value}'"
    with pytest.raises((op.InvalidArgument, TypeError)) as e:
        gen([])
    assert "empty" in str(e.value) or "token" in str(e.value), str(e.value)
    with pytest.raises(TypeError, match="unknown search option 'tmperature'"):
        og.GeneratorParams(model).set_search_options(tmperature=0.5)


def test_genai_config_gives_the_defaults_in_python_and_the_cli(decoders, tmp_path):
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
    stopped = greedy[:greedy.index(stop) + 1]
    assert loop(model, PROMPT) == [stopped]  # eos ids and max_length from the config
    assert loop(og.Model(folder / "decoder.onnx", threads=1), PROMPT) == [stopped]
    # The caller's options override: no stop ids, another length.
    assert loop(model, PROMPT, stop_token_ids=[], max_new_tokens=6) == [greedy[:6]]
    assert [s.tolist() for s in og.generate(model, [PROMPT])] == [PROMPT + stopped]
    # The CLI on the folder: the same defaults, the same tokens; a flag overrides.
    p = cli("complete", folder, "--prompt", ",".join(map(str, PROMPT)), "--threads", 1, "--json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert j["genai_config"] == str(folder / "genai_config.json") and j["new_tokens"] == [stopped]
    p = cli("complete", folder, "--prompt", ",".join(map(str, PROMPT)), "--threads", 1, "--json",
            "--stop-id", VOCAB - 2)
    assert json.loads(p.stdout)["new_tokens"] == [greedy[:10]]
    # A malformed config: an error naming the file and the key or the byte, for both.
    (folder / "genai_config.json").write_text('{"model": {"eos_token_id": [1, "x"]}}')
    with pytest.raises(op.InvalidArgument, match="model.eos_token_id must be an integer"):
        og.Model(folder)
    (folder / "genai_config.json").write_text('{"model": ')
    with pytest.raises(op.InvalidArgument, match="genai_config.json: not JSON: at byte 10"):
        og.Model(folder / "decoder.onnx")
    p = cli("complete", folder, "--prompt", "1,2", "--max-new-tokens", 2)
    assert p.returncode == 2 and "genai_config.json: not JSON: at byte 10" in p.stderr
