"""onnxruntime parity (issue 21): snippets in the style of onnxruntime's tutorials and
Python API docs, run against onnx_prepack with `import onnx_prepack as ort`. Models
are built with onnx.helper here; results are compared with numpy references."""
import json
import os
import threading
import warnings

import numpy as np
import pytest

import onnx_prepack as ort

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(21)
W1 = RNG.standard_normal((4, 8)).astype(np.float32)
B1 = RNG.standard_normal(8).astype(np.float32)
W2 = RNG.standard_normal((8, 3)).astype(np.float32)
B2 = RNG.standard_normal(3).astype(np.float32)


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def make(graph, **kw):
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8,
                             **kw)


def mlp_graph(batch="batch"):
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["m1"]),
        helper.make_node("Add", ["m1", "B1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["h"]),
        helper.make_node("MatMul", ["h", "W2"], ["m2"]),
        helper.make_node("Add", ["m2", "B2"], ["y"]),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in ((W1, "W1"), (B1, "B1"), (W2, "W2"),
                                                       (B2, "B2"))]
    return helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [batch, 8])], inits)


def mlp_ref(x):
    h = np.maximum(x @ W1 + B1, 0)
    return h @ W2 + B2, h


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("parity")
    m = {"dir": d}
    m["mlp"] = save(make(mlp_graph()), d / "mlp.onnx")
    m["mlp_static"] = save(make(mlp_graph(batch=2)), d / "mlp_static.onnx")
    meta = make(mlp_graph(), producer_name="parity-test", producer_version="2.1",
                domain="ai.example", doc_string="a small MLP", model_version=7)
    meta.graph.doc_string = "the MLP graph"
    helper.set_model_props(meta, {"author": "issue 21", "license": "MIT"})
    m["meta"] = save(meta, d / "meta.onnx")
    # Conv 3x3, pads 1.
    wc = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    bc = RNG.standard_normal(3).astype(np.float32)
    conv = helper.make_graph(
        [helper.make_node("Conv", ["x", "W", "B"], ["y"], pads=[1, 1, 1, 1],
                          kernel_shape=[3, 3])], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 5, 5])],
        [numpy_helper.from_array(wc, "W"), numpy_helper.from_array(bc, "B")])
    m["conv"] = save(make(conv), d / "conv.onnx")
    m["conv_w"], m["conv_b"] = wc, bc
    # An initializer that is also a graph input (overridable).
    bias = np.array([1.0, 2.0, 3.0], np.float32)
    over = helper.make_graph(
        [helper.make_node("Add", ["x", "bias"], ["y"])], "over",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("bias", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(bias, "bias")])
    m["over"] = save(make(over), d / "over.onnx")
    m["bias"] = bias
    # bfloat16 in, float out.
    bf = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], "bf16",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m["bf16"] = save(make(bf), d / "bf16.onnx")
    to_bf = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)], "to_bf16",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [3])])
    m["to_bf16"] = save(make(to_bf), d / "to_bf16.onnx")
    return m


X = RNG.uniform(-1, 1, (2, 4)).astype(np.float32)


# ---- providers and SessionOptions ---------------------------------------------------------

def test_get_available_providers_and_device():
    assert ort.get_available_providers() == ["CPUExecutionProvider"]
    assert "CUDAExecutionProvider" in ort.get_all_providers()
    assert ort.get_device() == "CPU"


def test_session_with_providers_list(models):
    sess = ort.InferenceSession(models["mlp"], providers=["CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    y = sess.run(None, {"x": X})[0]
    np.testing.assert_allclose(y, mlp_ref(X)[0], rtol=1e-5, atol=1e-5)


def test_session_with_sess_options_positional(models):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    sess = ort.InferenceSession(models["mlp"], so, providers=["CPUExecutionProvider"])
    got = sess.get_session_options()
    assert got.intra_op_num_threads == 2
    assert got.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert got.verify == "full" and got.weights == "packed" and got.prepare == "eager"
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], mlp_ref(X)[0], rtol=1e-5,
                               atol=1e-5)


def test_graph_optimization_level_values_are_onnxruntimes():
    g = ort.GraphOptimizationLevel
    assert (int(g.ORT_DISABLE_ALL), int(g.ORT_ENABLE_BASIC), int(g.ORT_ENABLE_EXTENDED),
            int(g.ORT_ENABLE_ALL)) == (0, 1, 2, 99)
    assert int(ort.ExecutionMode.ORT_PARALLEL) == 1


def test_session_options_attributes_set_our_options(models):
    so = ort.SessionOptions()
    so.weights = "plain"
    so.verify = "off"
    sess = ort.InferenceSession(models["mlp"], sess_options=so)
    assert sess.get_session_options().weights == "plain"
    assert sess.get_session_options().verify == "off"
    assert sess.weights() == []  # plain: no resolver decisions
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], mlp_ref(X)[0], rtol=1e-5,
                               atol=1e-5)


def test_session_config_entries_set_our_options(models):
    so = ort.SessionOptions()
    so.add_session_config_entry("onnx_prepack.weights", "plain")
    so.add_session_config_entry("onnx_prepack.prepare", "lazy")
    assert so.get_session_config_entry("onnx_prepack.weights") == "plain"
    sess = ort.InferenceSession(models["mlp"], so)
    assert sess.get_session_options().weights == "plain"
    assert sess.get_session_options().prepare == "lazy"


def test_keywords_override_session_options(models):
    so = ort.SessionOptions()
    so.weights = "plain"
    sess = ort.InferenceSession(models["mlp"], so, weights="packed", threads=1)
    assert sess.get_session_options().weights == "packed"
    assert sess.get_session_options().intra_op_num_threads == 1


def test_session_options_typos_and_missing_entries_raise():
    so = ort.SessionOptions()
    with pytest.raises(AttributeError):
        so.intra_op_num_thread = 2  # noqa: B018 - the typo is the test
    with pytest.raises(ort.RuntimeException):
        so.get_session_config_entry("nope")
    with pytest.raises(RuntimeError):
        so.get_session_config_entry("nope")


def test_provider_tuples_and_provider_options(models):
    sess = ort.InferenceSession(models["mlp"],
                                providers=[("CPUExecutionProvider", {"arena_extend_strategy": 1})])
    assert sess.get_provider_options() == {"CPUExecutionProvider": {"arena_extend_strategy": "1"}}
    sess2 = ort.InferenceSession(models["mlp"], providers=["CPUExecutionProvider"],
                                 provider_options=[{"a": "b"}])
    assert sess2.get_provider_options()["CPUExecutionProvider"] == {"a": "b"}
    with pytest.raises(ValueError):
        ort.InferenceSession(models["mlp"], providers=[42])


def test_cuda_provider_warns_and_falls_back_to_cpu(models):
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        sess = ort.InferenceSession(models["mlp"], providers=[
            ("CUDAExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], mlp_ref(X)[0], rtol=1e-5,
                               atol=1e-5)


def test_disabled_cpu_fallback_raises_epfail(models):
    so = ort.SessionOptions()
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    with pytest.raises(ort.EPFail, match="CUDAExecutionProvider"):
        ort.InferenceSession(models["mlp"], so, providers=["CUDAExecutionProvider"])
    sess = ort.InferenceSession(models["mlp"])
    sess.disable_fallback()
    with pytest.raises(RuntimeError):
        sess.set_providers(["TensorrtExecutionProvider"])


def test_set_providers(models):
    sess = ort.InferenceSession(models["mlp"])
    sess.set_providers(["CPUExecutionProvider"], [{"x": 1}])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {"x": "1"}}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sess.set_providers(["CUDAExecutionProvider"])
    assert any("CUDAExecutionProvider" in str(x.message) for x in w)
    assert sess.get_providers() == ["CPUExecutionProvider"]


# ---- inputs, outputs, run ------------------------------------------------------------------

def test_get_inputs_names_shapes_types(models):
    sess = ort.InferenceSession(models["mlp"])
    inputs = sess.get_inputs()
    assert [(i.name, i.shape, i.type) for i in inputs] == [("x", ["batch", 4], "tensor(float)")]
    input_name = sess.get_inputs()[0].name
    assert input_name == "x"


def test_get_outputs_names_shapes_types(models):
    sess = ort.InferenceSession(models["mlp"])
    assert [(o.name, o.shape, o.type) for o in sess.get_outputs()] == [
        ("y", ["batch", 3], "tensor(float)"), ("h", ["batch", 8], "tensor(float)")]


def test_run_none_gives_every_output(models):
    sess = ort.InferenceSession(models["mlp"])
    y, h = sess.run(None, {sess.get_inputs()[0].name: X})
    ry, rh = mlp_ref(X)
    np.testing.assert_allclose(y, ry, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h, rh, rtol=1e-5, atol=1e-5)


def test_run_empty_list_gives_every_output(models):
    sess = ort.InferenceSession(models["mlp"])
    outs = sess.run([], {"x": X})
    assert len(outs) == 2
    assert [o.tobytes() for o in outs] == [o.tobytes() for o in sess.run(None, {"x": X})]


def test_run_with_output_names(models):
    sess = ort.InferenceSession(models["mlp"])
    label_name = sess.get_outputs()[1].name
    (h,) = sess.run([label_name], {"x": X})
    np.testing.assert_allclose(h, mlp_ref(X)[1], rtol=1e-5, atol=1e-5)
    h2, y2 = sess.run(["h", "y"], {"x": X})
    assert h2.shape == (2, 8) and y2.shape == (2, 3)


def test_conv_matches_numpy(models):
    sess = ort.InferenceSession(models["conv"], providers=["CPUExecutionProvider"])
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    y = sess.run(None, {"x": x})[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 3, 5, 5), np.float32)
    for o in range(3):
        for i in range(5):
            for j in range(5):
                ref[0, o, i, j] = np.sum(xp[0, :, i:i + 3, j:j + 3] * models["conv_w"][o])
        ref[0, o] += models["conv_b"][o]
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_run_options_log_tag_and_severity(models, caplog):
    sess = ort.InferenceSession(models["mlp"])
    ro = ort.RunOptions()
    ro.logid = "batch-17"
    ro.log_severity_level = 1
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    with caplog.at_level("INFO", logger="onnx_prepack"):
        y = sess.run(None, {"x": X}, ro)[0]
    assert any("[batch-17] run in" in r.getMessage() for r in caplog.records)
    np.testing.assert_allclose(y, mlp_ref(X)[0], rtol=1e-5, atol=1e-5)
    with pytest.raises(ort.InvalidArgument, match=r"^\[batch-17\] input 'nope'"):
        sess.run(None, {"nope": X}, run_options=ro)


def test_run_options_terminate(models):
    sess = ort.InferenceSession(models["mlp"])
    ro = ort.RunOptions()
    ro.terminate = True
    with pytest.raises(ort.Fail, match="terminate flag"):
        sess.run(None, {"x": X}, ro)
    ro.terminate = False
    assert sess.run(None, {"x": X}, ro)[0].shape == (2, 3)


def test_get_modelmeta(models):
    meta = ort.InferenceSession(models["meta"]).get_modelmeta()
    assert meta.producer_name == "parity-test"
    assert meta.graph_name == "mlp"
    assert meta.graph_description == "the MLP graph"
    assert meta.domain == "ai.example"
    assert meta.description == "a small MLP"
    assert meta.version == 7
    assert meta.custom_metadata_map == {"author": "issue 21", "license": "MIT"}


def test_overridable_initializers(models):
    sess = ort.InferenceSession(models["over"])
    assert [i.name for i in sess.get_inputs()] == ["x"]
    over = sess.get_overridable_initializers()
    assert [(o.name, o.shape, o.type) for o in over] == [("bias", [3], "tensor(float)")]
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x + models["bias"])
    other = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x, "bias": other})[0], x + other)


def test_bytes_and_model_proto_with_session_options(models):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    proto = onnx.load(models["mlp"])
    a = ort.InferenceSession(proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(proto, sess_options=so)
    assert a.run(None, {"x": X})[0].tobytes() == b.run(None, {"x": X})[0].tobytes()


# ---- OrtValue and IOBinding -------------------------------------------------------------

def test_ortvalue_roundtrip():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    v = ort.OrtValue.ortvalue_from_numpy(x)
    assert v.device_name() == "cpu"
    assert v.shape() == [2, 2]
    assert v.data_type() == "tensor(float)"
    assert v.element_type() == np.float32
    assert v.is_tensor() and v.has_value()
    assert np.array_equal(v.numpy(), x)
    assert v.data_ptr() == x.ctypes.data  # no copy


def test_ortvalue_from_shape_and_type_and_update_inplace():
    v = ort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.int64)
    assert v.shape() == [3, 2] and v.data_type() == "tensor(int64)"
    v.update_inplace(np.arange(6, dtype=np.int64).reshape(3, 2))
    assert v.numpy().tolist() == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(ValueError, match="cuda"):
        ort.OrtValue.ortvalue_from_numpy(np.zeros(2), "cuda", 0)


def test_run_with_ort_values(models):
    sess = ort.InferenceSession(models["mlp"])
    outs = sess.run_with_ort_values(["y"], {"x": ort.OrtValue.ortvalue_from_numpy(X)})
    assert len(outs) == 1 and isinstance(outs[0], ort.OrtValue)
    assert outs[0].data_type() == "tensor(float)"
    np.testing.assert_allclose(outs[0].numpy(), mlp_ref(X)[0], rtol=1e-5, atol=1e-5)
    assert len(sess.run_with_ort_values(None, {"x": ort.OrtValue.ortvalue_from_numpy(X)})) == 2


def test_ortvalue_in_run_feed(models):
    sess = ort.InferenceSession(models["mlp"])
    v = ort.OrtValue.ortvalue_from_numpy(X)
    assert sess.run(["y"], {"x": v})[0].tobytes() == sess.run(["y"], {"x": X})[0].tobytes()


def test_io_binding_cpu_input_and_output(models):
    sess = ort.InferenceSession(models["mlp"])
    io_binding = sess.io_binding()
    io_binding.bind_cpu_input("x", X)
    io_binding.bind_output("y")
    sess.run_with_iobinding(io_binding)
    y = io_binding.copy_outputs_to_cpu()[0]
    np.testing.assert_allclose(y, mlp_ref(X)[0], rtol=1e-5, atol=1e-5)
    assert io_binding.get_outputs()[0].shape() == [2, 3]


def test_io_binding_preallocated_output_and_input_pointer(models):
    sess = ort.InferenceSession(models["mlp"])
    x = ort.OrtValue.ortvalue_from_numpy(X, "cpu", 0)
    y = ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32, "cpu", 0)
    io_binding = sess.io_binding()
    io_binding.bind_input(name="x", device_type=x.device_name(), device_id=0,
                          element_type=np.float32, shape=x.shape(), buffer_ptr=x.data_ptr())
    io_binding.bind_output(name="y", device_type=y.device_name(), device_id=0,
                           element_type=np.float32, shape=y.shape(), buffer_ptr=y.data_ptr())
    io_binding.synchronize_inputs()
    sess.run_with_iobinding(io_binding)
    io_binding.synchronize_outputs()
    np.testing.assert_allclose(y.numpy(), mlp_ref(X)[0], rtol=1e-5, atol=1e-5)
    h = ort.OrtValue.ortvalue_from_shape_and_type([2, 8], np.float32)
    io_binding.clear_binding_outputs()
    io_binding.bind_ortvalue_output("h", h)
    sess.run_with_iobinding(io_binding)
    np.testing.assert_allclose(h.numpy(), mlp_ref(X)[1], rtol=1e-5, atol=1e-5)


# ---- errors ------------------------------------------------------------------------------

def test_exceptions_are_ort_classes_and_builtins(models, tmp_path):
    sess = ort.InferenceSession(models["mlp"])
    with pytest.raises(ort.InvalidArgument) as e:
        sess.run(None, {"x": X.astype(np.float64)})
    assert isinstance(e.value, ValueError) and isinstance(e.value, ort.OnnxPrepackError)
    with pytest.raises(ValueError):
        sess.run(["z"], {"x": X})
    with pytest.raises(ort.NoSuchFile) as e:
        ort.InferenceSession(str(tmp_path / "missing.onnx"))
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(ValueError):
        ort.InferenceSession(b"\xff\xff not a model")
    with pytest.raises(ort.OnnxPrepackError):
        ort.InferenceSession(b"\xff\xff not a model")


def test_exceptions_under_onnxruntimes_module_path(models):
    from onnx_prepack.capi.onnxruntime_pybind11_state import InvalidArgument, NoSuchFile
    assert InvalidArgument is ort.InvalidArgument and NoSuchFile is ort.NoSuchFile
    with pytest.raises(InvalidArgument):
        ort.InferenceSession(models["mlp"]).run(None, {"x": X[:, :2].copy()})


def test_exception_hierarchy():
    pairs = {ort.Fail: RuntimeError, ort.InvalidArgument: ValueError,
             ort.NoSuchFile: FileNotFoundError, ort.NoModel: FileNotFoundError,
             ort.EngineError: MemoryError, ort.RuntimeException: RuntimeError,
             ort.InvalidProtobuf: ValueError, ort.ModelLoaded: RuntimeError,
             ort.NotImplemented: NotImplementedError, ort.InvalidGraph: ValueError,
             ort.EPFail: RuntimeError}
    for cls, builtin in pairs.items():
        assert issubclass(cls, ort.OnnxPrepackError) and issubclass(cls, builtin), cls
    assert issubclass(ort.Fail, OSError)  # the operating system refused (was OSError)


def test_unsupported_operator_is_not_implemented(models, tmp_path):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], domain="com.example")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.example", 1)],
                          ir_version=8)
    with pytest.raises(ort.NotImplemented) as e:
        ort.InferenceSession(m.SerializeToString())
    assert isinstance(e.value, NotImplementedError)


# ---- eager weights, concurrency, bfloat16, profiling ---------------------------------------

def test_weights_prepared_at_construction(models):
    sess = ort.InferenceSession(models["mlp_static"])
    assert sess.prepare_error == ""
    assert [w["name"] for w in sess.weights()] == ["W1", "W2"]  # packed before any run
    t = sess.timings()
    assert t["plan"] > 0 and t["pack"] > 0 and t["first_run"] == 0
    assert sess.run(None, {"x": X})[0].shape == (2, 3)
    assert sess.timings()["first_run"] > 0


def test_symbolic_dims_prepared_as_one_and_lazy_is_an_option(models):
    eager = ort.InferenceSession(models["mlp"])
    assert eager.prepare_error == "" and len(eager.weights()) == 2
    lazy = ort.InferenceSession(models["mlp"], prepare="lazy")
    assert lazy.weights() == []
    lazy.run(None, {"x": X})
    assert len(lazy.weights()) == 2
    a = eager.run(None, {"x": X})[0]  # batch 2: plans again, packs nothing again
    assert eager.timings()["pack"] == 0 and len(eager.weights()) == 2
    assert a.tobytes() == lazy.run(None, {"x": X})[0].tobytes()


def test_concurrent_runs_from_threads_give_identical_bytes(models):
    sess = ort.InferenceSession(models["mlp"], parallel_runs=4, threads=1)
    x = RNG.uniform(-1, 1, (64, 4)).astype(np.float32)
    want = sess.run(None, {"x": x})[0].tobytes()
    results, errors = [], []
    barrier = threading.Barrier(4)

    def work():
        try:
            barrier.wait()
            for _ in range(25):
                results.append(sess.run(None, {"x": x})[0].tobytes())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 100 and set(results) == {want}
    assert 1 <= sess.engines <= 4


def test_parallel_engines_run_at_the_same_time(models):
    sess = ort.InferenceSession(models["mlp"], parallel_runs=2)
    a = sess._acquire()  # two runs in flight: two engines
    b = sess._acquire()
    assert a is not b and sess.engines == 2
    assert a.run(None, {"x": X})[0].tobytes() == b.run(None, {"x": X})[0].tobytes()
    sess._release(a)
    sess._release(b)


def test_bfloat16_feed_as_uint16_bits(models):
    sess = ort.InferenceSession(models["bf16"])
    assert sess.get_inputs()[0].type == "tensor(bfloat16)"
    f = np.array([[1.0, -2.5, 3.140625], [0.0, 65280.0, -0.001953125]], np.float32)
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)
    y = sess.run(None, {"x": bits})[0]
    ref = (bits.astype(np.uint32) << 16).view(np.float32)
    assert y.dtype == np.float32 and y.tobytes() == ref.tobytes()
    try:
        import ml_dtypes
    except ImportError:
        return
    y2 = sess.run(None, {"x": f.astype(ml_dtypes.bfloat16)})[0]
    assert y2.tobytes() == ref.tobytes()


def test_bfloat16_output_as_uint16_bits_or_ml_dtypes(models):
    sess = ort.InferenceSession(models["to_bf16"])
    x = np.array([1.0, -2.5, 0.15625], np.float32)  # exact in bfloat16
    y = sess.run(None, {"x": x})[0]
    want = (x.view(np.uint32) >> 16).astype(np.uint16)
    try:
        import ml_dtypes
        assert y.dtype == ml_dtypes.bfloat16
    except ImportError:
        assert y.dtype == np.uint16
    assert y.tobytes() == want.tobytes()


def test_public_api_has_stubs_and_docstrings():
    pkg = os.path.dirname(ort.__file__)
    stub = open(os.path.join(pkg, "__init__.pyi"), encoding="utf-8").read()
    assert os.path.exists(os.path.join(pkg, "py.typed"))
    for name in ort.__all__:
        obj = getattr(ort, name)
        assert (f"class {name}" in stub or f"def {name}(" in stub or f"{name} = " in stub
                or f"{name}: " in stub), name
        if callable(obj):
            assert obj.__doc__, name
            for attr, member in vars(obj).items() if isinstance(obj, type) else []:
                if not attr.startswith("_") and callable(member):
                    assert member.__doc__, f"{name}.{attr}"


def test_profiling_writes_a_chrome_trace(models, tmp_path):
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = ort.InferenceSession(models["mlp"], so)
    sess.run(None, {"x": X})
    sess.run(None, {"x": X})
    path = sess.end_profiling()
    assert os.path.basename(path).startswith("prof_") and path.endswith(".json")
    events = json.load(open(path, encoding="utf-8"))
    names = [e["name"] for e in events]
    assert names.count("model_run") == 2 and "model_loading" in names
    assert all(e["ph"] == "X" for e in events)
    assert ort.InferenceSession(models["mlp"]).end_profiling() == ""


def test_existing_keywords_still_work(models, tmp_path):
    sess = ort.InferenceSession(models["mlp"], verify="memo", cache=tmp_path / "c", threads=1,
                                memo_dir=tmp_path / "memo", cache_max_bytes=1 << 20)
    assert sess.get_session_options().cache == str(tmp_path / "c")
    assert [w["decision"] for w in sess.weights()] == ["miss", "miss"]
    again = ort.InferenceSession(models["mlp"], "memo", cache=str(tmp_path / "c"))
    assert [w["decision"] for w in again.weights()] == ["hit", "hit"]
    assert sess.run(None, {"x": X})[0].tobytes() == again.run(None, {"x": X})[0].tobytes()
