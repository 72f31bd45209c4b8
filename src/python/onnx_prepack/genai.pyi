# Type stubs of onnx_prepack.genai (docs/python.md, "Generation").
import os
from typing import Any, Sequence, Union

import numpy as np

_Path = Union[str, "os.PathLike[str]"]
_Tokens = Union[Sequence[int], Sequence[Sequence[int]], np.ndarray]

class Model:
    path: str
    config_path: str | None  # the genai_config.json whose defaults apply
    def __init__(self, path: _Path, *, threads: int | None = ..., verify: str | None = ...,
                 cache: _Path | None = ..., weights: str | None = ...,
                 memo_dir: _Path | None = ..., qdq: str | None = ...) -> None: ...
    @property
    def threads(self) -> int: ...

class GeneratorParams:
    def __init__(self, model: Model) -> None: ...
    def set_search_options(self, *, max_length: int = ..., max_new_tokens: int = ...,
                           do_sample: bool = ..., top_k: int = ..., top_p: float = ...,
                           temperature: float = ..., random_seed: int = ...,
                           stop_token_ids: Sequence[int] = ...,
                           pad_token_id: int = ...) -> None: ...

class Generator:
    def __init__(self, model: Model, params: GeneratorParams) -> None: ...
    def append_tokens(self, tokens: _Tokens) -> None: ...
    def generate_next_token(self) -> None: ...
    def is_done(self) -> bool: ...
    def get_next_tokens(self) -> np.ndarray: ...  # int64 [batch]
    def get_sequence(self, index: int) -> np.ndarray: ...  # int64
    def get_logits(self) -> np.ndarray: ...  # float32 [batch, vocab]
    @property
    def batch_size(self) -> int: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def form(self) -> str: ...
    def stats(self) -> dict[str, Any]: ...

def generate(model: Model, prompts: _Tokens, params: GeneratorParams | None = ...,
             **search_options: Any) -> list[np.ndarray]: ...
