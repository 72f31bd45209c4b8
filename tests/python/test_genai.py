"""onnx_prepack.genai (onnxruntime-genai's Python API over the engine's Generator)
against `onnx-prepack complete --json` on the same tiny decoder: the same greedy
tokens, batches, seeded sampling, and the engine's errors as the package's
exception classes."""
import json
import os
import subprocess

import numpy as np
import pytest

import onnx_prepack as op
import onnx_prepack.genai as og

CLI = os.environ.get("ONNX_PREPACK_CLI", "onnx-prepack")
PROMPT = [5, 17, 300, 42, 7, 99, 128, 3]
SHORT = [11, 23, 250, 4, 61]


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module", params=["genai", "optimum"])
def decoder(request, tmp_path_factory):
    """A folder holding model.onnx (onnxruntime-genai's layout), per form."""
    d = tmp_path_factory.mktemp("decoder_" + request.param)
    cli("generate", "decoder", "--preset", "tiny", "--form", request.param,
        "-o", d / "model.onnx")
    return d


def complete(model_path, *prompts, extra=()):
    args = ["complete", model_path, "--threads", "1", "--json", *extra]
    for p in prompts:
        args += ["--prompt", ",".join(map(str, p))]
    return json.loads(cli(*args))


def loop(model, tokens, **options):
    params = og.GeneratorParams(model)
    params.set_search_options(**options)
    gen = og.Generator(model, params)
    gen.append_tokens(tokens)
    steps = 0
    while not gen.is_done():
        gen.generate_next_token()
        steps += 1
        assert steps < 1000
    return gen


def test_greedy_tokens_equal_the_cli(decoder):
    want = complete(decoder / "model.onnx", PROMPT, extra=["--max-new-tokens", 8])
    model = og.Model(decoder, threads=1)  # the folder
    gen = loop(model, PROMPT, max_new_tokens=8, do_sample=False)
    seq = gen.get_sequence(0)
    assert seq.dtype == np.int64
    assert seq.tolist() == want["sequences"][0]
    assert len(seq) == len(PROMPT) + 8
    assert gen.get_next_tokens().dtype == np.int64
    assert gen.get_next_tokens().tolist() == [seq[-1]]
    assert gen.form == want["form"]
    stats = gen.stats()
    assert stats["prompt_tokens"] == len(PROMPT)
    assert stats["new_tokens"] == 8
    # max_length (onnxruntime-genai's name) gives the same tokens.
    gen = loop(model, np.array(PROMPT, dtype=np.int32), max_length=len(PROMPT) + 8)
    assert gen.get_sequence(0).tolist() == want["sequences"][0]
    # One call.
    out = og.generate(model, [PROMPT], max_new_tokens=8)
    assert [s.tolist() for s in out] == want["sequences"]


def test_batch_of_two_equals_the_cli(decoder):
    want = complete(decoder / "model.onnx", PROMPT, SHORT, extra=["--max-new-tokens", 6])
    model = og.Model(decoder / "model.onnx", threads=1)
    gen = loop(model, [PROMPT, SHORT], max_new_tokens=6)  # ragged list of lists
    assert gen.batch_size == 2
    assert [gen.get_sequence(i).tolist() for i in range(2)] == want["sequences"]
    assert gen.get_next_tokens().shape == (2,)
    assert gen.get_logits().shape == (2, gen.vocab_size)
    # Equal lengths as a 2-D int64 array.
    rows = np.array([PROMPT[:5], SHORT], dtype=np.int64)
    want2 = complete(decoder / "model.onnx", PROMPT[:5], SHORT, extra=["--max-new-tokens", 4])
    gen = loop(model, rows, max_new_tokens=4)
    assert [gen.get_sequence(i).tolist() for i in range(2)] == want2["sequences"]
    out = og.generate(model, rows, max_new_tokens=4)
    assert [s.tolist() for s in out] == want2["sequences"]


def test_seeded_sampling_is_reproducible_and_equals_the_cli(decoder):
    opts = dict(max_new_tokens=10, do_sample=True, top_k=40, top_p=0.9, temperature=0.7)
    want = complete(decoder / "model.onnx", PROMPT,
                    extra=["--max-new-tokens", 10, "--sample", "--top-k", 40, "--top-p", 0.9,
                           "--temperature", 0.7, "--seed", 77])
    model = og.Model(decoder, threads=1)
    a = loop(model, PROMPT, random_seed=77, **opts).get_sequence(0).tolist()
    b = loop(model, PROMPT, random_seed=77, **opts).get_sequence(0).tolist()
    assert a == b == want["sequences"][0]
    others = {tuple(loop(model, PROMPT, random_seed=s, **opts).get_sequence(0).tolist())
              for s in range(1, 6)}
    assert len(others) > 1  # the seed matters


def test_stop_token_ids_end_the_sequence(decoder):
    model = og.Model(decoder, threads=1)
    first = loop(model, PROMPT, max_new_tokens=4).get_sequence(0)[len(PROMPT)]
    gen = loop(model, PROMPT, max_new_tokens=4, stop_token_ids=[int(first)])
    assert gen.get_sequence(0).tolist() == PROMPT + [first]


def test_errors_raise_the_package_classes(decoder):
    model = og.Model(decoder, threads=1)
    params = og.GeneratorParams(model)
    params.set_search_options(max_new_tokens=4)
    with pytest.raises(op.InvalidArgument, match="empty"):
        og.Generator(model, params).append_tokens([])
    with pytest.raises(op.InvalidArgument, match=r"token id 512 in row 0 is outside \[0, 512\)"):
        og.Generator(model, params).append_tokens([1, 512])
    with pytest.raises(op.InvalidArgument, match="token id -3 in row 1"):
        og.Generator(model, params).append_tokens([[1, 2], [-3]])
    with pytest.raises(op.InvalidArgument, match="integers"):
        og.Generator(model, params).append_tokens(np.array([1.5, 2.0]))
    with pytest.raises(TypeError, match="unknown search option 'max_lenght'"):
        params.set_search_options(max_lenght=8)
    with pytest.raises(ValueError, match="search option top_k"):
        params.set_search_options(top_k="many")
    with pytest.raises(ValueError, match="search option do_sample"):
        params.set_search_options(do_sample="no")
    gen = og.Generator(model, params)
    with pytest.raises(op.InvalidArgument, match="append_tokens"):
        gen.generate_next_token()
    gen.append_tokens([1, 2, 3])
    with pytest.raises(op.InvalidArgument, match="index 1 is outside the batch of 1"):
        gen.get_sequence(1)
    # The engine's parameter rules.
    bad = og.GeneratorParams(model)
    bad.set_search_options(max_new_tokens=4, do_sample=True, top_p=1.5)
    with pytest.raises(op.InvalidArgument, match="top_p"):
        og.Generator(model, bad)
    with pytest.raises(op.InvalidArgument, match="max_length"):
        og.Generator(model, og.GeneratorParams(model))
    with pytest.raises(op.NoSuchFile):
        og.Model(decoder / "missing.onnx")
    with pytest.raises(op.InvalidArgument, match="verify"):
        og.Model(decoder, verify="sometimes")


def test_model_options_pass_to_the_engine(decoder):
    assert og.Model(decoder, threads=2).threads == 2
    assert og.Model(decoder, threads=1, verify="off", weights="plain").threads == 1
