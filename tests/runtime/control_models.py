"""Builds the control-flow and recurrent test models (If, Loop, Scan, RNN, GRU,
LSTM, a keyword spotter and a voice-activity detector) with Debian's
python3-onnx, with inputs as .npy files, for tests/runtime/control_ort_test.cc.

usage: python3 control_models.py OUT_DIR
Writes OUT_DIR/<case>.onnx, OUT_DIR/<case>.<input>.npy and OUT_DIR/manifest.txt
(one line per case: "<case> [ort_model=<file>] <input>=<file> ..."; ort_model is an
equivalent model for ONNX Runtime where it lacks a form, e.g. batch-major RNN layouts).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

OPSET = 17
rng = np.random.default_rng(1234)


def rand(*shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def init(name, arr):
    return nh.from_array(np.asarray(arr), name)


def vinfo(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def model(graph):
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


CASES = []


def case(name, m, feeds, ort_model=None):
    """ort_model: an equivalent model ONNX Runtime runs instead (it lacks the form)."""
    CASES.append((name, m, feeds, ort_model))


# ---- recurrent layers: every attribute combination we support -------------
def recurrent_case(name, op, gates, hidden, inp, seq, batch, dirs, attrs, with_b=True,
                   with_lens=False, with_h0=False, with_c0=False, with_p=False, layout=0,
                   weights_as_inputs=False):
    direction = attrs.get("direction", "forward")
    W = rand(dirs, gates * hidden, inp)
    R = rand(dirs, gates * hidden, hidden)
    B = rand(dirs, 2 * gates * hidden, scale=0.2)
    xshape = [seq, batch, inp] if layout == 0 else [batch, seq, inp]
    sshape = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
    feeds = {"X": rand(*xshape, scale=1.0)}
    inputs = [vinfo("X", TP.FLOAT, xshape)]
    inits = []
    names = ["X", "W", "R"]
    for n, a in (("W", W), ("R", R)):
        if weights_as_inputs:
            feeds[n] = a
            inputs.append(vinfo(n, TP.FLOAT, list(a.shape)))
        else:
            inits.append(init(n, a))
    names.append("B" if with_b else "")
    if with_b:
        inits.append(init("B", B))
    names.append("lens" if with_lens else "")
    if with_lens:
        lens = rng.integers(1, seq + 1, size=batch).astype(np.int32)
        lens[0] = seq
        feeds["lens"] = lens
        inputs.append(vinfo("lens", TP.INT32, [batch]))
    names.append("h0" if with_h0 else "")
    if with_h0:
        feeds["h0"] = rand(*sshape)
        inputs.append(vinfo("h0", TP.FLOAT, sshape))
    if op == "LSTM":
        names.append("c0" if with_c0 else "")
        if with_c0:
            feeds["c0"] = rand(*sshape)
            inputs.append(vinfo("c0", TP.FLOAT, sshape))
        names.append("P" if with_p else "")
        if with_p:
            inits.append(init("P", rand(dirs, 3 * hidden)))
    while names and names[-1] == "":
        names.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = h.make_node(op, names, outs, hidden_size=hidden, layout=layout, **attrs)
    yshape = [seq, dirs, batch, hidden] if layout == 0 else [batch, seq, dirs, hidden]
    outputs = [vinfo("Y", TP.FLOAT, yshape), vinfo("Y_h", TP.FLOAT, sshape)]
    if op == "LSTM":
        outputs.append(vinfo("Y_c", TP.FLOAT, sshape))
    g = h.make_graph([node], name, inputs, outputs, inits)
    ort_model = None
    if layout == 1:
        # ONNX Runtime runs layout 0 only: the same layer between Transposes.
        tnodes = [h.make_node("Transpose", ["X"], ["X_t"], perm=[1, 0, 2])]
        tnames = ["X_t" if n == "X" else n for n in names]
        for n in ("h0", "c0"):
            if n in names:
                tnodes.append(h.make_node("Transpose", [n], [n + "_t"], perm=[1, 0, 2]))
                tnames = [n + "_t" if x == n else x for x in tnames]
        touts = [o + "_t" for o in outs]
        tnodes.append(h.make_node(op, tnames, touts, hidden_size=hidden, **attrs))
        tnodes.append(h.make_node("Transpose", ["Y_t"], ["Y"], perm=[2, 0, 1, 3]))
        for o in outs[1:]:
            tnodes.append(h.make_node("Transpose", [o + "_t"], [o], perm=[1, 0, 2]))
        ort_model = model(h.make_graph(tnodes, name + "_layout0", inputs, outputs, inits))
    case(name, model(g), feeds, ort_model)


recurrent_case("lstm_forward", "LSTM", 4, 16, 10, 7, 3, 1, {})
recurrent_case("lstm_bidirectional_full", "LSTM", 4, 8, 5, 6, 4, 2,
               {"direction": "bidirectional", "clip": 2.5},
               with_lens=True, with_h0=True, with_c0=True, with_p=True)
recurrent_case("lstm_reverse_activations", "LSTM", 4, 8, 5, 5, 2, 1,
               {"direction": "reverse",
                "activations": ["HardSigmoid", "LeakyRelu", "ScaledTanh"],
                "activation_alpha": [0.3, 0.05, 0.9], "activation_beta": [0.4, 1.2]},
               with_h0=True, with_c0=True, with_p=True)
recurrent_case("lstm_input_forget", "LSTM", 4, 8, 5, 5, 2, 1, {"input_forget": 1},
               with_h0=True, with_c0=True)
recurrent_case("lstm_weights_fed", "LSTM", 4, 6, 3, 4, 2, 2, {"direction": "bidirectional"},
               weights_as_inputs=True)
recurrent_case("lstm_batch_major_layout", "LSTM", 4, 8, 5, 6, 3, 2,
               {"direction": "bidirectional"}, with_lens=True, with_h0=True, with_c0=True,
               with_p=True, layout=1)
recurrent_case("gru_batch_major_layout", "GRU", 3, 8, 5, 6, 3, 1, {"direction": "reverse"},
               with_h0=True, layout=1)
recurrent_case("rnn_batch_major_layout", "RNN", 1, 8, 5, 6, 3, 1, {}, with_h0=True, layout=1)
recurrent_case("gru_forward", "GRU", 3, 16, 10, 7, 3, 1, {})
recurrent_case("gru_linear_before_reset", "GRU", 3, 8, 5, 6, 4, 2,
               {"direction": "bidirectional", "linear_before_reset": 1},
               with_lens=True, with_h0=True)
recurrent_case("gru_reverse_activations", "GRU", 3, 8, 5, 5, 3, 1,
               {"direction": "reverse", "activations": ["Softsign", "Elu"],
                "activation_alpha": [0.7], "clip": 1.5}, with_lens=True, with_h0=True)
recurrent_case("rnn_bidirectional", "RNN", 1, 12, 6, 8, 3, 2,
               {"direction": "bidirectional", "activations": ["Relu", "Tanh"]},
               with_lens=True, with_h0=True)
recurrent_case("rnn_affine", "RNN", 1, 12, 6, 8, 3, 1,
               {"activations": ["Affine"], "activation_alpha": [0.5],
                "activation_beta": [0.1]})


# ---- If ---------------------------------------------------------------------
def if_outer_scope():
    # A fed condition picks a branch; both branches read outer-scope values
    # (a graph input and an initializer), one through a nested If.
    x = vinfo("x", TP.FLOAT, [2, 3])
    c = vinfo("c", TP.BOOL, [])
    d = vinfo("d", TP.BOOL, [])
    inner_then = h.make_graph([h.make_node("Mul", ["x", "k"], ["it"])], "inner_then", [],
                              [vinfo("it", TP.FLOAT, [2, 3])])
    inner_else = h.make_graph([h.make_node("Sub", ["x", "k"], ["ie"])], "inner_else", [],
                              [vinfo("ie", TP.FLOAT, [2, 3])])
    then_g = h.make_graph([h.make_node("Add", ["x", "k"], ["t"])], "then", [],
                          [vinfo("t", TP.FLOAT, [2, 3])])
    else_g = h.make_graph([h.make_node("If", ["d"], ["e"], then_branch=inner_then,
                                       else_branch=inner_else)], "else", [],
                          [vinfo("e", TP.FLOAT, [2, 3])])
    nodes = [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
             h.make_node("Relu", ["y"], ["z"])]
    g = h.make_graph(nodes, "if_outer", [x, c, d], [vinfo("z", TP.FLOAT, [2, 3])],
                     [init("k", rand(2, 3))])
    m = model(g)
    for cv, dv in ((True, False), (False, True), (False, False)):
        case("if_outer_scope_%d%d" % (cv, dv), m,
             {"x": rand(2, 3, scale=1.0), "c": np.array(cv), "d": np.array(dv)})


if_outer_scope()


def if_returns_outer_values():
    # Branches whose outputs are outer-scope values themselves (no node).
    x = vinfo("x", TP.FLOAT, [3])
    w = vinfo("w", TP.FLOAT, [3])
    c = vinfo("c", TP.BOOL, [1])
    then_g = h.make_graph([], "then", [], [vinfo("x", TP.FLOAT, [3]), vinfo("k", TP.FLOAT, [3])])
    else_g = h.make_graph([], "else", [], [vinfo("w", TP.FLOAT, [3]), vinfo("x", TP.FLOAT, [3])])
    # ONNX Runtime refuses that form: its model has an Identity per output.
    then_i = h.make_graph([h.make_node("Identity", ["x"], ["t0"]),
                           h.make_node("Identity", ["k"], ["t1"])], "then", [],
                          [vinfo("t0", TP.FLOAT, [3]), vinfo("t1", TP.FLOAT, [3])])
    else_i = h.make_graph([h.make_node("Identity", ["w"], ["e0"]),
                           h.make_node("Identity", ["x"], ["e1"])], "else", [],
                          [vinfo("e0", TP.FLOAT, [3]), vinfo("e1", TP.FLOAT, [3])])
    k = rand(3)
    models = []
    for tg, eg in ((then_g, else_g), (then_i, else_i)):
        g = h.make_graph([h.make_node("If", ["c"], ["y", "z"], then_branch=tg, else_branch=eg)],
                         "if_outer_values", [x, w, c],
                         [vinfo("y", TP.FLOAT, [3]), vinfo("z", TP.FLOAT, [3])], [init("k", k)])
        models.append(model(g))
    for cv in (True, False):
        case("if_returns_outer_values_%d" % cv, models[0],
             {"x": rand(3), "w": rand(3), "c": np.array([cv])}, models[1])


if_returns_outer_values()


# ---- Loop -------------------------------------------------------------------
def loop_cases():
    # Loop-carried sum with a scan output; trip count an initializer; the body
    # reads an outer-scope value and the iteration number.
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
         h.make_node("Mul", ["w", "fi"], ["wi"]),
         h.make_node("Add", ["acc", "wi"], ["acc2"]),
         h.make_node("Identity", ["cond"], ["cond2"]),
         h.make_node("Tanh", ["acc2"], ["s"])],
        "body", [vinfo("i", TP.INT64, []), vinfo("cond", TP.BOOL, []),
                 vinfo("acc", TP.FLOAT, [3])],
        [vinfo("cond2", TP.BOOL, []), vinfo("acc2", TP.FLOAT, [3]),
         vinfo("s", TP.FLOAT, [3])])
    g = h.make_graph(
        [h.make_node("Loop", ["M", "", "a0"], ["acc_out", "scan_out"], body=body)],
        "loop_scan", [vinfo("a0", TP.FLOAT, [3]), vinfo("w", TP.FLOAT, [3])],
        [vinfo("acc_out", TP.FLOAT, [3]), vinfo("scan_out", TP.FLOAT, [5, 3])],
        [init("M", np.array(5, dtype=np.int64))])
    case("loop_scan_output", model(g), {"a0": rand(3), "w": rand(3)})

    # Condition computed in the body (stop when the sum passes a limit); the
    # trip count is fed; no scan outputs, so it runs without pinning.
    body = h.make_graph(
        [h.make_node("Add", ["acc", "step"], ["acc2"]),
         h.make_node("ReduceMean", ["acc2"], ["mean"], keepdims=0),
         h.make_node("Sub", ["limit", "mean"], ["left"]),
         h.make_node("Relu", ["left"], ["left_pos"]),
         h.make_node("Cast", ["left_pos"], ["cond2"], to=TP.BOOL)],  # mean < limit
        "body", [vinfo("i", TP.INT64, []), vinfo("cond", TP.BOOL, []),
                 vinfo("acc", TP.FLOAT, [4])],
        [vinfo("cond2", TP.BOOL, []), vinfo("acc2", TP.FLOAT, [4])])
    g = h.make_graph(
        [h.make_node("Loop", ["M", "c0", "a0"], ["acc_out"], body=body)],
        "loop_cond", [vinfo("M", TP.INT64, []), vinfo("c0", TP.BOOL, []),
                      vinfo("a0", TP.FLOAT, [4]), vinfo("step", TP.FLOAT, [4])],
        [vinfo("acc_out", TP.FLOAT, [4])], [init("limit", np.array(1.5, dtype=np.float32))])
    case("loop_dynamic_condition", model(g),
         {"M": np.array(100, dtype=np.int64), "c0": np.array(True),
          "a0": np.zeros(4, np.float32), "step": np.abs(rand(4)) + 0.1})

    # A fed trip count with a scan output: needs the trip count's value to plan.
    body = h.make_graph(
        [h.make_node("Mul", ["acc", "f"], ["acc2"]),
         h.make_node("Identity", ["cond"], ["cond2"]),
         h.make_node("Identity", ["acc2"], ["s"])],
        "body", [vinfo("i", TP.INT64, []), vinfo("cond", TP.BOOL, []),
                 vinfo("acc", TP.FLOAT, [2])],
        [vinfo("cond2", TP.BOOL, []), vinfo("acc2", TP.FLOAT, [2]),
         vinfo("s", TP.FLOAT, [2])])
    g = h.make_graph(
        [h.make_node("Loop", ["M", "", "a0"], ["acc_out", "scan_out"], body=body)],
        "loop_fed_trips", [vinfo("M", TP.INT64, []), vinfo("a0", TP.FLOAT, [2]),
                           vinfo("f", TP.FLOAT, [2])],
        [vinfo("acc_out", TP.FLOAT, [2]), vinfo("scan_out", TP.FLOAT, [None, 2])])
    case("loop_fed_trip_count", model(g),
         {"M": np.array(4, dtype=np.int64), "a0": rand(2), "f": rand(2) + 1.0})


loop_cases()


# ---- Scan -------------------------------------------------------------------
def scan_case():
    # State [2]: running sum of rows; two scan inputs along axis 1, one
    # reversed; outputs along axis 0 and 1 (one reversed); outer-scope bias.
    body = h.make_graph(
        [h.make_node("Add", ["s", "a"], ["s1"]),
         h.make_node("Mul", ["s1", "b"], ["s2"]),
         h.make_node("Add", ["s2", "bias"], ["s_out"]),
         h.make_node("Sub", ["a", "b"], ["o1"]),
         h.make_node("Identity", ["s_out"], ["o2"])],
        "scan_body", [vinfo("s", TP.FLOAT, [2]), vinfo("a", TP.FLOAT, [2]),
                      vinfo("b", TP.FLOAT, [2])],
        [vinfo("s_out", TP.FLOAT, [2]), vinfo("o1", TP.FLOAT, [2]),
         vinfo("o2", TP.FLOAT, [2])])
    node = h.make_node("Scan", ["s0", "A", "B"], ["s_final", "O1", "O2"], body=body,
                       num_scan_inputs=2, scan_input_axes=[1, 1],
                       scan_input_directions=[0, 1], scan_output_axes=[0, 1],
                       scan_output_directions=[1, 0])
    g = h.make_graph([node], "scan", [vinfo("s0", TP.FLOAT, [2]), vinfo("A", TP.FLOAT, [2, 5]),
                                      vinfo("B", TP.FLOAT, [2, 5])],
                     [vinfo("s_final", TP.FLOAT, [2]), vinfo("O1", TP.FLOAT, [5, 2]),
                      vinfo("O2", TP.FLOAT, [2, 5])], [init("bias", rand(2))])
    case("scan_axes_directions", model(g),
         {"s0": rand(2), "A": rand(2, 5, scale=1.0), "B": rand(2, 5, scale=1.0)})


scan_case()


# ---- edge cases: shapes that change, zero iterations, empty tensors, nesting ----
def edge_cases():
    # A loop-carried value that grows each iteration (Concat): planned with the
    # fed trip count pinned, run at plan time.
    body = h.make_graph(
        [h.make_node("Concat", ["acc", "one"], ["acc2"], axis=0),
         h.make_node("Identity", ["cond"], ["cond2"])],
        "body", [vinfo("i", TP.INT64, []), vinfo("cond", TP.BOOL, []),
                 vinfo("acc", TP.FLOAT, [None])],
        [vinfo("cond2", TP.BOOL, []), vinfo("acc2", TP.FLOAT, [None])])
    g = h.make_graph([h.make_node("Loop", ["M", "", "a0"], ["out"], body=body)], "loop_grow",
                     [vinfo("M", TP.INT64, []), vinfo("a0", TP.FLOAT, [1])],
                     [vinfo("out", TP.FLOAT, [None])], [init("one", rand(1))])
    case("loop_growing_state", model(g), {"M": np.array(3, dtype=np.int64), "a0": rand(1)})

    # Zero iterations: the final state is the initial one, scan outputs are empty.
    body = h.make_graph(
        [h.make_node("Relu", ["acc"], ["acc2"]),
         h.make_node("Identity", ["cond"], ["cond2"]),
         h.make_node("Identity", ["acc"], ["s"])],
        "body", [vinfo("i", TP.INT64, []), vinfo("cond", TP.BOOL, []),
                 vinfo("acc", TP.FLOAT, [2])],
        [vinfo("cond2", TP.BOOL, []), vinfo("acc2", TP.FLOAT, [2]), vinfo("s", TP.FLOAT, [2])])
    g = h.make_graph([h.make_node("Loop", ["M", "", "a0"], ["out", "scan"], body=body)],
                     "loop_zero", [vinfo("a0", TP.FLOAT, [2])],
                     [vinfo("out", TP.FLOAT, [2]), vinfo("scan", TP.FLOAT, [0, 2])],
                     [init("M", np.array(0, dtype=np.int64))])
    case("loop_zero_iterations", model(g), {"a0": rand(2)})

    # Empty tensors: no time steps; an input size of 0.
    for name, (seq, batch, inp) in (("lstm_empty_sequence", (0, 2, 3)),
                                    ("lstm_empty_input_size", (5, 2, 0))):
        hidden = 4
        g = h.make_graph(
            [h.make_node("LSTM", ["X", "W", "R", "B"], ["Y", "Y_h", "Y_c"], hidden_size=hidden)],
            name, [vinfo("X", TP.FLOAT, [seq, batch, inp])],
            [vinfo("Y", TP.FLOAT, [seq, 1, batch, hidden]),
             vinfo("Y_h", TP.FLOAT, [1, batch, hidden]), vinfo("Y_c", TP.FLOAT, [1, batch, hidden])],
            [init("W", rand(1, 4 * hidden, inp)), init("R", rand(1, 4 * hidden, hidden)),
             init("B", rand(1, 8 * hidden))])
        case(name, model(g), {"X": rand(seq, batch, inp)})

    # Two levels: a Scan body runs a Loop whose body reads a main-graph input
    # and the Scan body's slice (outer-scope values through nested subgraphs).
    loop_body = h.make_graph(
        [h.make_node("Mul", ["acc", "gain"], ["m"]),
         h.make_node("Add", ["m", "row"], ["acc2"]),
         h.make_node("Identity", ["cond"], ["cond2"])],
        "loop_body", [vinfo("i", TP.INT64, []), vinfo("cond", TP.BOOL, []),
                      vinfo("acc", TP.FLOAT, [3])],
        [vinfo("cond2", TP.BOOL, []), vinfo("acc2", TP.FLOAT, [3])])
    scan_body = h.make_graph(
        [h.make_node("Loop", ["three", "", "s"], ["s2"], body=loop_body),
         h.make_node("Tanh", ["s2"], ["s_out"]),
         h.make_node("Identity", ["s_out"], ["y"])],
        "scan_body", [vinfo("s", TP.FLOAT, [3]), vinfo("row", TP.FLOAT, [3])],
        [vinfo("s_out", TP.FLOAT, [3]), vinfo("y", TP.FLOAT, [3])])
    g = h.make_graph([h.make_node("Scan", ["s0", "rows"], ["s_final", "ys"], body=scan_body,
                                  num_scan_inputs=1)],
                     "nested", [vinfo("s0", TP.FLOAT, [3]), vinfo("rows", TP.FLOAT, [4, 3]),
                                vinfo("gain", TP.FLOAT, [3])],
                     [vinfo("s_final", TP.FLOAT, [3]), vinfo("ys", TP.FLOAT, [4, 3])],
                     [init("three", np.array(3, dtype=np.int64))])
    case("scan_loop_nested_outer_scope", model(g),
         {"s0": rand(3), "rows": rand(4, 3), "gain": rand(3)})


edge_cases()


# ---- a keyword spotter: two stacked LSTMs and a classifier ---------------------
def kws():
    T, F, H, C = 49, 40, 64, 12
    nodes = [
        h.make_node("Transpose", ["mfcc"], ["x_t"], perm=[1, 0, 2]),  # [T, 1, F]
        h.make_node("LSTM", ["x_t", "W1", "R1", "B1"], ["y1", "", ""], hidden_size=H),
        h.make_node("Squeeze", ["y1", "ax1"], ["y1s"]),  # [T, 1, H]
        h.make_node("LSTM", ["y1s", "W2", "R2", "B2"], ["", "h2", ""], hidden_size=H),
        h.make_node("Reshape", ["h2", "shape"], ["feat"]),
        h.make_node("MatMul", ["feat", "Wc"], ["logits0"]),
        h.make_node("Add", ["logits0", "bc"], ["logits"]),
        h.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    inits = [init("W1", rand(1, 4 * H, F, scale=0.2)), init("R1", rand(1, 4 * H, H, scale=0.2)),
             init("B1", rand(1, 8 * H, scale=0.1)), init("W2", rand(1, 4 * H, H, scale=0.2)),
             init("R2", rand(1, 4 * H, H, scale=0.2)), init("B2", rand(1, 8 * H, scale=0.1)),
             init("ax1", np.array([1], dtype=np.int64)),
             init("shape", np.array([1, H], dtype=np.int64)),
             init("Wc", rand(H, C)), init("bc", rand(C))]
    g = h.make_graph(nodes, "kws_lstm", [vinfo("mfcc", TP.FLOAT, [1, T, F])],
                     [vinfo("probs", TP.FLOAT, [1, C])], inits)
    case("kws_lstm", model(g), {"mfcc": rand(1, T, F, scale=1.0)})


kws()


# ---- a voice-activity detector: If on the fed sample rate, LSTM with state --------
def vad(name, same_shapes):
    N, F, H = 512, 64, 32
    # 16 kHz: one frame of 512 samples; 8 kHz: two frames of 256 (averaged
    # after the If when the branch shapes differ).
    then_g = h.make_graph(
        [h.make_node("MatMul", ["audio", "W16"], ["f16"]), h.make_node("Sigmoid", ["f16"], ["fa"])],
        "sr16k", [], [vinfo("fa", TP.FLOAT, [1, F])])
    if same_shapes:
        else_nodes = [h.make_node("MatMul", ["audio", "W8"], ["f8"]),
                      h.make_node("Relu", ["f8"], ["fb"])]
        else_out = vinfo("fb", TP.FLOAT, [1, F])
    else:
        else_nodes = [h.make_node("Reshape", ["audio", "two"], ["a2"]),
                      h.make_node("MatMul", ["a2", "W8"], ["f8"]),
                      h.make_node("Relu", ["f8"], ["fb"])]
        else_out = vinfo("fb", TP.FLOAT, [2, F])
    else_g = h.make_graph(else_nodes, "sr8k", [], [else_out])
    nodes = [
        h.make_node("Equal", ["sr", "k16000"], ["is16"]),
        h.make_node("If", ["is16"], ["feat0"], then_branch=then_g, else_branch=else_g),
        h.make_node("ReduceMean", ["feat0"], ["feat"], axes=[0], keepdims=1),
        h.make_node("Unsqueeze", ["feat", "ax0"], ["x"]),  # [1, 1, F]
        h.make_node("LSTM", ["x", "W", "R", "B", "", "h", "c"], ["", "hn", "cn"],
                    hidden_size=H),
        h.make_node("Reshape", ["hn", "shape"], ["hv"]),
        h.make_node("MatMul", ["hv", "Wo"], ["o"]),
        h.make_node("Sigmoid", ["o"], ["prob"]),
    ]
    w8 = rand(N, F, scale=0.05) if same_shapes else rand(N // 2, F, scale=0.05)
    inits = [init("k16000", np.array(16000, dtype=np.int64)), init("W16", rand(N, F, scale=0.05)),
             init("W8", w8), init("two", np.array([2, N // 2], dtype=np.int64)),
             init("ax0", np.array([0], dtype=np.int64)),
             init("W", rand(1, 4 * H, F, scale=0.2)), init("R", rand(1, 4 * H, H, scale=0.2)),
             init("B", rand(1, 8 * H, scale=0.1)), init("shape", np.array([1, H], dtype=np.int64)),
             init("Wo", rand(H, 1))]
    g = h.make_graph(nodes, name,
                     [vinfo("audio", TP.FLOAT, [1, N]), vinfo("sr", TP.INT64, []),
                      vinfo("h", TP.FLOAT, [1, 1, H]), vinfo("c", TP.FLOAT, [1, 1, H])],
                     [vinfo("prob", TP.FLOAT, [1, 1]), vinfo("hn", TP.FLOAT, [1, 1, H]),
                      vinfo("cn", TP.FLOAT, [1, 1, H])], inits)
    m = model(g)
    for sr in (16000, 8000):
        case("%s_%d" % (name, sr), m,
             {"audio": rand(1, N, scale=1.0), "sr": np.array(sr, dtype=np.int64),
              "h": rand(1, 1, H), "c": rand(1, 1, H)})


vad("vad", True)
vad("vad_branch_shapes", False)


# ---- FLOAT16 variants ---------------------------------------------------------
def to_float16(m, feeds):
    """The same model computing in FLOAT16: float initializers, inputs,
    outputs and Casts to float become FLOAT16, in subgraphs too."""
    m16 = onnx.ModelProto()
    m16.CopyFrom(m)

    def convert(g):
        for t in g.initializer:
            if t.data_type == TP.FLOAT:
                t.CopyFrom(nh.from_array(nh.to_array(t).astype(np.float16), t.name))
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.tensor_type.elem_type == TP.FLOAT:
                v.type.tensor_type.elem_type = TP.FLOAT16
        for n in g.node:
            for a in n.attribute:
                if n.op_type == "Cast" and a.name == "to" and a.i == TP.FLOAT:
                    a.i = TP.FLOAT16
                if a.type == onnx.AttributeProto.GRAPH:
                    convert(a.g)

    convert(m16.graph)
    onnx.checker.check_model(m16)
    f16 = {k: (v.astype(np.float16) if v.dtype == np.float32 else v) for k, v in feeds.items()}
    return m16, f16


for name, m, feeds, _ in list(CASES):
    if name in ("lstm_bidirectional_full", "gru_linear_before_reset", "rnn_bidirectional",
                "kws_lstm", "vad_16000", "vad_8000"):
        m16, f16 = to_float16(m, feeds)
        case(name + "_float16", m16, f16)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    lines = []
    for name, m, feeds, ort_model in CASES:
        path = os.path.join(out, name + ".onnx")
        onnx.save(m, path)
        specs = []
        if ort_model is not None:
            ort_path = os.path.join(out, name + ".ort.onnx")
            onnx.save(ort_model, ort_path)
            specs.append("ort_model=" + ort_path)
        for k, v in feeds.items():
            f = os.path.join(out, "%s.%s.npy" % (name, k))
            np.save(f, v)
            specs.append("%s=%s" % (k, f))
        lines.append(" ".join([name] + specs))
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
