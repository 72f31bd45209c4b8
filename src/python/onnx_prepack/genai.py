"""onnxruntime-genai's Python API, the common loop, on onnx-prepack's engine.

``import onnx_prepack.genai as og`` then, as with ``onnxruntime_genai``::

    model = og.Model("model_dir")            # a folder (genai_config.json, model.onnx) or a file
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=64, do_sample=True, top_p=0.9, random_seed=7)
    generator = og.Generator(model, params)
    generator.append_tokens([1, 15043, 3186])  # ids: tokenization stays with the caller
    while not generator.is_done():
        generator.generate_next_token()
    ids = generator.get_sequence(0)

    og.generate(model, [[1, 15043], [1, 450, 4996]], max_new_tokens=16)  # the whole loop

A thin adapter: onnxruntime-genai's option names become the engine's here; the
loop, the checks and genai_config.json's defaults are the engine's
(include/onnx_prepack/generator.hpp, docs/python.md "onnx_prepack.genai").
"""
from __future__ import annotations

import difflib
import threading

from . import _onnx_prepack as _core
from ._onnx_prepack import InvalidArgument
from ._onnx_prepack import NotImplemented as _NotImplemented

__all__ = ["Model", "GeneratorParams", "Generator", "generate", "SEARCH_OPTIONS"]

# onnxruntime-genai's search option -> the engine's name; the last three are onnx-prepack's own
# (onnxruntime-genai reads them from genai_config.json only).
_MAPPED = {
    "max_length": "max_length",
    "do_sample": "do_sample",
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "random_seed": "seed",
    "max_new_tokens": "max_new_tokens",
    "eos_token_id": "stop_ids",
    "pad_token_id": "pad_token_id",
}
# onnxruntime-genai's options the engine has no counterpart for: accepted at the value that
# changes nothing, NotImplemented otherwise.
_NEUTRAL = {
    "min_length": 0,
    "num_beams": 1,
    "num_return_sequences": 1,
    "repetition_penalty": 1.0,
    "length_penalty": 1.0,
    "diversity_penalty": 0.0,
    "no_repeat_ngram_size": 0,
}
# Accepted and without effect: the engine always shares one past/present buffer (genai form),
# stops each sequence on its own, and takes the batch size from the rows given.
_IGNORED = ("early_stopping", "past_present_share_buffer", "batch_size")

SEARCH_OPTIONS = tuple(_MAPPED) + tuple(_NEUTRAL) + _IGNORED


def _engine_options(options):
    """onnxruntime-genai's keywords -> the engine's (InvalidArgument for an unknown name)."""
    out = {}
    for name, value in options.items():
        if name in _MAPPED:
            out[_MAPPED[name]] = value
        elif name in _NEUTRAL:
            if value != _NEUTRAL[name]:
                raise _NotImplemented(
                    f"search option {name}={value!r} is not supported: onnx-prepack generates "
                    f"greedily or by sampling ({name}={_NEUTRAL[name]!r} only)")
        elif name not in _IGNORED:
            near = difflib.get_close_matches(name, SEARCH_OPTIONS, n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise InvalidArgument(f"search option '{name}' is not known{hint} (known: "
                                  f"{', '.join(SEARCH_OPTIONS)})")
    return out


class Model:
    """A decoder on onnx-prepack's engine, as ``onnxruntime_genai.Model``.

    ``path``: a model file, or a folder holding ``genai_config.json`` (its
    ``model.decoder.filename``, else ``model.onnx``) or ``model.onnx``. A
    ``genai_config.json`` beside the model gives the defaults of eos_token_id
    (the stop ids), pad_token_id and max_length. Keywords are the engine's
    options, as for ``InferenceSession``. Each generator alive at the same time
    gets its own engine (the first is made here, later ones on demand, sharing
    the parsed model).
    """

    def __init__(self, path, *, threads=None, verify=None, cache=None, memo_dir=None,
                 weights=None, cache_max_bytes=None):
        self._located = _core.genai_model(path)
        args = {}
        for k, v in (("verify", verify), ("weights", weights)):
            if v is not None:
                args[k] = str(v)
        for k, v in (("cache", cache), ("memo_dir", memo_dir)):
            if v is not None:
                args[k] = v
        if cache_max_bytes is not None:
            args["cache_max_bytes"] = int(cache_max_bytes)
        if threads is not None:
            if int(threads) < 0:
                raise InvalidArgument(f"threads must be >= 0, got {threads}")
            args["threads"] = int(threads)
        self._first = _core.Session(self._located.model_path, **args)
        self._free = [self._first]
        self._lock = threading.Lock()

    @property
    def path(self):
        """The model file opened."""
        return self._located.model_path

    @property
    def config_path(self):
        """The genai_config.json whose defaults apply, or None."""
        return self._located.config_path

    @property
    def device_type(self):
        """"cpu": onnx-prepack runs on the CPU."""
        return "cpu"

    def _acquire(self):
        with self._lock:
            if self._free:
                return self._free.pop()
        return self._first.fork()

    def _release(self, session):
        with self._lock:
            self._free.append(session)


class GeneratorParams:
    """Search options for generators of ``model``, as ``onnxruntime_genai.GeneratorParams``."""

    def __init__(self, model):
        if not isinstance(model, Model):
            raise InvalidArgument("GeneratorParams needs an onnx_prepack.genai.Model, got "
                                  f"{type(model).__name__}")
        self._model = model
        self._options = {}

    def set_search_options(self, **options):
        """onnxruntime-genai's names: max_length, do_sample, temperature, top_k, top_p,
        random_seed, and min_length, num_beams, num_return_sequences, repetition_penalty,
        length_penalty, diversity_penalty, no_repeat_ngram_size at their neutral values
        (early_stopping, past_present_share_buffer, batch_size accepted, without effect); and
        onnx-prepack's max_new_tokens, eos_token_id (an id or a list: the stop ids) and
        pad_token_id. Later calls add to (and override) earlier ones."""
        self._options.update(_engine_options(options))

    @property
    def search_options(self):
        """The options set so far, in the engine's names."""
        return dict(self._options)


class Generator:
    """The generation loop, as ``onnxruntime_genai.Generator``: append_tokens (the prompt
    step), then generate_next_token until is_done. Token ids come back as int32 numpy arrays
    (onnxruntime-genai's type)."""

    def __init__(self, model, params):
        if not isinstance(model, Model):
            raise InvalidArgument(f"Generator needs an onnx_prepack.genai.Model, got "
                                  f"{type(model).__name__}")
        if not isinstance(params, GeneratorParams):
            raise InvalidArgument(f"Generator needs an onnx_prepack.genai.GeneratorParams, got "
                                  f"{type(params).__name__}")
        self._model = model
        self._session = model._acquire()
        try:
            self._gen = _core.Generator(self._session, model._located, params._options)
        except BaseException:
            model._release(self._session)
            self._session = None
            raise

    def __del__(self):
        self.close()

    def close(self):
        """Ends the generator now (else when it is collected): its engine goes back to the
        model for the next generator."""
        session = getattr(self, "_session", None)
        if session is None:
            return
        self._gen = None
        self._session = None
        self._model._release(session)

    def _g(self):
        if self._session is None:
            raise InvalidArgument("the generator is closed")
        return self._gen

    def append_tokens(self, tokens):
        """The prompt: a list of ids (one sequence), a list of rows (a batch; rows may differ
        in length) or a 1-D / 2-D int32 or int64 numpy array. Runs the prompt step. A later
        call (batch 1) appends more ids."""
        self._g().append_tokens(tokens)

    def generate_next_token(self):
        """One decode step: every sequence not done chooses its next token."""
        self._g().generate_next_token()

    def is_done(self):
        """True when every sequence is done (an eos id, max_new_tokens or max_length)."""
        return self._g().is_done()

    def get_next_tokens(self):
        """The token each sequence chose in the last step (int32, one per sequence)."""
        return self._g().get_next_tokens()

    def get_sequence(self, index):
        """Sequence `index`'s prompt and generated ids (int32), padding excluded."""
        return self._g().get_sequence(index)

    def get_logits(self):
        """The last step's logits, float32 [batch, vocab_size]."""
        return self._g().get_logits()

    def stats(self):
        """first_token_ms, decode_ms, decode_steps, decode_tokens_per_second, prompt_tokens,
        new_tokens, plan_ms (milliseconds), form."""
        return self._g().stats()

    @property
    def params(self):
        """The parameters in effect: the caller's options over genai_config.json's defaults."""
        return self._g().params()

    @property
    def form(self):
        """The decoder's form: "genai" or "optimum"."""
        return self._g().form


def generate(model, prompts, **search_options):
    """The whole loop in one call: ``prompts`` as for Generator.append_tokens, the keywords as
    for GeneratorParams.set_search_options. Returns each prompt's sequence (prompt and generated
    ids) as a list of ints."""
    if not isinstance(model, Model):
        raise InvalidArgument(f"generate needs an onnx_prepack.genai.Model, got "
                              f"{type(model).__name__}")
    options = _engine_options(search_options)
    session = model._acquire()
    try:
        return _core.generate(session, model._located, prompts, options)["sequences"]
    finally:
        model._release(session)
