"""RunOptions.deadline_ms and RunOptions.terminate (issue 18): a Loop fed a trip count of
2^62 with a condition its body keeps true stops at the deadline (DeadlineExceeded, a Fail
and a TimeoutError) or when another thread sets terminate (Fail, as onnxruntime); the
session then runs again with the right answer. Timing bounds are generous: they tell
"stopped" from "ran on"."""
import threading
import time

import numpy as np
import pytest

import onnx_prepack as ort

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HUGE = np.array(1 << 62, np.int64)
TRUE = np.array(True)
A0 = np.array([2.0], np.float32)


@pytest.fixture(scope="module")
def loop_model(tmp_path_factory):
    """out = a0 + M (the body adds one and keeps its condition)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c2"]),
         helper.make_node("Add", ["acc", "one"], ["acc2"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("c2", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc2", TensorProto.FLOAT, [1])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "a0"], ["out"], name="runaway", body=body)],
        "runaway_loop",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array([1.0], np.float32), "one")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(m)
    path = tmp_path_factory.mktemp("deadline") / "loop.onnx"
    onnx.save(m, str(path))
    return str(path)


def feeds(m):
    return {"M": np.array(m, np.int64), "cond": TRUE, "a0": A0}


def test_deadline_stops_a_runaway_loop_and_the_session_runs_again(loop_model):
    sess = ort.InferenceSession(loop_model)
    ro = ort.RunOptions()
    ro.deadline_ms = 200
    t0 = time.monotonic()
    with pytest.raises(ort.DeadlineExceeded, match=r"node 'runaway' \(Loop\).*deadline of "
                                                   r"200 ms") as e:
        sess.run(None, {"M": HUGE, "cond": TRUE, "a0": A0}, ro)
    assert time.monotonic() - t0 < 2.0
    # In the module's hierarchy: a Fail (onnxruntime's class for a stopped run) and a
    # TimeoutError.
    assert isinstance(e.value, ort.Fail) and isinstance(e.value, TimeoutError)
    assert isinstance(e.value, ort.OnnxPrepackError)
    assert ort.capi.onnxruntime_pybind11_state.DeadlineExceeded is ort.DeadlineExceeded
    np.testing.assert_array_equal(sess.run(None, feeds(1000))[0], [1002.0])
    np.testing.assert_array_equal(sess.run(None, feeds(5), ro)[0], [7.0])  # within 200 ms


def test_deadline_as_a_run_config_entry(loop_model):
    sess = ort.InferenceSession(loop_model)
    ro = ort.RunOptions()
    ro.add_run_config_entry("onnx_prepack.deadline_ms", "150")
    with pytest.raises(ort.DeadlineExceeded, match="deadline of 150 ms"):
        sess.run(None, {"M": HUGE, "cond": TRUE, "a0": A0}, ro)
    ro.deadline_ms = 0  # the attribute wins over the entry: 0 is none
    np.testing.assert_array_equal(sess.run(None, feeds(3), ro)[0], [5.0])


def test_bad_deadline_is_invalid_argument(loop_model):
    sess = ort.InferenceSession(loop_model)
    ro = ort.RunOptions()
    ro.deadline_ms = -1
    with pytest.raises(ort.InvalidArgument, match="deadline_ms must be between 0 and"):
        sess.run(None, feeds(3), ro)
    ro.deadline_ms = None
    ro.add_run_config_entry("onnx_prepack.deadline_ms", "soon")
    with pytest.raises(ort.InvalidArgument, match="onnx_prepack.deadline_ms must be an integer"):
        sess.run(None, feeds(3), ro)


def test_terminate_from_another_thread_stops_the_run(loop_model):
    sess = ort.InferenceSession(loop_model)
    ro = ort.RunOptions()
    assert ro.terminate is False
    timer = threading.Timer(0.2, lambda: setattr(ro, "terminate", True))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(ort.Fail, match="terminate flag") as e:
            sess.run(None, {"M": HUGE, "cond": TRUE, "a0": A0}, ro)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 2.0
    assert not isinstance(e.value, ort.DeadlineExceeded)
    assert ro.terminate is True
    ro.terminate = False
    np.testing.assert_array_equal(sess.run(None, feeds(4), ro)[0], [6.0])


def test_lazy_prepare_plans_a_constant_loop_under_the_deadline(tmp_path):
    """Every Loop input a constant: the Loop runs while the first run plans, and the
    deadline stops it there (with prepare='eager' the constructor would plan it unbounded)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c2"]),
         helper.make_node("Add", ["acc", "one"], ["acc2"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("c2", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc2", TensorProto.FLOAT, [1])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "a0"], ["out"], name="runaway", body=body)],
        "const_loop", [], [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array([1.0], np.float32), "one"),
         numpy_helper.from_array(HUGE, "M"), numpy_helper.from_array(TRUE, "cond"),
         numpy_helper.from_array(A0, "a0")])
    path = str(tmp_path / "const_loop.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              path)
    sess = ort.InferenceSession(path, prepare="lazy")
    ro = ort.RunOptions()
    ro.deadline_ms = 200
    t0 = time.monotonic()
    with pytest.raises(ort.DeadlineExceeded, match=r"\(at plan time\)"):
        sess.run(None, {}, ro)
    assert time.monotonic() - t0 < 2.0
