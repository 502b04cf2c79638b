"""Checks torch-mlir-mlp.test's output against numpy on the weights written by
wsc-translate --wsc-to-weights, which must hold the module's values."""
import sys

import numpy as np

from wsc import safetensors

weights, inputs, outputs = (safetensors.load(p) for p in sys.argv[1:4])
print("weights", " ".join(sorted(weights)))
w1 = weights["torch_tensor_4_8_torch.float32"]
w2 = weights["fc2.weight"]
assert np.array_equal(w1, np.arange(32, dtype=np.float32).reshape(4, 8) / 16 - 1), w1
assert np.array_equal(w2, np.array([[1, -1, 0.5, 2], [0, 1, -2, 0.25]], np.float32)), w2
b1 = np.array([0.5, -0.25, 0.0, 1.0], np.float32)
x = inputs["input0"]
want = np.maximum(x @ w1.T + b1, 0) @ w2.T
got = outputs["output0"]
error = np.abs(got - want).max()
assert error < 1e-5, (got, want)
print("max abs error", 0 if error < 1e-5 else error)
