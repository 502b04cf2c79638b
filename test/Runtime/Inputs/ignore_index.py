"""Inputs for ignore-index.test.

    ignore_index.py schedule IN.json OUT.json IGNORE [--no-num-classes]
        IN with "ignore_index": IGNORE on its label input (and without its
        "num_classes" if asked)
    ignore_index.py data OUT.safetensors L0,L1,...
        input0 (F32 6x4, as make_safetensors.py writes it) and label0 (I64)
        holding the given labels
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_safetensors import main as make_safetensors  # noqa: E402


def schedule(src, dst, ignore, *flags):
    with open(src) as f:
        doc = json.load(f)
    label = next(i for i in doc["inputs"] if i["role"] == "label")
    label["ignore_index"] = int(ignore)
    if "--no-num-classes" in flags:
        del label["num_classes"]
    with open(dst, "w") as f:
        json.dump(doc, f)


def data(dst, labels):
    values = [int(v) for v in labels.split(",")]
    # make_safetensors writes i % MOD; overwrite the labels' bytes with ours.
    make_safetensors([dst, "input0:F32:6x4", f"label0:I64:{len(values)}"])
    with open(dst, "rb") as f:
        blob = bytearray(f.read())
    size = struct.unpack("<Q", blob[:8])[0]
    start, end = json.loads(blob[8:8 + size])["label0"]["data_offsets"]
    blob[8 + size + start:8 + size + end] = struct.pack(f"<{len(values)}q", *values)
    with open(dst, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    {"schedule": schedule, "data": data}[sys.argv[1]](*sys.argv[2:])
