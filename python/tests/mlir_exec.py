"""Test helper: run an exported function with upstream MLIR's own CPU JIT.

This checks the exporter's numerics end to end without any code of ours
executing the IR: mlir-opt bufferizes and lowers the module to LLVM with
stock passes, mlir-runner JIT-runs a generated ``@main`` that feeds the
arguments as dense constants and prints every result with printMemrefF32
(printMemrefI64 for i64 results).
"""

import os
import re
import subprocess
import tempfile
from typing import List, Sequence

import numpy as np

LLVM = "/usr/lib/llvm-22"
MLIR_OPT = f"{LLVM}/bin/mlir-opt"
MLIR_RUNNER = f"{LLVM}/bin/mlir-runner"
RUNTIME_LIBS = [f"{LLVM}/lib/libmlir_runner_utils.so", f"{LLVM}/lib/libmlir_c_runner_utils.so"]

# --expand-strided-metadata turns the subviews of slices into affine.apply on
# offsets and strides, so --lower-affine must run after it.
PIPELINE = [
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--convert-linalg-to-loops", "--expand-strided-metadata", "--lower-affine",
    "--convert-scf-to-cf", "--finalize-memref-to-llvm", "--convert-math-to-llvm",
    "--convert-math-to-libm", "--convert-arith-to-llvm", "--convert-index-to-llvm",
    "--convert-func-to-llvm", "--convert-cf-to-llvm", "--reconcile-unrealized-casts",
]


def _type(array: np.ndarray) -> str:
    elem = {np.dtype("float32"): "f32", np.dtype("int64"): "i64", np.dtype("bool"): "i1"}[
        array.dtype]
    return "tensor<" + "".join(f"{d}x" for d in array.shape) + elem + ">"


def _dense(array: np.ndarray) -> str:
    if array.dtype == np.bool_:  # i1 as a nested list of true/false (masks are small)
        text = np.array2string(array, separator=", ", threshold=array.size + 1,
                               formatter={"bool": lambda v: "true" if v else "false"})
        return f"dense<{text.replace(chr(10), '')}> : {_type(array)}"
    raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    return f'dense<"0x{raw.hex().upper()}"> : {_type(array)}'


def _result_types(text: str, func: str) -> List[str]:
    header = next(line for line in text.splitlines() if f"func.func @{func}(" in line)
    results = header.split(") -> (", 1)[1]
    return re.findall(r"tensor<[^>]*>", results)


def run(text: str, func: str, args: Sequence[np.ndarray]) -> List[np.ndarray]:
    """Call ``@func`` of the exported module on ``args``; return its results."""
    results = _result_types(text, func)
    lines = ["  func.func private @printMemrefF32(memref<*xf32>)",
             "  func.func private @printMemrefI64(memref<*xi64>)", "  func.func @main() {"]
    for i, a in enumerate(args):
        lines.append(f"    %a{i} = arith.constant {_dense(a)}")
    arg_types = ", ".join(_type(a) for a in args)
    lines.append(f"    %r:{len(results)} = func.call @{func}({', '.join(f'%a{i}' for i in range(len(args)))})"
                 f" : ({arg_types}) -> ({', '.join(results)})")
    for k, t in enumerate(results):
        memref = t.replace("tensor<", "memref<")
        elem = "i64" if t.endswith("i64>") else "f32"  # i64: e.g. num_batches_tracked
        lines.append(f"    %m{k} = bufferization.to_buffer %r#{k} : {t} to {memref}")
        lines.append(f"    %u{k} = memref.cast %m{k} : {memref} to memref<*x{elem}>")
        lines.append(f"    func.call @printMemref{elem.upper()}(%u{k}) : (memref<*x{elem}>) -> ()")
    lines += ["    return", "  }"]
    body = text.rstrip()
    assert body.endswith("}")
    program = body[:-1] + "\n".join(lines) + "\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        src, low = os.path.join(tmp, "in.mlir"), os.path.join(tmp, "low.mlir")
        with open(src, "w") as f:
            f.write(program)
        _call([MLIR_OPT, src, *PIPELINE, "-o", low])
        out = _call([MLIR_RUNNER, low, "-e", "main", "-entry-point-result=void",
                     "-shared-libs=" + ",".join(RUNTIME_LIBS)])
    return [a.astype(np.int64) if t.endswith("i64>") else a
            for a, t in zip(_parse(out), results)]


def _call(cmd) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{os.path.basename(cmd[0])} failed:\n{proc.stderr[:4000]}")
    return proc.stdout


_NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", re.IGNORECASE)


def _parse(stdout: str) -> List[np.ndarray]:
    arrays = []
    for chunk in stdout.split("Unranked Memref")[1:]:
        sizes = [int(s) for s in re.search(r"sizes = \[([^\]]*)\]", chunk).group(1).split(",") if s.strip()]
        data = chunk.split("data =", 1)[1]
        values = [float(v) for v in _NUMBER.findall(data)]
        arrays.append(np.array(values, dtype=np.float32).reshape(sizes))
    return arrays
