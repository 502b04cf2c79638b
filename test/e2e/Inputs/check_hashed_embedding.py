"""Checks torch-mlir-hashed-embedding.test's output against numpy: the two
tables come from the weights file wsc-translate --wsc-to-weights wrote and
must hold the module's values; floor division and remainder are numpy's,
which round toward negative infinity as torch.div(rounding_mode='floor')
and torch.remainder do."""
import sys

import numpy as np

from wsc import safetensors

weights, inputs, outputs = (safetensors.load(p) for p in sys.argv[1:4])
print("weights", " ".join(sorted(weights)))
hi, lo = weights["const0"], weights["const1"]
assert np.array_equal(hi, np.arange(32, dtype=np.float32).reshape(8, 4) / 8 - 1), hi
assert np.array_equal(lo, np.arange(16, dtype=np.float32).reshape(4, 4) / 4 - 2), lo
w = np.array([[1, -1, 0.5, 2], [0, 1, -2, 0.25]], np.float32)
b = np.array([0.5, -0.25], np.float32)
ids = inputs["input0"]
want = (hi[np.floor_divide(ids, 4) + 4] + lo[np.remainder(ids, 4)]) @ w.T + b
got = outputs["output0"]
error = np.abs(got - want).max()
assert error < 1e-5, (got, want)
print("max abs error", 0 if error < 1e-5 else error)
