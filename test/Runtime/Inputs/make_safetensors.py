"""Writes a small .safetensors file with deterministic contents (no numpy).

    make_safetensors.py OUT NAME:DTYPE:SHAPE[:MOD] ...

DTYPE is F32, F16, I64 or BOOL; SHAPE is like 2x7x3 (or "scalar"). Element
i holds sin(i + len(NAME)) for floats and i % MOD (default 3) for integers.
Also: --raw-header TEXT writes TEXT as the header of an otherwise empty
file, --truncate N drops the last N bytes.
"""

import json
import math
import struct
import sys


def encode(dtype, values):
    if dtype == "F32":
        return struct.pack("<%df" % len(values), *values)
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)
    if dtype == "I64":
        return struct.pack("<%dq" % len(values), *values)
    if dtype == "BOOL":
        return bytes(1 if v else 0 for v in values)
    raise SystemExit("unknown dtype " + dtype)


def main(argv):
    out, specs = argv[0], argv[1:]
    truncate = 0
    if "--truncate" in specs:
        i = specs.index("--truncate")
        truncate = int(specs[i + 1])
        specs = specs[:i] + specs[i + 2:]
    if specs and specs[0] == "--raw-header":
        text = specs[1].encode()
        data = struct.pack("<Q", len(text)) + text
    else:
        header, blobs, offset = {}, [], 0
        for spec in specs:
            parts = spec.split(":")
            name, dtype, shape = parts[0], parts[1], parts[2]
            mod = int(parts[3]) if len(parts) > 3 else 3
            dims = [] if shape == "scalar" else [int(d) for d in shape.split("x")]
            n = 1
            for d in dims:
                n *= d
            if dtype in ("F32", "F16"):
                values = [math.sin(i + len(name)) for i in range(n)]
            else:
                values = [i % mod for i in range(n)]
            blob = encode(dtype, values)
            header[name] = {"dtype": dtype, "shape": dims,
                            "data_offsets": [offset, offset + len(blob)]}
            offset += len(blob)
            blobs.append(blob)
        text = json.dumps(header).encode()
        text += b" " * (-(8 + len(text)) % 8)
        data = struct.pack("<Q", len(text)) + text + b"".join(blobs)
    if truncate:
        data = data[:-truncate]
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(sys.argv[1:])
