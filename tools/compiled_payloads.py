"""The compiled entries of a `compile --json` report, for tools/test_aarch64.sh.

payloads(folder, name) reads folder/name.json (the report of a compile whose
entries were written to an external file in `folder`) and returns
{source initializer: (format, device architecture, payload bytes)}, so two
compiles of one model (on x86-64 for aarch64, and on aarch64 itself) can be
compared entry by entry. Every entry must be stored externally.
"""
import json
import os


def payloads(folder, name):
    with open(os.path.join(folder, f"{name}.json"), encoding="utf-8") as f:
        report = json.load(f)
    out = {}
    for e in report["compiled_tensors"]:
        if e["storage"] != "external":
            raise AssertionError(f"{name}: entry {e['source']} is stored {e['storage']}")
        arch = report["devices"][e["device"]]["architecture"]
        with open(os.path.join(folder, e["location"]), "rb") as f:
            f.seek(e["offset"])
            out[e["source"]] = (e["format"], arch, f.read(e["payload_bytes"]))
    return out
