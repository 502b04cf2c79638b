"""Test helper: run one function of a third-party MLIR file with upstream MLIR only.

The reference our compiler's output is compared against: mlir-opt's stock
lowering (the TOSA lowerings when the file is TOSA, then mlir_exec's
PIPELINE) and mlir-runner's JIT, on the same inputs and weights. Nothing of
ours executes the IR. A generated ``@__ref_main`` feeds the arguments as
hex dense constants and prints every result with the runner utils'
printMemref* functions.

What differs between exporters is handled here, never by file name:
``_prepare`` lets mlir-opt parse and reprint the file (an implicit module
gets its explicit wrapper, ``!type`` aliases are resolved, each function
header is one line), privatizes every symbol but ``func`` and drops the dead
ones (an existing ``@main`` driver and its ``@rtclock``/print declarations,
unused ``ml_program.global`` seeds), and lowers TOSA; ``inline_resources``
turns ``dense_resource`` blobs into hex ``dense`` so the driver can be
appended inside the module; ``function_signature`` reads the types past
argument and result attributes; ``entry_function`` picks the model function.
``wsc_run`` and ``check`` are the other side of the comparison (wsc's
tools), shared by the sample tests.
"""

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Sequence, Tuple, Union

import numpy as np

import mlir_exec
from wsc import compiler, safetensors

# --tosa-to-linalg-pipeline is upstream's own TOSA -> linalg pipeline (named
# ops, decompositions, shape inference, then the func-nested tosa-to-linalg);
# tosa.const, tosa.reshape/slice/concat and tosa.cond_if/while_loop are left to
# the three passes after it. They leave the tosa.const_shape operands of the
# reshapes dead, which --canonicalize erases.
TOSA_PIPELINE = ["--tosa-to-linalg-pipeline", "--tosa-to-arith", "--tosa-to-tensor",
                 "--tosa-to-scf", "--canonicalize"]

# Upstream passes the files need before mlir_exec's PIPELINE: JAX's
# StableHLO->linalg path leaves elementwise arith on whole tensors (e.g.
# arith.maximumf of two tensors), which does not bufferize.
PRE_LOWERING = ["--convert-elementwise-to-linalg"]

# printMemref<X> for each element type the runner utils can print; every one
# exists as _mlir_ciface_printMemref<X> (BF16, F16, I8 and I16 only so), hence
# the C interface.
_PRINT = {"f32": "F32", "f64": "F64", "f16": "F16", "bf16": "BF16",
          "i64": "I64", "i32": "I32", "i16": "I16", "i8": "I8"}
_NUMPY = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i64": "<i8", "i32": "<i4",
          "i16": "<i2", "i8": "<i1"}


class CannotRun(Exception):
    """The file cannot be executed as written (e.g. its weights are elided)."""


def inline_resources(text: str) -> str:
    """The module with its dense_resource blobs written as hex `dense`
    attributes (the first four blob bytes are the alignment), so that a
    generated driver can close the module. Raises CannotRun for a
    dense_resource without a blob (`dense_resource<__elided__>`)."""
    module, _, resources = text.partition("{-#")
    blobs = dict(re.findall(r'([\w.$-]+|"[^"]*")\s*:\s*"0x([0-9A-Fa-f]*)"', resources))

    def blob(match):
        key = match.group(1)
        if key not in blobs:
            raise CannotRun(f"dense_resource<{key}> has no blob in the file (MLIR prints "
                            "__elided__ for weights left out), so the file cannot be run")
        return f'dense<"0x{blobs[key][8:]}">'
    return re.sub(r'dense_resource\s*<([\w.$-]+|"[^"]*")>', blob, module.rstrip())


def _read(path_or_text: Union[str, Path]) -> str:
    """The module's text, given it or the path of its file."""
    if isinstance(path_or_text, str) and ("\n" in path_or_text or "{" in path_or_text):
        return path_or_text
    return Path(path_or_text).read_text()


def _opt(text: str, *passes: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.mlir")
        Path(src).write_text(text)
        return mlir_exec._call([mlir_exec.MLIR_OPT, src, *passes])


def _prepare(text: str, func: str) -> str:
    """mlir-opt's reprint of `text` with only @func and what it uses left,
    TOSA lowered to linalg/arith/tensor/scf, the blobs inlined."""
    passes = [f"--symbol-privatize=exclude={func}", "--symbol-dce"]
    if re.search(r"\btosa\.", text):
        passes += TOSA_PIPELINE
    return inline_resources(_opt(text, *passes))


def _header(text: str, func: str) -> str:
    """The header of @func with strings and attribute dictionaries removed."""
    match = re.search(rf"func\.func (?:public |private )?@{re.escape(func)}\(.*", text)
    if not match:
        raise KeyError(f"no func.func @{func} in the module")
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', match.group(0))
    while True:  # attribute dicts, innermost first (they may nest)
        stripped = re.sub(r"\{[^{}]*\}", "", line)
        if stripped == line:
            return line
        line = stripped


_TYPE = re.compile(r"(?:tensor|memref)<[^>]*>|\b(?:bf16|f16|f32|f64|i\d+|index)\b")


def _signature(module: str, func: str) -> Tuple[List[str], List[str]]:
    args, _, results = _header(module, func).partition(") -> ")
    args = re.findall(r"%[\w$.-]+\s*:\s*((?:tensor|memref)<[^>]*>|\w+)", args)
    return args, _TYPE.findall(results.split(" attributes ")[0].split("{")[0])


def function_signature(path_or_text: Union[str, Path],
                       func: str) -> Tuple[List[str], List[str]]:
    """Argument and result types of @func, e.g. ["tensor<1x3x224x224xf32>"],
    read from mlir-opt's reprint of the module (aliases resolved, one line)."""
    return _signature(_opt(_read(path_or_text)), func)


def entry_function(path_or_text: Union[str, Path]) -> str:
    """The model function of the file: the public function with a body and
    results that no other such function calls. Private helpers, external
    declarations and drivers that return nothing (a @main calling @forward
    and printing) are not candidates, nor callers."""
    text = _opt(_read(path_or_text))
    funcs = {}  # name -> its text, for each candidate
    for match in re.finditer(r"^  func\.func (public |private )?@([\w$.-]+)\(.*?(?=^  func\.func|\Z)",
                             text, re.M | re.S):
        header = _header(text, match.group(2))
        if match.group(1) != "private " and header.rstrip().endswith("{") and " -> " in header:
            funcs[match.group(2)] = match.group(0)
    called = {c for body in funcs.values() for c in re.findall(r"\bcall @([\w$.-]+)\(", body)}
    roots = sorted(set(funcs) - called)
    if len(roots) != 1:
        raise ValueError(f"no single model function: candidates {roots}")
    return roots[0]


def _shape_elem(tensor_type: str) -> Tuple[List[int], str]:
    match = re.fullmatch(r"tensor<((?:\d+x)*)(\w+)>", tensor_type)
    if not match:
        raise NotImplementedError(f"only statically shaped tensors are fed or printed, "
                                  f"not {tensor_type}")
    return [int(d) for d in match.group(1).split("x") if d], match.group(2)


def _bf16_bits(values) -> np.ndarray:
    """float32 values rounded to nearest even bf16, as 16-bit patterns."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def _constant(array: np.ndarray, tensor_type: str) -> str:
    """`array` as a dense constant of `tensor_type` (bf16 from floats)."""
    shape, elem = _shape_elem(tensor_type)
    if list(array.shape) != shape:
        raise ValueError(f"argument of shape {array.shape} for {tensor_type}")
    if elem == "i1":
        return mlir_exec._dense(array.astype(np.bool_))
    raw = (_bf16_bits(array).astype("<u2") if elem == "bf16"
           else np.ascontiguousarray(array).astype(_NUMPY[elem])).tobytes()
    return f'dense<"0x{raw.hex().upper()}"> : {tensor_type}'


def _typed(values: np.ndarray, elem: str) -> np.ndarray:
    """A parsed result (printed with 6 significant digits) back in its type;
    a bf16 or f16 value comes back exactly, as float32."""
    if elem == "bf16":
        return (_bf16_bits(values).astype(np.uint32) << 16).view(np.float32)
    if elem == "f16":
        return values.astype(np.float16).astype(np.float32)
    return values.astype(np.int64) if elem.startswith("i") else values


def run_function(path_or_text: Union[str, Path], func: str,
                 args: Sequence[np.ndarray]) -> List[np.ndarray]:
    """Call @func of the file (a path, or the module's text) on `args` with
    upstream MLIR only; return all its results. bf16 and f16 arguments are
    given and results returned as float32 arrays, integer results as int64
    (exact below 2**24: mlir_exec._parse reads every value as a float32)."""
    module = _prepare(_read(path_or_text), func)
    arg_types, result_types = _signature(module, func)
    if len(args) != len(arg_types):
        raise ValueError(f"@{func} takes {len(arg_types)} arguments, got {len(args)}")
    if not result_types:
        raise ValueError(f"@{func} returns nothing to compare")
    elems = [_shape_elem(t)[1] for t in result_types]
    missing = sorted(set(elems) - set(_PRINT))
    if missing:
        raise NotImplementedError(f"results of element type {missing} cannot be printed")
    lines = [f"  func.func private @printMemref{_PRINT[e]}(memref<*x{e}>) "
             "attributes {llvm.emit_c_interface}" for e in sorted(set(elems))]
    lines.append("  func.func @__ref_main() {")
    lines += [f"    %a{i} = arith.constant {_constant(a, t)}"
              for i, (a, t) in enumerate(zip(args, arg_types))]
    lines.append(f"    %r:{len(result_types)} = func.call @{func}("
                 f"{', '.join(f'%a{i}' for i in range(len(args)))}) : "
                 f"({', '.join(arg_types)}) -> ({', '.join(result_types)})")
    for k, (t, e) in enumerate(zip(result_types, elems)):
        memref = t.replace("tensor<", "memref<", 1)
        lines += [f"    %m{k} = bufferization.to_buffer %r#{k} : {t} to {memref}",
                  f"    %u{k} = memref.cast %m{k} : {memref} to memref<*x{e}>",
                  f"    func.call @printMemref{_PRINT[e]}(%u{k}) : (memref<*x{e}>) -> ()"]
    lines += ["    return", "  }"]
    assert module.endswith("}")
    program = module[:-1] + "\n".join(lines) + "\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        src, low = os.path.join(tmp, "in.mlir"), os.path.join(tmp, "low.mlir")
        Path(src).write_text(program)
        mlir_exec._call([mlir_exec.MLIR_OPT, src, *PRE_LOWERING, *mlir_exec.PIPELINE,
                         "-o", low])
        out = mlir_exec._call([mlir_exec.MLIR_RUNNER, low, "-e", "__ref_main",
                               "-entry-point-result=void",
                               "-shared-libs=" + ",".join(mlir_exec.RUNTIME_LIBS)])
    results = mlir_exec._parse(out)
    assert len(results) == len(elems), out[:2000]
    return [_typed(r, e) for r, e in zip(results, elems)]


def random_args(path_or_text: Union[str, Path], func: str, rng: np.random.Generator,
                scale: float = 0.1, int_high: int = 100) -> List[np.ndarray]:
    """Random arguments for @func: floats of rank >= 2 standard normal times
    `scale`, of rank 1 uniform in [0.5, 1.5) (float32, also for bf16/f16
    parameters, whose values are then exact in that type; float64 for f64),
    integers in [0, int_high). A rank-1 float is a bias, a scale or a batch
    norm's mean or variance: a variance there keeps sqrt, rsqrt and
    divisions finite, where a normal draw gives NaN. Integers that index a
    table must stay inside it (e.g. MobileBERT's third input indexes 2
    rows): pass a smaller int_high."""
    args = []
    for t in function_signature(path_or_text, func)[0]:
        shape, elem = _shape_elem(t)
        if elem == "i1":
            args.append(rng.integers(0, 2, shape).astype(np.bool_))
        elif elem.startswith("i"):
            args.append(rng.integers(0, int_high, shape).astype(_NUMPY[elem]))
        else:
            x = (rng.uniform(0.5, 1.5, shape) if len(shape) == 1
                 else rng.standard_normal(shape) * scale)
            args.append(_typed(x.astype(np.float64 if elem == "f64" else np.float32), elem))
    return args


# The other side of the comparison, shared by the sample tests: wsc's tools.

def wsc_tool(name: str, *args) -> subprocess.CompletedProcess:
    """Runs a wsc tool; a failure raises with the tool's stderr."""
    proc = subprocess.run([compiler.tool_path(name), *map(str, args)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{name} exited {proc.returncode}:\n{proc.stderr.strip()}")
    return proc


def wsc_run(path: Union[str, Path], systems: int, inputs: Sequence[np.ndarray],
            weights: Dict[str, np.ndarray], tmp_path: Path,
            options: str = "") -> List[np.ndarray]:
    """The file through the tools as docs/TorchMlirInput.md describes, all
    its outputs: `inputs` in wsc.input order, `weights` those the function
    takes as arguments (by wsc's names, "arg<N>"), added to the weights
    --wsc-to-weights lifts from the IR when there are any. `options` are
    more of --wsc-pipeline's (`batch=4`)."""
    compiled, schedule = tmp_path / "model.wsc.mlir", tmp_path / "schedule.json"
    wfile, feed, out = (tmp_path / f"{n}.safetensors" for n in ("weights", "in", "out"))
    wsc_tool("wsc-opt", path, f"--wsc-pipeline=systems={systems} stream-dtype=f32 {options}",
             "-o", compiled)
    wsc_tool("wsc-translate", "--wsc-to-schedule", compiled, "-o", schedule)
    weights = dict(weights)
    if "initial_value" in compiled.read_text():  # else it has nothing to write, an error
        wsc_tool("wsc-translate", "--wsc-to-weights", compiled, "-o", wfile)
        weights.update(safetensors.load(str(wfile)))
    safetensors.save(weights, str(wfile))
    # wsc-run reads integer inputs as I64.
    safetensors.save({f"input{i}": x.astype(np.int64) if x.dtype.kind in "iu" else x
                      for i, x in enumerate(inputs)}, str(feed))
    wsc_tool("wsc-run", schedule, "--weights", wfile, "--inputs", feed, "--outputs", out)
    got = safetensors.load(str(out))
    return [got[f"output{i}"] for i in range(len(got))]


def check(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """rtol 1e-4; zeros after a ReLU and printMemref's 6 significant digits
    need an absolute floor, far below the outputs' scale."""
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6 * np.abs(want).max(),
                               err_msg=what)
