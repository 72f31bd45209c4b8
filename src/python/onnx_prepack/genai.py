"""Token generation with onnxruntime-genai's Python API (docs/python.md, "Generation").

``Model``, ``GeneratorParams`` and ``Generator`` shaped like ``onnxruntime_genai``'s,
over the engine's Generator (include/onnx_prepack/generator.hpp, docs/llm.md): this
layer only shapes the arguments and maps onnxruntime-genai's option names; every rule
(empty prompt, token ids outside the vocabulary, parameter ranges, a model that is no
decoder) is the engine's, raised as the package's exception classes. Tokenization stays
with the caller: prompts and results are token ids.

    import onnx_prepack.genai as og
    model = og.Model("model.onnx")
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=64)
    gen = og.Generator(model, params)
    gen.append_tokens([1, 2, 3])
    while not gen.is_done():
        gen.generate_next_token()
    ids = gen.get_sequence(0)
"""
from __future__ import annotations

import os

import numpy as np

from . import InvalidArgument
from . import _onnx_prepack as _core

__all__ = ["Model", "GeneratorParams", "Generator", "generate"]

def _flag(v):
    """A bool, or the ints 0 / 1 (not any truthy value: "no" is no flag)."""
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1)):
        return bool(v)
    raise ValueError("expected True or False")


# onnxruntime-genai's search option names (and ours) -> (engine field, conversion).
_OPTIONS = {
    "max_length": ("max_length", int),
    "max_new_tokens": ("max_new_tokens", int),
    "do_sample": ("do_sample", _flag),
    "top_k": ("top_k", int),
    "top_p": ("top_p", float),
    "temperature": ("temperature", float),
    "random_seed": ("seed", int),
    "stop_token_ids": ("stop_ids", lambda v: [int(i) for i in v]),
    "pad_token_id": ("pad_token_id", int),
}


class Model:
    """A decoder model on one engine: ``Model(path, *, threads=None, verify=None,
    cache=None, weights=None, memo_dir=None, qdq=None)``.

    ``path``: a model file, or a folder as onnxruntime-genai's builder writes it
    (``genai_config.json``'s ``model.decoder.filename``, else ``model.onnx``). A
    ``genai_config.json`` beside the model gives the defaults of stop_token_ids
    (its ``eos_token_id``), pad_token_id and max_length (``search.max_length``,
    when neither max_length nor max_new_tokens is set); search options override
    them. ``config_path``: that file, or None. The keywords are InferenceSession's,
    passed to the engine. Generators made on one model share its engine and take
    turns on it.
    """

    def __init__(self, path, *, threads=None, verify=None, cache=None, weights=None,
                 memo_dir=None, qdq=None):
        # A file or a folder; genai_config.json beside the model gives the defaults
        # (read by the engine, as for `onnx-prepack complete`).
        located = _core.genai_model(os.fspath(path))
        path = located["model_path"]
        self.config_path = located["config_path"]
        self._config = located["config"]
        args = {}
        for name, v in (("verify", verify), ("weights", weights), ("qdq", qdq)):
            if v is not None:
                args[name] = str(v)
        if cache is not None:
            args["cache"] = cache
        if memo_dir is not None:
            args["memo_dir"] = memo_dir
        if threads is not None:
            if int(threads) < 0:
                raise InvalidArgument(f"threads must be >= 0, got {threads}")
            args["threads"] = int(threads)
        self.path = path
        self._core = _core.GenModel(path, **args)

    @property
    def threads(self):
        """The engine's thread count."""
        return self._core.threads

    def __repr__(self):
        return f"Model('{self.path}')"


class GeneratorParams:
    """The search options of a generation (docs/llm.md, "Parameters")."""

    def __init__(self, model):
        if not isinstance(model, Model):
            raise InvalidArgument("GeneratorParams needs an onnx_prepack.genai.Model")
        self._core = _core.GeneratorParams()
        self._given = {}  # the engine's fields the caller set: they override genai_config.json

    def set_search_options(self, **options):
        """Sets onnxruntime-genai's options: max_length, do_sample, top_k, top_p,
        temperature, random_seed (-1: a random seed, as onnxruntime-genai), and
        max_new_tokens, stop_token_ids, pad_token_id. An unknown name raises TypeError
        naming it; a value of the wrong kind raises InvalidArgument (a ValueError)."""
        for name in options:
            if name not in _OPTIONS:
                raise TypeError(f"set_search_options() got an unknown search option '{name}' "
                                f"(known: {', '.join(_OPTIONS)})")
        for name, value in options.items():
            field, convert = _OPTIONS[name]
            try:
                v = convert(value)
            except (TypeError, ValueError) as e:
                raise InvalidArgument(
                    f"search option {name}: {value!r} is not valid ({e})") from None
            if name == "random_seed" and v == -1:
                v = int.from_bytes(os.urandom(8), "little") >> 1
            if name == "random_seed" and v < 0:
                raise InvalidArgument(f"search option random_seed must be >= 0 or -1, got {v}")
            setattr(self._core, field, v)
            self._given[field] = v

    def __repr__(self):
        c = self._core
        return (f"GeneratorParams(max_length={c.max_length}, max_new_tokens={c.max_new_tokens}, "
                f"do_sample={c.do_sample}, top_k={c.top_k}, top_p={c.top_p}, "
                f"temperature={c.temperature}, random_seed={c.seed}, "
                f"stop_token_ids={c.stop_ids}, pad_token_id={c.pad_token_id})")


def _row(tokens, what):
    a = np.asarray(tokens)
    if a.size == 0:
        return []
    if a.dtype.kind not in "iu":
        raise InvalidArgument(f"{what}: token ids must be integers, got dtype {a.dtype}")
    if a.ndim != 1:
        raise InvalidArgument(f"{what}: expected one row of token ids, got shape {a.shape}")
    return a.astype(np.int64).tolist()


def _rows(tokens):
    """Rows of int ids: a list or 1-D array is one sequence; a 2-D array or a list of
    lists (rows may differ in length) is a batch."""
    if isinstance(tokens, (list, tuple)) and tokens and all(
            isinstance(t, (list, tuple, np.ndarray)) for t in tokens):
        return [_row(t, f"tokens row {i}") for i, t in enumerate(tokens)]
    a = np.asarray(tokens)
    if a.ndim == 2:
        if a.size and a.dtype.kind not in "iu":
            raise InvalidArgument(f"tokens: token ids must be integers, got dtype {a.dtype}")
        return a.astype(np.int64).tolist()
    if a.ndim > 2:
        raise InvalidArgument(f"tokens: expected 1-D or 2-D token ids, got shape {a.shape}")
    return [_row(a.reshape(-1), "tokens")]


def _effective(model, params):
    """The parameters a generation runs with: the options set over the model's
    genai_config.json defaults (the engine's precedence, engine/genai_config.h)."""
    return _core.resolve_params(model._config, params._given)


class Generator:
    """The KV-cache loop of one generation: ``Generator(model, params)``."""

    def __init__(self, model, params):
        if not isinstance(model, Model):
            raise InvalidArgument("Generator needs an onnx_prepack.genai.Model")
        if not isinstance(params, GeneratorParams):
            raise InvalidArgument("Generator needs an onnx_prepack.genai.GeneratorParams")
        self._core = _core.Generator(model._core, _effective(model, params))

    def append_tokens(self, tokens):
        """The prompt: a list or 1-D int32/int64 array (one sequence), or a 2-D array
        or list of lists (a batch); runs the prompt step. A later call (batch 1)
        appends more tokens to the sequence."""
        self._core.append_tokens(_rows(tokens))

    def generate_next_token(self):
        """One decode step: each sequence's next token."""
        self._core.generate_next_token()

    def is_done(self):
        """Every sequence is done (stop id, max_new_tokens or max_length)."""
        return self._core.is_done()

    def get_next_tokens(self):
        """int64 [batch]: the token each sequence chose in the last step."""
        return self._core.get_next_tokens()

    def get_sequence(self, index):
        """int64: the prompt and generated ids of sequence ``index``, padding excluded."""
        return self._core.get_sequence(int(index))

    def get_logits(self):
        """float32 [batch, vocab]: the last step's logits of each sequence's last token."""
        return self._core.get_logits()

    @property
    def batch_size(self):
        return self._core.batch_size

    @property
    def vocab_size(self):
        return self._core.vocab_size

    @property
    def form(self):
        """The decoder form: 'genai' or 'optimum' (docs/llm.md)."""
        return self._core.form

    def stats(self):
        """GenerationStats as a dict: first_token_ms, decode_ms, decode_steps,
        decode_tokens_per_second, prompt_tokens, new_tokens, plan_ms."""
        return self._core.stats()


def generate(model, prompts, params=None, **search_options):
    """The whole loop in one call: each prompt's sequence (prompt + generated ids) as
    an int64 array. ``params`` (a GeneratorParams) and/or search options by keyword,
    the keywords applied over a copy of ``params``."""
    if not isinstance(model, Model):
        raise InvalidArgument("generate needs an onnx_prepack.genai.Model")
    p = GeneratorParams(model)
    if params is not None:
        for field in ("max_length", "max_new_tokens", "do_sample", "top_k", "top_p",
                      "temperature", "seed", "stop_ids", "pad_token_id"):
            setattr(p._core, field, getattr(params._core, field))
        p._given = dict(params._given)
    p.set_search_options(**search_options)
    result = _core.generate(model._core, _rows(prompts), _effective(model, p))
    return [np.asarray(s, dtype=np.int64) for s in result["sequences"]]
