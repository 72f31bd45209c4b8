"""The Python module against the CLI (bitwise) and ONNX Runtime (within 1e-4 of
the largest |output|): compile, explain, InferenceSession from two threads,
every bad-feed error path, bytes and ModelProto models, the JSON functions."""
import json
import os
import shutil
import subprocess
import threading

import numpy as np
import pytest

import onnx_prepack as op

CLI = os.environ.get("ONNX_PREPACK_CLI", "onnx-prepack")
SOURCE = os.environ.get("ONNX_PREPACK_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    d = tmp_path_factory.mktemp("mlp")
    plain = d / "mlp.onnx"
    cli("generate", "mlp", "-o", plain, "--layers", 3, "--width", 64, "--external")
    x = np.random.default_rng(7).uniform(-1, 1, size=(3, 64)).astype(np.float32)
    np.save(d / "x.npy", x)
    return {"dir": d, "plain": plain, "x": x, "memo": d / "memo"}


@pytest.fixture(scope="module")
def compiled(mlp):
    out = mlp["dir"] / "mlp.compiled.onnx"
    summary = op.compile(mlp["plain"], out, memo_dir=mlp["memo"])
    assert summary["entries"] == 3
    assert len(summary["targets"]) == 1
    return out


def cli_outputs(model, x_npy, out_dir):
    cli("run", model, "--input", f"x={x_npy}", "--output-dir", out_dir)
    return np.load(out_dir / "y.npy")


def test_explain_after_compile_hits_every_weight(mlp, compiled):
    report = op.explain(compiled, verify="memo", memo_dir=mlp["memo"])
    assert report["totals"]["weights"] == 3
    assert report["totals"]["hits"] == 3
    assert report["totals"]["memo_hits"] == 3  # compile recorded the digests
    assert {w["decision"] for w in report["weights"]} == {"hit"}
    assert report == json.loads(cli("explain", compiled, "--verify", "memo", "--memo-dir",
                                    mlp["memo"], "--json")) | {"totals": report["totals"]}


def test_outputs_equal_the_cli_bitwise_from_two_threads(mlp, compiled):
    want = cli_outputs(compiled, mlp["dir"] / "x.npy", mlp["dir"] / "cli-out")
    s = op.InferenceSession(str(compiled), verify="memo", memo_dir=str(mlp["memo"]))
    assert [i.name for i in s.get_inputs()] == ["x"]
    assert s.get_inputs()[0].type == "tensor(float)"
    assert s.get_outputs()[0].name == "y"
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(s.run(None, {"x": mlp["x"]})[0])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 40
    for y in results:
        assert y.dtype == np.float32 and y.shape == want.shape
        assert y.tobytes() == want.tobytes()
    weights = s.weights()
    assert [w["decision"] for w in weights] == ["hit"] * 3
    assert set(weights[0]) >= {"name", "decision", "reason", "detail", "format", "verified",
                               "stored", "bytes_mapped", "bytes_hashed", "bytes_packed"}
    assert set(s.timings()) >= {"parse", "resolve", "verify", "map", "pack", "store", "plan",
                                "first_run"}


def test_plain_and_compiled_agree_and_match_onnx_runtime(mlp, compiled):
    y_plain = op.InferenceSession(mlp["plain"]).run(["y"], {"x": mlp["x"]})[0]
    y_comp = op.InferenceSession(compiled).run(None, {"x": mlp["x"]})[0]
    assert y_plain.tobytes() == y_comp.tobytes()
    peers = os.path.join(SOURCE, "tools", "peers", "node_modules", "onnxruntime-node")
    if shutil.which("node") is None or not os.path.isdir(peers):
        pytest.skip("node or onnxruntime-node not available")
    out = mlp["dir"] / "ort-out"
    out.mkdir(exist_ok=True)
    subprocess.run(["node", os.path.join(SOURCE, "tests", "runtime", "ort_run.js"),
                    str(mlp["plain"]), str(out), f"x={mlp['dir'] / 'x.npy'}"], check=True)
    ref = np.load(out / "y.npy")
    assert np.max(np.abs(y_plain - ref)) <= 1e-4 * np.max(np.abs(ref))


def test_bytes_and_model_proto_load_with_base_dir(mlp):
    data = mlp["plain"].read_bytes()
    want = op.InferenceSession(mlp["plain"]).run(None, {"x": mlp["x"]})[0]
    got = op.InferenceSession(data, base_dir=str(mlp["dir"])).run(None, {"x": mlp["x"]})[0]
    assert got.tobytes() == want.tobytes()
    # onnx's own module loads beside this one (each has its libprotobuf).
    onnx = pytest.importorskip("onnx")
    proto = onnx.load(str(mlp["plain"]), load_external_data=False)
    got = op.InferenceSession(proto, base_dir=mlp["dir"]).run(None, {"x": mlp["x"]})[0]
    assert got.tobytes() == want.tobytes()
    assert op.check(data, base_dir=mlp["dir"])["valid"]
    assert op.inspect(proto, base_dir=mlp["dir"])["graph_name"] == \
        json.loads(cli("inspect", mlp["plain"], "--json"))["graph_name"]


def test_json_functions_equal_the_cli(mlp, compiled):
    assert op.check(compiled) == json.loads(cli("check", compiled, "--json"))
    assert op.digest(mlp["plain"]) == json.loads(cli("digest", mlp["plain"], "--json"))
    assert op.digest(mlp["plain"], algorithm="sha256") == \
        json.loads(cli("digest", mlp["plain"], "--algorithm", "sha256", "--json"))
    assert op.inspect(compiled) == json.loads(cli("inspect", compiled, "--json"))


def test_bad_feeds_name_the_input_and_what_was_expected(mlp):
    s = op.InferenceSession(mlp["plain"])
    x = mlp["x"]
    with pytest.raises(ValueError, match=r"input 'nope' is not a graph input \(inputs: x\)"):
        s.run(None, {"nope": x})
    with pytest.raises(ValueError, match=r"input 'x': dtype float64, the model expects "
                                         r"tensor\(float\)"):
        s.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(ValueError, match=r"input 'x': shape \[192\], the model expects .*rank 2"):
        s.run(None, {"x": x.reshape(-1)})
    with pytest.raises(ValueError, match=r"input 'x': shape \[3, 32\], the model expects "
                                         r"\[batch, 64\]"):
        s.run(None, {"x": x[:, :32].copy()})
    with pytest.raises(ValueError, match="input 'x' is not fed"):
        s.run(None, {})
    with pytest.raises(ValueError, match="output 'z' is not a graph output"):
        s.run(["z"], {"x": x})
    # A strided view is read correctly (copied to C order), and the session still runs.
    wide = np.zeros((3, 128), np.float32)
    wide[:, ::2] = x
    assert s.run(None, {"x": wide[:, ::2]})[0].tobytes() == s.run(None, {"x": x})[0].tobytes()


def test_bad_arguments_raise(mlp, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.onnx"):
        op.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(ValueError, match="verify must be full, memo or off"):
        op.InferenceSession(mlp["plain"], verify="sometimes")
    with pytest.raises(ValueError, match="weights must be packed or plain"):
        op.InferenceSession(mlp["plain"], weights="bent")
    with pytest.raises(ValueError):
        op.InferenceSession(b"\xff\xff not a model")
    with pytest.raises(ValueError, match="vax"):
        op.compile(mlp["plain"], tmp_path / "o.onnx", targets=["vax"])
    with pytest.raises(ValueError, match="md5"):
        op.digest(mlp["plain"], algorithm="md5")
    with pytest.raises(ValueError, match="--arch"):
        op.explain(mlp["plain"], arch="not-an-arch")


def test_cache_store_write_back(mlp, tmp_path):
    cache = tmp_path / "cache"
    first = op.InferenceSession(mlp["plain"], cache=cache)
    y1 = first.run(None, {"x": mlp["x"]})[0]
    assert [w["decision"] for w in first.weights()] == ["miss"] * 3
    second = op.InferenceSession(mlp["plain"], cache=str(cache))
    y2 = second.run(None, {"x": mlp["x"]})[0]
    assert [w["decision"] for w in second.weights()] == ["hit"] * 3
    assert y1.tobytes() == y2.tobytes()


def test_qdq_option_picks_the_exact_or_the_integer_path(tmp_path):
    """`qdq` (keyword, SessionOptions attribute, config entry) as `run --qdq`: the
    default computes the float64 semantics of a weight-only QDQ Gemm, "integer"
    the CLI's integer run bit for bit; compile(qdq="integer") writes W's entry."""
    subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "tests", "runtime", "quant",
                                                     "make_qdq_weight_models.py"),
                    str(tmp_path), "--cases", "gemm"], check=True)
    model, x = tmp_path / "gemm" / "model.onnx", np.load(tmp_path / "gemm" / "x.npy")
    ref = np.load(tmp_path / "gemm" / "ref.npy")
    exact = op.InferenceSession(model)
    assert exact.get_session_options().qdq == "exact"
    y = exact.run(None, {"x": x})[0]
    assert np.abs(y - ref).max() <= 1e-6 * np.abs(ref).max()
    integer = op.InferenceSession(model, qdq="integer").run(None, {"x": x})[0]
    cli("run", model, "--input", "x=" + str(tmp_path / "gemm" / "x.npy"), "--qdq", "integer",
        "--output-dir", tmp_path / "cli")
    assert np.array_equal(integer, np.load(tmp_path / "cli" / "y.npy"))
    assert not np.array_equal(integer, y)
    so = op.SessionOptions()
    so.add_session_config_entry("onnx_prepack.qdq", "integer")
    assert op.InferenceSession(model, so).get_session_options().qdq == "integer"
    with pytest.raises(op.InvalidArgument, match="qdq"):
        op.InferenceSession(model, qdq="fast")
    assert op.compile(model, tmp_path / "c.onnx", qdq="integer", memo=False)["entries"] == 1
    assert op.compile(model, tmp_path / "e.onnx", memo=False)["entries"] == 0


def test_float16_intermediates_option_equals_the_cli(tmp_path):
    # FLOAT16 Conv -> Relu -> Conv: "float" keeps the Relu output in float (docs/decisions.md,
    # "FLOAT16 intermediates"), as `run --float16-intermediates float` does, bit for bit.
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    w1 = rng.normal(0, 0.3, (8, 4, 3, 3)).astype(np.float16)
    w2 = rng.normal(0, 0.3, (8, 8, 3, 3)).astype(np.float16)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1] * 4),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Conv", ["r", "w2"], ["y"], pads=[1] * 4)],
        "f16", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 8, 8, 8])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "f16.onnx"
    onnx.save(m, path)
    x = rng.uniform(-1, 1, (1, 4, 8, 8)).astype(np.float16)
    np.save(tmp_path / "x.npy", x)
    got = {}
    for mode in ("float16", "float"):
        so = op.SessionOptions()
        so.float16_intermediates = mode
        s = op.InferenceSession(path, so)
        assert s.get_session_options().float16_intermediates == mode
        got[mode] = s.run(None, {"x": x})[0]
        out = tmp_path / mode
        cli("run", path, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", out,
            "--float16-intermediates", mode)
        assert np.array_equal(got[mode].view(np.uint16), np.load(out / "y.npy").view(np.uint16))
    assert not np.array_equal(got["float16"], got["float"])
    assert op.InferenceSession(path).get_session_options().float16_intermediates == "float16"
    so = op.SessionOptions()
    so.add_session_config_entry("onnx_prepack.float16_intermediates", "float")
    assert np.array_equal(op.InferenceSession(path, so).run(None, {"x": x})[0], got["float"])
    so.float16_intermediates = "double"
    with pytest.raises(ValueError, match="float16_intermediates must be float16 or float"):
        op.InferenceSession(path, so)
