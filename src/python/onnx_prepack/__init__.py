"""onnx-prepack: ONNX models with persisted packed weights, on a CPU runtime.

The package is a thin adapter of the engine: the compiled core
``onnx_prepack._onnx_prepack`` (one engine per ``Session``, the JSON functions,
the exception classes) and, here, onnxruntime's Python-level API over it:
``InferenceSession`` with ``SessionOptions`` and providers, ``RunOptions``,
``OrtValue``, ``IOBinding``, ``ModelMetadata`` (docs/python.md). Token generation with
onnxruntime-genai's API is the submodule ``onnx_prepack.genai``.
"""
from __future__ import annotations

import ctypes
import enum
import json
import logging
import os
import sys
import threading
import time
import types
import warnings

import numpy as np

from . import _onnx_prepack as _core
from ._onnx_prepack import (  # noqa: F401 - re-exported
    DeadlineExceeded,
    EngineError,
    EPFail,
    Fail,
    InvalidArgument,
    InvalidGraph,
    InvalidProtobuf,
    ModelLoaded,
    NodeArg,
    NoModel,
    NoSuchFile,
    NotImplemented,  # noqa: A004 - onnxruntime's name
    OnnxPrepackError,
    RuntimeException,
    __version__,
    check,
    compile,  # noqa: A004 - the CLI's verb
    digest,
    explain,
    inspect,
)

__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
    "ExecutionMode", "ModelMetadata", "OrtValue", "IOBinding", "SessionIOBinding", "NodeArg",
    "get_available_providers", "get_all_providers", "get_device",
    "OnnxPrepackError", "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError",
    "RuntimeException", "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph",
    "EPFail", "DeadlineExceeded", "compile", "explain", "check", "digest", "inspect",
    "__version__",
]

# onnxruntime's module path of its exception classes, for code that imports them
# from there: `from onnx_prepack.capi.onnxruntime_pybind11_state import Fail`.
capi = types.ModuleType("onnx_prepack.capi", "onnxruntime's module layout (exceptions only).")
capi.onnxruntime_pybind11_state = types.ModuleType(
    "onnx_prepack.capi.onnxruntime_pybind11_state",
    "The exception classes under onnxruntime's module path.")
for _name in ("OnnxPrepackError", "Fail", "InvalidArgument", "NoSuchFile", "NoModel",
              "EngineError", "RuntimeException", "InvalidProtobuf", "ModelLoaded",
              "NotImplemented", "InvalidGraph", "EPFail", "DeadlineExceeded"):
    setattr(capi.onnxruntime_pybind11_state, _name, getattr(_core, _name))
sys.modules[capi.__name__] = capi
sys.modules[capi.onnxruntime_pybind11_state.__name__] = capi.onnxruntime_pybind11_state
del _name

_logger = logging.getLogger("onnx_prepack")

CPU = "CPUExecutionProvider"

# onnxruntime's provider names: accepted (with a warning, run on the CPU) so that
# code written for onnxruntime runs unchanged.
_ORT_PROVIDERS = (
    "TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider",
    "ROCMExecutionProvider", "OpenVINOExecutionProvider", "DnnlExecutionProvider",
    "VitisAIExecutionProvider", "QNNExecutionProvider", "NnapiExecutionProvider",
    "VSINPUExecutionProvider", "JsExecutionProvider", "CoreMLExecutionProvider",
    "ArmNNExecutionProvider", "ACLExecutionProvider", "DmlExecutionProvider",
    "RknpuExecutionProvider", "WebNNExecutionProvider", "WebGpuExecutionProvider",
    "XnnpackExecutionProvider", "CANNExecutionProvider", "AzureExecutionProvider",
    CPU,
)


def get_available_providers():
    """The execution providers of this build: ``["CPUExecutionProvider"]``."""
    return [CPU]


def get_all_providers():
    """Every provider name onnxruntime knows; all but the CPU one fall back to the CPU here."""
    return list(_ORT_PROVIDERS)


def get_device():
    """The device sessions run on: ``"CPU"``."""
    return "CPU"


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's optimization levels. Accepted; the runtime's plan-time folding and
    fusion are bitwise neutral and always on, so the level changes nothing."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's execution modes. Nodes always run in order (sequential); the
    kernels themselves use ``intra_op_num_threads`` threads."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


# Session config entries for onnx-prepack's own options (also attributes of
# SessionOptions): the key, the attribute.
_CONFIG_KEYS = {
    "onnx_prepack.verify": "verify",
    "onnx_prepack.cache": "cache",
    "onnx_prepack.weights": "weights",
    "onnx_prepack.qdq": "qdq",
    "onnx_prepack.memo_dir": "memo_dir",
    "onnx_prepack.cache_max_bytes": "cache_max_bytes",
    "onnx_prepack.base_dir": "base_dir",
    "onnx_prepack.prepare": "prepare",
    "onnx_prepack.parallel_runs": "parallel_runs",
    "onnx_prepack.float16_intermediates": "float16_intermediates",
}
_FALLBACK_KEY = "session.disable_cpu_ep_fallback"


class SessionOptions:
    """Options of an InferenceSession, as onnxruntime's ``SessionOptions``.

    onnxruntime's attributes: ``intra_op_num_threads`` (0 = all cores: the
    engine's ``threads``), ``inter_op_num_threads``, ``execution_mode`` and
    ``graph_optimization_level`` (accepted, no effect), ``enable_profiling``
    and ``profile_file_prefix`` (see ``InferenceSession.end_profiling``),
    ``log_severity_level`` (0 verbose .. 4 fatal; <= 1 logs loads and runs to
    the ``logging`` logger "onnx_prepack"), ``log_verbosity_level``, ``logid``,
    ``enable_cpu_mem_arena``, ``enable_mem_pattern``, ``enable_mem_reuse``,
    ``use_deterministic_compute`` (runs are always deterministic),
    ``optimized_model_filepath`` (not supported: setting it raises at load).

    onnx-prepack's own options, None meaning the engine's default (also
    settable as session config entries ``onnx_prepack.<name>``): ``verify``,
    ``cache``, ``weights``, ``qdq`` ("exact" or "integer": weight-only QDQ units
    as the graph's float product, or on the int8 kernels), ``memo_dir``,
    ``cache_max_bytes``, ``base_dir``, ``prepare`` ("eager" or "lazy"), ``parallel_runs``
    (engines per session) and ``float16_intermediates`` ("float16", every FLOAT16 output
    rounded as ONNX defines, or "float", float between float-computed nodes as ONNX
    Runtime's CPU provider keeps them).
    Unknown attributes raise AttributeError (a typo is not silently ignored).
    """

    __slots__ = (
        "intra_op_num_threads", "inter_op_num_threads", "execution_mode",
        "graph_optimization_level", "enable_profiling", "profile_file_prefix",
        "log_severity_level", "log_verbosity_level", "logid", "enable_cpu_mem_arena",
        "enable_mem_pattern", "enable_mem_reuse", "use_deterministic_compute",
        "optimized_model_filepath", "verify", "cache", "weights", "qdq", "memo_dir",
        "cache_max_bytes", "base_dir", "prepare", "parallel_runs", "float16_intermediates",
        "_config",
    )

    def __init__(self):
        """Every option at its default."""
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.enable_profiling = False
        self.profile_file_prefix = "onnx_prepack_profile"
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self.optimized_model_filepath = ""
        self.verify = None
        self.cache = None
        self.weights = None
        self.qdq = None
        self.memo_dir = None
        self.cache_max_bytes = None
        self.base_dir = None
        self.prepare = None
        self.parallel_runs = None
        self.float16_intermediates = None
        self._config = {}

    def add_session_config_entry(self, config_key, config_value):
        """Sets a session config entry (str -> str). ``onnx_prepack.*`` keys set our options;
        ``session.disable_cpu_ep_fallback`` = "1" makes a non-CPU provider an EPFail error;
        other keys are kept and have no effect."""
        self._config[str(config_key)] = str(config_value)

    def get_session_config_entry(self, config_key):
        """The value of a config entry; RuntimeException (a RuntimeError) when it is not set."""
        try:
            return self._config[str(config_key)]
        except KeyError:
            raise RuntimeException(
                f"SessionOptions does not have configuration with key: {config_key}") from None

    def add_initializer(self, name, value):
        """Not supported: raises NotImplemented (a NotImplementedError)."""
        raise NotImplemented("SessionOptions.add_initializer is not supported by onnx-prepack")

    def add_external_initializers(self, names, values):
        """Not supported: raises NotImplemented (a NotImplementedError)."""
        raise NotImplemented(
            "SessionOptions.add_external_initializers is not supported by onnx-prepack")

    def register_custom_ops_library(self, library_path):
        """Not supported (no custom operators): raises NotImplemented."""
        raise NotImplemented("custom operator libraries are not supported by onnx-prepack")

    def _copy(self):
        c = SessionOptions()
        for k in self.__slots__:
            setattr(c, k, getattr(self, k))
        c._config = dict(self._config)
        return c

    def _own(self, attr):
        """Our option `attr`: the attribute, else its config entry, else None."""
        v = getattr(self, attr)
        if v is not None:
            return v
        for key, a in _CONFIG_KEYS.items():
            if a == attr and key in self._config:
                return self._config[key]
        return None

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__ if k != "_config")
        return f"SessionOptions({fields}, config={self._config!r})"


# Run config entries for onnx-prepack's own run options: the key, the attribute.
_RUN_CONFIG_KEYS = {"onnx_prepack.deadline_ms": "deadline_ms"}


class RunOptions:
    """Options of one run, as onnxruntime's ``RunOptions``.

    ``terminate``: set it to True, from any thread, to stop the runs using
    these options: a run in progress stops at its next check (before each
    node, each If/Loop/Scan body run, every few thousand steps of a long
    kernel) and a run that starts while it is True does not start; either
    raises Fail ("Exiting due to terminate flag being set to true."), and the
    session stays usable. ``logid``: the run's tag, prefixed to its error
    messages and log lines. ``log_severity_level`` (<= 1 logs the run to the
    "onnx_prepack" logger), ``log_verbosity_level``,
    ``only_execute_path_to_fetches`` (accepted: the plan computes what the
    outputs need) and other run config entries are kept and have no effect.

    onnx-prepack's own: ``deadline_ms`` (None or 0 = none; also the run config
    entry ``onnx_prepack.deadline_ms``): a run still going that many
    milliseconds after it started (planning included, waiting for a free
    engine not) stops with DeadlineExceeded (a Fail and a TimeoutError).
    """

    __slots__ = ("log_severity_level", "log_verbosity_level", "logid", "_flag",
                 "only_execute_path_to_fetches", "deadline_ms", "_config")

    def __init__(self):
        """Every option at its default."""
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self._flag = _core.RunFlag()
        self.only_execute_path_to_fetches = False
        self.deadline_ms = None
        self._config = {}

    @property
    def terminate(self):
        """True once set: the runs using these options stop (thread-safe)."""
        return self._flag.terminate

    @terminate.setter
    def terminate(self, value):
        self._flag.terminate = bool(value)

    def add_run_config_entry(self, config_key, config_value):
        """Sets a run config entry (str -> str); ``onnx_prepack.deadline_ms`` sets
        ``deadline_ms``, other keys are kept and have no effect."""
        self._config[str(config_key)] = str(config_value)

    def get_run_config_entry(self, config_key):
        """The value of a run config entry; RuntimeException when it is not set."""
        try:
            return self._config[str(config_key)]
        except KeyError:
            raise RuntimeException(
                f"RunOptions does not have configuration with key: {config_key}") from None

    def _deadline(self):
        """deadline_ms as an int >= 0 (the attribute, else its config entry, else 0)."""
        v = self.deadline_ms
        what = "RunOptions.deadline_ms"
        if v is None:
            for key in _RUN_CONFIG_KEYS:
                if key in self._config:
                    v, what = self._config[key], f"run config entry {key}"
        if v is None:
            return 0
        try:
            ms = int(v)
        except (TypeError, ValueError):
            raise InvalidArgument(f"{what} must be an integer number of milliseconds, "
                                  f"got {v!r}") from None
        if ms < 0 or ms > 1 << 40:
            raise InvalidArgument(f"{what} must be between 0 and {1 << 40}, got {ms}")
        return ms


class ModelMetadata:
    """The model's metadata, as onnxruntime's ``ModelMetadata``: ``producer_name``,
    ``graph_name``, ``graph_description``, ``domain``, ``description`` (the model's
    doc_string), ``version`` (model_version), ``custom_metadata_map`` (metadata_props)
    and ``producer_version``."""

    __slots__ = ("producer_name", "producer_version", "graph_name", "graph_description",
                 "domain", "description", "version", "custom_metadata_map")

    def __init__(self, **fields):
        """Internal: built by ``InferenceSession.get_modelmeta``."""
        for k in self.__slots__:
            setattr(self, k, fields[k])

    def __repr__(self):
        return "ModelMetadata(" + ", ".join(f"{k}={getattr(self, k)!r}"
                                            for k in self.__slots__) + ")"


# numpy dtype -> ONNX type name, as onnxruntime's "tensor(...)" strings.
_TYPE_NAMES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.float16): "float16", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
    np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32",
    np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64", np.dtype(np.uint64): "uint64",
    np.dtype(np.bool_): "bool",
}


def _type_string(dtype):
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return "tensor(bfloat16)"
    if dtype.kind in "OUS":
        return "tensor(string)"
    return f"tensor({_TYPE_NAMES.get(dtype, 'undefined')})"


def _check_cpu(device_type, device_id=0):
    if str(device_type).lower() != "cpu":
        raise InvalidArgument(f"device '{device_type}' is not available: onnx-prepack runs on "
                              "the CPU (device_type 'cpu')")


def _array_at(buffer_ptr, element_type, shape):
    """A numpy array over `buffer_ptr` (no copy): a CPU buffer the caller owns."""
    dtype = np.dtype(element_type)
    shape = tuple(int(d) for d in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes == 0:
        return np.empty(shape, dtype)
    raw = (ctypes.c_ubyte * nbytes).from_address(int(buffer_ptr))
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


class OrtValue:
    """A tensor on the CPU, as onnxruntime's ``OrtValue``: a numpy array held without
    a copy (``ortvalue_from_numpy`` keeps a reference to a C-contiguous array)."""

    __slots__ = ("_array", "_type")

    def __init__(self, array, type_string=None):
        """Internal: use ``OrtValue.ortvalue_from_numpy`` or ``ortvalue_from_shape_and_type``."""
        self._array = array
        self._type = type_string or _type_string(array.dtype)

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        """An OrtValue over `numpy_obj` (copied only when not C-contiguous); device 'cpu' only."""
        _check_cpu(device_type, device_id)
        return OrtValue(np.ascontiguousarray(numpy_obj))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0):
        """A new zero-filled OrtValue of `shape` and numpy `element_type` (e.g. np.float32)."""
        _check_cpu(device_type, device_id)
        return OrtValue(np.zeros(tuple(shape), dtype=element_type))

    def data_ptr(self):
        """The address of the first element."""
        return self._array.ctypes.data

    def device_name(self):
        """``"cpu"``."""
        return "cpu"

    def shape(self):
        """The dims as a list of ints."""
        return list(self._array.shape)

    def data_type(self):
        """onnxruntime's type string, e.g. ``"tensor(float)"``."""
        return self._type

    def element_type(self):
        """The numpy scalar type of the elements, e.g. ``numpy.float32``."""
        return self._array.dtype.type

    def has_value(self):
        """True: an OrtValue always holds a tensor."""
        return True

    def is_tensor(self):
        """True: only tensors are supported."""
        return True

    def numpy(self):
        """The tensor as a numpy array (the held array, no copy)."""
        return self._array

    def update_inplace(self, np_arr):
        """Copies `np_arr` (same shape, castable dtype) into the tensor's buffer."""
        np.copyto(self._array, np_arr, casting="same_kind")

    def __repr__(self):
        return f"OrtValue(shape={self.shape()}, type='{self._type}', device='cpu')"


class IOBinding:
    """Inputs and outputs bound to a session, as onnxruntime's ``IOBinding``
    (``session.io_binding()``). Every buffer is CPU memory; a bound output buffer
    (``bind_output`` with ``buffer_ptr``, or ``bind_ortvalue_output``) is filled
    in place (a copy from the engine's output) by ``run_with_iobinding``."""

    def __init__(self, session):
        """Internal: use ``InferenceSession.io_binding()``."""
        self._session = session
        self._inputs = {}
        self._outputs = []  # (name, target array or None)
        self._results = []

    def bind_cpu_input(self, name, arr_on_cpu):
        """Binds a numpy array (read in place when C-contiguous and of the declared dtype)."""
        self._inputs[name] = np.asarray(arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Binds CPU memory at `buffer_ptr` holding `shape` elements of numpy `element_type`."""
        _check_cpu(device_type, device_id)
        self._inputs[name] = _array_at(buffer_ptr, element_type, shape)

    def bind_ortvalue_input(self, name, ortvalue):
        """Binds an OrtValue as input."""
        self._inputs[name] = ortvalue.numpy()

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None):
        """Binds an output: without `buffer_ptr` the engine's buffer is returned; with it
        (and `element_type`, `shape`) the output is copied into that CPU memory."""
        _check_cpu(device_type, device_id)
        target = None
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                raise InvalidArgument(f"output '{name}': buffer_ptr needs element_type and shape")
            target = _array_at(buffer_ptr, element_type, shape)
        self._outputs.append((name, target))

    def bind_ortvalue_output(self, name, ortvalue):
        """Binds an output to a preallocated OrtValue (filled in place)."""
        self._outputs.append((name, ortvalue.numpy()))

    def synchronize_inputs(self):
        """No-op: CPU memory needs no synchronization."""

    def synchronize_outputs(self):
        """No-op: CPU memory needs no synchronization."""

    def get_outputs(self):
        """The outputs of the last ``run_with_iobinding`` as OrtValues."""
        return list(self._results)

    def copy_outputs_to_cpu(self):
        """The outputs of the last ``run_with_iobinding`` as numpy arrays (copies)."""
        return [v.numpy().copy() for v in self._results]

    def clear_binding_inputs(self):
        """Forgets the bound inputs."""
        self._inputs = {}

    def clear_binding_outputs(self):
        """Forgets the bound outputs (and the last results)."""
        self._outputs = []
        self._results = []


SessionIOBinding = IOBinding  # onnxruntime's name of the class behind io_binding()


def _providers_arg(providers, provider_options, config):
    """(names, options) of the providers asked for; non-CPU ones warn (or raise EPFail)."""
    if providers is None:
        return {CPU: {}}
    if isinstance(providers, str):
        providers = [providers]
    names, options = [], []
    for p in providers:
        if isinstance(p, str):
            names.append(p)
            options.append(None)
        elif (isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[0], str)
              and isinstance(p[1], dict)):
            names.append(p[0])
            options.append(p[1])
        else:
            raise InvalidArgument("'providers' values must be either strings or "
                                  "(string, dict) tuples")
    if provider_options is not None:
        if any(o is not None for o in options):
            raise InvalidArgument("'provider_options' cannot be given with (name, options) "
                                  "tuples in 'providers'")
        if len(provider_options) != len(names):
            raise InvalidArgument("'providers' and 'provider_options' should be the same length "
                                  "if both are given")
        options = list(provider_options)
    chosen = {}
    for name, opts in zip(names, options):
        opts = {str(k): str(v) for k, v in (opts or {}).items()}
        if name == CPU:
            chosen[CPU] = opts
            continue
        if config.get(_FALLBACK_KEY, "0") == "1":
            raise EPFail(f"provider '{name}' is not available (available: {CPU}) and "
                         f"{_FALLBACK_KEY} is set")
        known = "" if name in _ORT_PROVIDERS else " (not a provider name onnxruntime knows)"
        warnings.warn(f"Specified provider '{name}'{known} is not in available provider names. "
                      f"Available providers: '{CPU}'. onnx-prepack runs on the CPU.",
                      UserWarning, stacklevel=3)
    return {CPU: chosen.get(CPU, {})}


_SEVERITY_LEVELS = {0: logging.DEBUG, 1: logging.INFO}


class InferenceSession:
    """A model loaded on onnx-prepack's CPU runtime, with onnxruntime's API.

    ``InferenceSession(path_or_bytes, sess_options=None, providers=None,
    provider_options=None, *, verify=None, cache=None, threads=None,
    base_dir=None, weights=None, memo_dir=None, cache_max_bytes=None,
    prepare=None, parallel_runs=None, qdq=None)``

    ``path_or_bytes``: a path, the serialized model, or an ``onnx.ModelProto``.
    Keywords override ``sess_options`` (attributes, then ``onnx_prepack.*``
    config entries), which override the engine's defaults. ``prepare``:
    "eager" (default) plans for the declared input shapes in the constructor
    (symbolic dims as 1) so the weights are resolved and packed before the
    first run; "lazy" leaves that to the first run. ``parallel_runs``: how many
    engines one session may use at once (default 1: runs from several threads
    take turns); engines after the first are created on demand, share the
    parsed model and pack their own weights. See docs/python.md.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 *, verify=None, cache=None, threads=None, base_dir=None, weights=None,
                 memo_dir=None, cache_max_bytes=None, prepare=None, parallel_runs=None,
                 qdq=None, **kwargs):
        t_start = time.perf_counter_ns()
        if isinstance(sess_options, str):  # the former second positional: verify
            verify, sess_options = sess_options, None
        for k in kwargs:
            if k not in ("disabled_optimizers", "read_config_from_model"):
                raise TypeError(f"InferenceSession() got an unexpected keyword argument '{k}'")
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise InvalidArgument("sess_options must be an onnx_prepack.SessionOptions")
        so = sess_options._copy() if sess_options is not None else SessionOptions()
        if so.optimized_model_filepath:
            raise NotImplemented("SessionOptions.optimized_model_filepath is not supported: "
                                 "onnx-prepack writes no optimized model (see onnx_prepack."
                                 "compile for a model with packed weights)")
        self._providers = _providers_arg(providers, provider_options, so._config)
        given = {"verify": verify, "cache": cache, "base_dir": base_dir, "weights": weights,
                 "memo_dir": memo_dir, "cache_max_bytes": cache_max_bytes, "prepare": prepare,
                 "parallel_runs": parallel_runs, "qdq": qdq}
        for attr, v in given.items():
            if v is None:
                given[attr] = so._own(attr)
        if threads is None and so.intra_op_num_threads:
            threads = int(so.intra_op_num_threads)
        args = {}
        for attr in ("verify", "weights", "qdq"):
            if given[attr] is not None:
                args[attr] = str(given[attr])
        for attr in ("cache", "base_dir", "memo_dir"):  # str or os.PathLike
            if given[attr] is not None:
                args[attr] = given[attr]
        if given["cache_max_bytes"] is not None:
            args["cache_max_bytes"] = int(given["cache_max_bytes"])
        if so._own("float16_intermediates") is not None:
            args["float16_intermediates"] = str(so._own("float16_intermediates"))
        if threads is not None:
            if int(threads) < 0:
                raise InvalidArgument(f"threads must be >= 0, got {threads}")
            args["threads"] = int(threads)
        self._prepare_mode = str(given["prepare"] or "eager")
        if self._prepare_mode not in ("eager", "lazy"):
            raise InvalidArgument(f"prepare must be eager or lazy, got '{self._prepare_mode}'")
        self._max_engines = int(given["parallel_runs"] or 1)
        if self._max_engines < 1:
            raise InvalidArgument(f"parallel_runs must be >= 1, got {self._max_engines}")
        self._log_level = int(so.log_severity_level)
        self._logid = str(so.logid)
        self._profiling = bool(so.enable_profiling)
        self._profile_prefix = str(so.profile_file_prefix)
        self._events = []
        self._events_lock = threading.Lock()
        self._t0 = t_start

        engine = _core.Session(path_or_bytes, **args)
        t_loaded = time.perf_counter_ns()
        self._prepare_error = "not prepared (prepare='lazy')"
        if self._prepare_mode == "eager":
            self._prepare_error = engine.prepare()
        t_prepared = time.perf_counter_ns()
        self._engine = engine
        self._engines = [engine]
        self._free = [engine]
        self._pending = 0
        self._cv = threading.Condition()
        self._inputs = engine.get_inputs()
        self._overridable = engine.get_overridable_initializers()
        self._outputs = engine.get_outputs()
        self._output_types = {a.name: a.type for a in self._outputs}
        opts = engine.engine_options()
        so.verify, so.weights, so.memo_dir = opts["verify"], opts["weights"], opts["memo_dir"]
        so.qdq = opts["qdq"]
        so.cache = None if opts["cache"] == "off" else opts["cache"]
        so.cache_max_bytes = opts["cache_max_bytes"]
        so.base_dir = given["base_dir"]
        so.prepare, so.parallel_runs = self._prepare_mode, self._max_engines
        so.intra_op_num_threads = int(opts["threads"])
        so.float16_intermediates = opts["float16_intermediates"]
        self._sess_options = so
        self._event("model_loading", t_start, t_loaded, {})
        self._event("session_initialization", t_loaded, t_prepared,
                    {"prepare": self._prepare_mode, "prepare_error": self._prepare_error})
        self._log(self._log_level, f"loaded in {(t_loaded - t_start) / 1e6:.3f} ms, prepared "
                  f"in {(t_prepared - t_loaded) / 1e6:.3f} ms"
                  + (f" ({self._prepare_error})" if self._prepare_error else ""))

    # ---- onnxruntime's introspection -------------------------------------------------

    def get_inputs(self):
        """The graph inputs to feed, as NodeArgs (initializers excluded, as onnxruntime)."""
        return list(self._inputs)

    def get_outputs(self):
        """The graph outputs, as NodeArgs."""
        return list(self._outputs)

    def get_overridable_initializers(self):
        """Graph inputs that have an initializer: optional feeds overriding the default."""
        return list(self._overridable)

    def get_modelmeta(self):
        """The model's ModelMetadata."""
        return ModelMetadata(**self._engine.modelmeta())

    def get_providers(self):
        """The providers in use: ``["CPUExecutionProvider"]``."""
        return list(self._providers)

    def get_provider_options(self):
        """{provider: {option: value}} of the providers in use (values as strings)."""
        return {k: dict(v) for k, v in self._providers.items()}

    def set_providers(self, providers=None, provider_options=None):
        """Validates and records the providers, as onnxruntime; every run stays on the CPU
        (a non-CPU provider warns, or raises EPFail with session.disable_cpu_ep_fallback)."""
        self._providers = _providers_arg(providers, provider_options,
                                         self._sess_options._config)

    def disable_fallback(self):
        """As onnxruntime: later set_providers calls with a non-CPU provider raise EPFail."""
        self._sess_options._config[_FALLBACK_KEY] = "1"

    def enable_fallback(self):
        """As onnxruntime: a non-CPU provider falls back to the CPU with a warning."""
        self._sess_options._config[_FALLBACK_KEY] = "0"

    def get_session_options(self):
        """The SessionOptions in effect (a copy, with the engine's resolved options filled in)."""
        return self._sess_options._copy()

    def get_profiling_start_time_ns(self):
        """When the session started (time.perf_counter_ns), the origin of profile events."""
        return self._t0

    # ---- runs --------------------------------------------------------------------------

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model: returns a list of numpy arrays, one per name of `output_names`
        (None or [] = every output, in graph order). `input_feed` maps input names to numpy
        arrays (or OrtValues); `run_options` is a RunOptions or None."""
        feed = {k: (v.numpy() if isinstance(v, OrtValue) else v) for k, v in input_feed.items()}
        return self._run(output_names, feed, run_options)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """As run(), with OrtValues in and out."""
        names = output_names or [a.name for a in self._outputs]
        outs = self.run(names, input_dict_ort_values, run_options)
        return [OrtValue(a, self._output_types.get(n)) for n, a in zip(names, outs)]

    def io_binding(self):
        """A new IOBinding for run_with_iobinding."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the binding's inputs; its outputs become iobinding.get_outputs()."""
        if not iobinding._outputs:
            raise InvalidArgument("run_with_iobinding: at least one output should be bound")
        names = [n for n, _ in iobinding._outputs]
        outs = self._run(names, dict(iobinding._inputs), run_options)
        results = []
        for (name, target), out in zip(iobinding._outputs, outs):
            if target is None:
                results.append(OrtValue(out, self._output_types.get(name)))
                continue
            if target.shape != out.shape or target.dtype != out.dtype:
                raise InvalidArgument(
                    f"output '{name}': bound buffer is {target.dtype}{list(target.shape)}, the "
                    f"output is {out.dtype}{list(out.shape)}")
            np.copyto(target, out)
            results.append(OrtValue(target, self._output_types.get(name)))
        iobinding._results = results

    def _run(self, output_names, feed, run_options):
        tag, level = self._logid, self._log_level
        deadline_ms, flag = 0, None
        if run_options is not None:
            if not isinstance(run_options, RunOptions):
                raise InvalidArgument("run_options must be an onnx_prepack.RunOptions or None")
            tag = run_options.logid or tag
            level = min(level, int(run_options.log_severity_level))
            if run_options.terminate:
                raise Fail(self._tagged(tag, "Exiting due to terminate flag being set to true."))
            deadline_ms, flag = run_options._deadline(), run_options._flag
        engine = self._acquire()
        t0 = time.perf_counter_ns()
        try:
            outs = engine.run(output_names, feed, deadline_ms, flag)
        except OnnxPrepackError as e:
            if not tag:
                raise
            raise type(e)(self._tagged(tag, str(e))) from e
        finally:
            self._release(engine)
        t1 = time.perf_counter_ns()
        self._event("model_run", t0, t1, {"tag": tag})
        self._log(level, self._tagged(tag, f"run in {(t1 - t0) / 1e6:.3f} ms"))
        return outs

    @staticmethod
    def _tagged(tag, message):
        return f"[{tag}] {message}" if tag else message

    # One engine per concurrent run, up to parallel_runs; later ones are forks of
    # the first (same parsed model and options).
    def _acquire(self):
        with self._cv:
            while not self._free and len(self._engines) + self._pending >= self._max_engines:
                self._cv.wait()
            if self._free:
                return self._free.pop()
            self._pending += 1
        try:
            e = self._engine.fork()
        except BaseException:
            with self._cv:
                self._pending -= 1
                self._cv.notify()
            raise
        with self._cv:
            self._pending -= 1
            self._engines.append(e)
        return e

    def _release(self, engine):
        with self._cv:
            self._free.append(engine)
            self._cv.notify()

    # ---- onnx-prepack's own ------------------------------------------------------------

    def prepare(self):
        """Plans for the declared input shapes now (what prepare='eager' does in the
        constructor); returns "" when planned, else why not (the first run then plans)."""
        engine = self._acquire()
        try:
            self._prepare_error = engine.prepare()
        finally:
            self._release(engine)
        return self._prepare_error

    @property
    def prepare_error(self):
        """"" when the weights were prepared by a plan before the first run, else why not."""
        return self._prepare_error

    @property
    def engines(self):
        """How many engines the session holds now (1 .. parallel_runs)."""
        with self._cv:
            return len(self._engines)

    def weights(self):
        """Per-weight decisions of the first engine: the keys of `run --json` "weights"."""
        return self._engine.weights()

    def timings(self):
        """Milliseconds of the first engine's phases: parse, resolve, verify, map, pack,
        store, plan, first_run, last_run."""
        return self._engine.timings()

    # ---- profiling and logging -------------------------------------------------------

    def _event(self, name, t0, t1, args):
        if not self._profiling:
            return
        with self._events_lock:
            self._events.append({"cat": "Session", "pid": os.getpid(),
                                 "tid": threading.get_ident(), "dur": (t1 - t0) // 1000,
                                 "ts": (t0 - self._t0) // 1000, "ph": "X", "name": name,
                                 "args": args})

    def _log(self, level, message):
        if level in _SEVERITY_LEVELS:
            _logger.log(_SEVERITY_LEVELS[level], message)

    def end_profiling(self):
        """Writes the profile (Chrome trace JSON: model_loading, session_initialization with
        the engine's phase timings, one model_run per run) to
        ``<profile_file_prefix>_<date>.json`` and returns its path; "" when profiling is off."""
        if not self._profiling:
            return ""
        with self._events_lock:
            events, self._events = self._events, []
        for e in events:
            if e["name"] == "session_initialization":
                e["args"]["engine_ms"] = self._engine.timings()
        path = f"{self._profile_prefix}_{time.strftime('%Y-%m-%d_%H-%M-%S')}.json"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(events, f)
        return path
