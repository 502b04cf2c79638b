"""A small numpy reader/writer for the safetensors format (wsc-run's weights and data)."""
import json
import struct
from typing import Dict

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
           "BOOL": np.bool_, "F64": np.float64}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def save(tensors: Dict[str, np.ndarray], path: str) -> None:
    """Writes `tensors` (name -> array) to `path`, data 8-byte aligned."""
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        array = np.asarray(array, order="C")  # ascontiguousarray would make a scalar 1-D
        if array.dtype not in _NAMES:
            raise TypeError(f"{name}: dtype {array.dtype} has no safetensors name")
        data = array.tobytes()
        header[name] = {"dtype": _NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def load(path: str) -> Dict[str, np.ndarray]:
    """Reads every tensor of a safetensors file."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: truncated header")
    (size,) = struct.unpack("<Q", raw[:8])
    if 8 + size > len(raw):
        raise ValueError(f"{path}: header length {size} exceeds the file")
    header = json.loads(raw[8:8 + size])
    data = raw[8 + size:]
    result = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        if entry["dtype"] == "BF16" and 0 <= begin <= end <= len(data) and (end - begin) % 2 == 0:
            # numpy has no bfloat16: its values, exactly, as float32.
            bits = np.frombuffer(data[begin:end], dtype=np.uint16).astype(np.uint32) << 16
            result[name] = bits.view(np.float32).reshape(entry["shape"]).copy()
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None or not 0 <= begin <= end <= len(data):
            raise ValueError(f"{path}: tensor {name!r} is malformed")
        array = np.frombuffer(data[begin:end], dtype=dtype)
        result[name] = array.reshape(entry["shape"]).copy()
    return result
