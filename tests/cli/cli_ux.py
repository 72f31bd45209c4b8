#!/usr/bin/env python3
"""The command line's contracts (docs/cli.md), case by case:

  help           every command's --help (and `help CMD`, `--help`) exits 0 on
                 stdout with a synopsis, every flag with a description and a
                 default, and an example; every flag docs/cli.md lists for a
                 command is in its help, every flag of the help is accepted by
                 the parser and documented
  did_you_mean   a mistyped command, flag or generate kind names the closest
  json_errors    with --json every error is one JSON object on stdout
  compile_files  compile --json "files" lists exactly the files written
  exit_codes     the exit code table of docs/cli.md, command by command
  progress       compile names each phase (ONNX_PREPACK_PROGRESS=lines)

usage: cli_ux.py --cli build/src/cli/onnx-prepack [--case NAME]...
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOCS = os.path.join(ROOT, "docs", "cli.md")
COMMANDS = ["inspect", "check", "digest", "explain", "compile", "run", "generate", "ops"]
CLI = None
FAILURES = []


def run(args, env=None):
    e = dict(os.environ)
    e.setdefault("ONNX_PREPACK_MEMO_DIR", os.path.join(tempfile.gettempdir(), "cli_ux_memo"))
    if env:
        e.update(env)
    p = subprocess.run([CLI] + args, capture_output=True, text=True, env=e, timeout=300)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)


def docs_flags():
    """command -> set of long flags named in its section of docs/cli.md."""
    text = open(DOCS, encoding="utf-8").read()
    out = {}
    for sec in re.split(r"^## ", text, flags=re.M)[1:]:
        name = sec.split("\n", 1)[0].strip()
        if name in COMMANDS:
            # Only the synopsis, the first column of the option table and the
            # head of option bullets: prose mentions other commands' flags.
            parts = []
            for l in sec.split("\n"):
                if l.startswith("`onnx-prepack") or l.startswith("["):
                    parts.append(l)
                elif l.startswith("| `-"):
                    parts.append(l.split(" | ", 1)[0])
                elif l.startswith("- `-"):
                    parts.append(l.split(":", 1)[0])
            flags = set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", "\n".join(parts)))
            out[name] = flags
    return out


def help_flags(text):
    """Flags of the option lines of a help text, with the line of each."""
    flags = {}
    for line in text.split("\n"):
        m = re.match(r"^  (?:-\w, )?--([a-z][a-z0-9-]*)", line)
        if m:
            flags[m.group(1)] = line
    return flags


def case_help(tmp):
    rc, out, err = run(["--help"])
    check(rc == 0 and "commands:" in out and err == "", "--help exits 0 on stdout")
    for c in COMMANDS:
        check(re.search(r"^  %s\b" % c, out, re.M) is not None, "--help lists " + c)
    rc, out, _ = run(["help"])
    check(rc == 0 and "commands:" in out, "help exits 0")
    documented = docs_flags()
    for c in COMMANDS:
        rc, out, err = run([c, "--help"])
        check(rc == 0, "%s --help exits 0 (got %d)" % (c, rc))
        check(err == "", "%s --help writes nothing to stderr" % c)
        check(out.startswith("usage: onnx-prepack " + c), "%s --help starts with a synopsis" % c)
        check("\nexamples:\n  onnx-prepack " + c in out, "%s --help has an example" % c)
        check("exit codes:" in out, "%s --help names the exit codes" % c)
        rc2, out2, _ = run(["help", c])
        check(rc2 == 0 and out2 == out, "help %s is %s --help" % (c, c))
        rc3, out3, _ = run([c, "-h"])
        check(rc3 == 0 and out3 == out, "%s -h is %s --help" % (c, c))
        flags = help_flags(out)
        for f, line in flags.items():
            check("(default: " in line or "(default: " in out.split(line, 1)[1].split("\n", 2)[1],
                  "%s --help: --%s has a default" % (c, f))
            # The parser accepts every flag of the help (never "unknown option").
            _, o, e = run([c, "--" + f, "1", "--help"] if f != "help" else [c, "--help"])
            check("unknown option" not in e, "%s accepts --%s" % (c, f))
        for f in documented.get(c, set()):
            check(f in flags, "%s --help lists --%s (docs/cli.md)" % (c, f))
        for f in flags:
            if f in ("help", "allow-external-links"):
                continue  # global options, documented once
            check(f in documented.get(c, set()), "docs/cli.md documents %s --%s" % (c, f))
    check("--memo-dir" in run(["run", "--help"])[1], "run --help lists --memo-dir")
    check("--cache-max-mib" in run(["run", "--help"])[1], "run --help lists --cache-max-mib")


def case_did_you_mean(tmp):
    rc, out, err = run(["complie"])
    check(rc == 2, "unknown command exits 2 (got %d)" % rc)
    check("unknown command 'complie'; did you mean 'compile'?" in err, "did you mean compile: " + err)
    rc, _, err = run(["help", "expain"])
    check(rc == 2 and "did you mean 'explain'?" in err, "help expain suggests explain: " + err)
    rc, _, err = run(["zzzzzzzz"])
    check(rc == 2 and "did you mean" not in err, "no suggestion for a word far from any command")
    model = make_model(tmp)
    rc, _, err = run(["compile", model, "-o", os.path.join(tmp, "o.onnx"), "--thread", "2"])
    check(rc == 2 and "did you mean '--threads'?" in err, "--thread suggests --threads: " + err)
    rc, _, err = run(["run", model, "--memodir", "x"])
    check(rc == 2 and "did you mean '--memo-dir'?" in err, "--memodir suggests --memo-dir: " + err)
    rc, _, err = run(["explain", model, "--fail-on-mis"])
    check(rc == 2 and "did you mean '--fail-on-miss'?" in err, "--fail-on-mis: " + err)
    rc, _, err = run(["generate", "mpl", "-o", os.path.join(tmp, "g.onnx")])
    check(rc == 2 and "did you mean 'mlp'?" in err, "generate mpl suggests mlp: " + err)


def json_error(args, want_exit, want_code, what):
    rc, out, err = run(args)
    check(rc == want_exit, "%s: exit %d, got %d" % (what, want_exit, rc))
    try:
        doc = json.loads(out)
    except ValueError:
        check(False, "%s: stdout is one JSON object: %r" % (what, out))
        return
    e = doc.get("error") if isinstance(doc, dict) else None
    check(isinstance(e, dict), "%s: an 'error' object" % what)
    if not isinstance(e, dict):
        return
    check(e.get("code") == want_code, "%s: code %s, got %s" % (what, want_code, e.get("code")))
    check(e.get("exit_code") == rc, "%s: exit_code is the exit status" % what)
    check(isinstance(e.get("message"), str) and e["message"] and e["message"] in err,
          "%s: the message, also on stderr" % what)


def case_json_errors(tmp):
    missing = os.path.join(tmp, "missing.onnx")
    model = make_model(tmp)
    for c in ["inspect", "check", "digest", "explain", "run"]:
        json_error([c, missing, "--json"], 2, "not_found", c + " missing model")
    json_error(["compile", missing, "-o", os.path.join(tmp, "o.onnx"), "--json"], 2, "not_found",
               "compile missing model")
    json_error(["run", model, "--threads", "abc", "--json"], 2, "invalid_argument",
               "run --threads abc")
    json_error(["digest", model, "--algorithm", "md5", "--json"], 2, "invalid_argument",
               "digest --algorithm md5")
    json_error(["compile", model, "-o", os.path.join(tmp, "o.onnx"), "--bogus", "--json"], 2,
               "invalid_argument", "compile --bogus")
    json_error(["compile", model, "--json"], 2, "invalid_argument", "compile without -o")
    json_error(["run", model, "--input", "x=" + os.path.join(tmp, "no.npy"), "--json"], 2,
               "not_found", "run missing .npy")
    json_error(["compile", model, "-o", os.path.join(tmp, "no_dir", "o.onnx"), "--json"], 3,
               "io_error", "compile into a missing folder")
    json_error(["complie", "--json"], 2, "invalid_argument", "unknown command")


def case_compile_files(tmp):
    model = make_model(tmp, external=True)
    out_dir = os.path.join(tmp, "compiled")
    os.mkdir(out_dir)
    out = os.path.join(out_dir, "m.onnx")
    rc, stdout, err = run(["compile", model, "-o", out, "--json", "--target", "x86_64-v3"])
    check(rc == 0, "compile exits 0: " + err)
    doc = json.loads(stdout)
    files = doc.get("files")
    check(isinstance(files, list) and len(files) == 2, "two files listed: %r" % files)
    roles = sorted(f["role"] for f in files)
    check(roles == ["data", "model"], "roles model and data: %r" % roles)
    on_disk = {os.path.join(out_dir, n) for n in os.listdir(out_dir)}
    check({f["path"] for f in files} == on_disk, "the files listed are the files in the folder")
    for f in files:
        check(os.path.getsize(f["path"]) == f["bytes"], "bytes of %s" % f["path"])
    # The text output names the same files.
    rc, stdout, _ = run(["compile", model, "-o", out])
    check(rc == 0 and "wrote " + out in stdout, "text output names the model")


def case_exit_codes(tmp):
    model = make_model(tmp)
    missing = os.path.join(tmp, "missing.onnx")
    cases = [
        (["--version"], 0),
        ([], 2),
        (["complie"], 2),
        (["explain", "--help"], 0),
        (["inspect", model], 0),
        (["inspect"], 2),
        (["inspect", model, model], 2),
        (["inspect", missing], 2),
        (["check", model], 0),
        (["check", missing], 2),
        (["digest", model], 0),
        (["digest", model, "--algorithm", "md5"], 2),
        (["digest", model, "--threads", "-1"], 2),
        (["explain", model], 0),
        (["explain", model, "--fail-on-miss"], 1),
        (["explain", model, "--verify", "sometimes"], 2),
        (["explain", missing], 2),
        (["compile", model, "-o", os.path.join(tmp, "c.onnx")], 0),
        (["compile", model], 2),
        (["compile", model, "-o", os.path.join(tmp, "c.onnx"), "--target", "x86_64-sve"], 2),
        (["compile", model, "-o", os.path.join(tmp, "c.onnx"), "--digest", "md5"], 2),
        (["compile", model, "-o", os.path.join(tmp, "no_dir", "c.onnx")], 3),
        (["run", model], 0),
        (["run", missing], 2),
        (["run", model, "--input", "x=" + os.path.join(tmp, "no.npy")], 2),
        (["run", model, "--input", "nope=random"], 2),
        (["run", model, "--verify", "sometimes"], 2),
        (["run", model, "--output-dir", os.path.join(model, "sub")], 3),
        (["generate", "mlp", "-o", os.path.join(tmp, "g.onnx")], 0),
        (["generate", "mlp"], 2),
        (["generate", "cnn", "-o", os.path.join(tmp, "g.onnx")], 2),
        (["generate", "mlp", "-o", os.path.join(tmp, "no_dir", "g.onnx")], 3),
    ]
    with open(os.path.join(tmp, "bad.npy"), "wb") as f:
        f.write(b"not a npy file")
    cases.append((["run", model, "--input", "x=" + os.path.join(tmp, "bad.npy")], 2))
    if os.geteuid() != 0:  # root reads anything
        unreadable = os.path.join(tmp, "unreadable.onnx")
        with open(model, "rb") as src, open(unreadable, "wb") as dst:
            dst.write(src.read())
        os.chmod(unreadable, 0)
        cases += [(["check", unreadable], 3), (["inspect", unreadable], 3)]
    cases += runaway_loop_cases(tmp)
    for args, want in cases:
        rc, _, err = run(args)
        check(rc == want, "%s: exit %d, got %d (%s)" % (" ".join(args), want, rc, err.strip()))


def runaway_loop_cases(tmp):
    """Exit 4: a Loop fed a trip count of 2^62 (its body keeps the condition) under
    --deadline-ms; needs onnx and numpy to write the model and inputs."""
    try:
        import numpy as np
        from onnx import TensorProto, helper, numpy_helper, save
    except ImportError:
        return []
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c2"]),
         helper.make_node("Add", ["acc", "one"], ["acc2"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("c2", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc2", TensorProto.FLOAT, [1])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "a0"], ["out"], body=body)], "loop",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array([1.0], np.float32), "one")])
    model = os.path.join(tmp, "loop.onnx")
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), model)
    np.save(os.path.join(tmp, "M.npy"), np.array(1 << 62, np.int64))
    np.save(os.path.join(tmp, "cond.npy"), np.array(True))
    args = ["run", model, "--input", "M=" + os.path.join(tmp, "M.npy"),
            "--input", "cond=" + os.path.join(tmp, "cond.npy")]
    return [(args + ["--deadline-ms", "100"], 4), (args + ["--deadline-ms", "x"], 2)]


def case_progress(tmp):
    model = make_model(tmp)
    out = os.path.join(tmp, "p.onnx")
    rc, _, err = run(["compile", model, "-o", out, "--target", "x86_64-v3"],
                     env={"ONNX_PREPACK_PROGRESS": "lines"})
    check(rc == 0, "compile exits 0")
    lines = [l for l in err.split("\n") if l.startswith("progress ")]
    phases = [l.split(" ", 2)[2].split(" ")[0] for l in lines]
    for p in ["hashing", "packing", "writing", "syncing", "recording"]:
        check(p in phases, "progress names the phase %s: %r" % (p, lines))
    order = [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p]
    check(order == ["hashing", "packing", "writing", "syncing", "writing", "recording"],
          "phases in order: %r" % order)
    check(any(l.endswith("writing tensors") for l in lines) and
          any(l.endswith("writing model") for l in lines), "writing tensors, writing model")
    rc, _, err = run(["compile", model, "-o", out], env={"ONNX_PREPACK_PROGRESS": "off"})
    check(rc == 0 and "progress" not in err, "ONNX_PREPACK_PROGRESS=off draws nothing")


def make_model(tmp, external=False):
    path = os.path.join(tmp, "mlp_ext.onnx" if external else "mlp.onnx")
    if not os.path.exists(path):
        args = ["generate", "mlp", "-o", path, "--width", "64", "--layers", "2"]
        rc, _, err = run(args + (["--external"] if external else []))
        if rc != 0:
            raise SystemExit("generate failed: " + err)
    return path


CASES = {
    "help": case_help,
    "did_you_mean": case_did_you_mean,
    "json_errors": case_json_errors,
    "compile_files": case_compile_files,
    "exit_codes": case_exit_codes,
    "progress": case_progress,
}


def main():
    global CLI
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    a = ap.parse_args()
    CLI = os.path.abspath(a.cli)
    for name in a.case or list(CASES):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["ONNX_PREPACK_MEMO_DIR"] = os.path.join(tmp, "memo")
            CASES[name](tmp)
    if FAILURES:
        print("%d failures" % len(FAILURES), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
