"""Every real third-party file in ../shared/samples/third-party (see its
README: tpp-mlir, HEIR and buddy-mlir models written by TF/IREE, JAX,
torch-mlir and PyTorch Dynamo -> TOSA, with weights as constants, splats,
blobs or arguments) compiles with wsc-opt --wsc-pipeline, translates and
runs inference in wsc-run; every output matches upstream MLIR's own
execution of the same file (upstream_reference: mlir-opt's stock lowering,
JIT-run by mlir-runner) on the same inputs and weights at rtol 1e-4.
A file whose weights are elided cannot run numerics: wsc refuses it.

Nothing here is keyed to a file: the model function, its inputs and its
weights are read from the files and from wsc's import. The files are read
where they are, never copied into the project; the tests skip only when
that directory is absent.
"""
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from upstream_reference import (CannotRun, check, entry_function, random_args,
                                run_function, wsc_run, wsc_tool)
from wsc import compiler, safetensors

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples" / "third-party"

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"{SAMPLES} is absent")

FILES = sorted(SAMPLES.glob("*.mlir")) if SAMPLES.is_dir() else []
# MLIR prints the weights it leaves out as dense_resource<__elided__>.
ELIDED = [f for f in FILES if "dense_resource<__elided__>" in f.read_text()]
RUNNABLE = [f for f in FILES if f not in ELIDED]

# The module as --wsc-pipeline's import leaves it: the function's argument
# attributes say which of its own arguments are model inputs (wsc.input = k)
# and which are weights (wsc.param = "arg<N>"), as the compiled module no
# longer does.
AFTER_IMPORT = ["--wsc-pipeline", "--mlir-print-ir-after=wsc-import-torch-mlir", "-o",
                "/dev/null"]


def arguments(path, func, *passes):
    """(location, text) of each argument of @func as parsed, or after
    AFTER_IMPORT; big attributes elided so that the header stays short."""
    proc = wsc_tool("wsc-opt", path, *passes, "--mlir-elide-elementsattrs-if-larger=16",
                    "--mlir-print-debuginfo", "--mlir-print-local-scope")
    # After the dump's banner: diagnostics before it quote source lines.
    text = proc.stderr.split("IR Dump After")[-1] if passes else proc.stdout
    header = next(line for line in text.splitlines()
                  if re.search(rf"func\.func (public )?@{re.escape(func)}\(", line))
    args = re.split(r"%arg\d+: ", header.split(") -> ")[0])[1:]
    return [(arg[arg.rindex(" loc("):].rstrip(", "), arg) for arg in args]


def interface(path, func):
    """The positions of @func's model inputs in wsc.input order, and its
    weight arguments as {position: wsc.param name}, from wsc's import."""
    # The import appends the weights it lifts from the IR (--wsc-to-weights
    # writes those) and drops arguments only written into (a result's
    # destination): its arguments are the file's by their source locations.
    position = {loc: i for i, (loc, _) in enumerate(arguments(path, func))}
    inputs, weights = {}, {}
    for loc, attrs in arguments(path, func, *AFTER_IMPORT):
        if loc not in position:
            continue
        if match := re.search(r"wsc\.input = (\d+)", attrs):
            inputs[int(match.group(1))] = position[loc]
        elif match := re.search(r'wsc\.param = "([^"]+)"', attrs):
            weights[position[loc]] = match.group(1)
        else:
            raise AssertionError(f"argument at {loc} is neither an input nor a weight")
    return [inputs[k] for k in range(len(inputs))], weights


def system_counts(inputs, results):
    """1, and 2 when the batch (dim 0 of every input and result, which wsc
    shards) is one even number > 1."""
    batches = {x.shape[0] for x in (*inputs, *results)}
    batch = batches.pop() if len(batches) == 1 else 1
    return [1, 2] if batch > 1 and batch % 2 == 0 else [1]


# Files that do not run yet, each with the open part of issue #40 it waits
# for. Strict: a file that starts to pass fails the suite until it leaves
# this table.
NOT_YET = {
}


def _runnable(path):
    reason = NOT_YET.get(path.name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, marks=marks, id=path.name)


@pytest.mark.parametrize("path", [_runnable(p) for p in RUNNABLE])
def test_inference_matches_upstream(path, tmp_path):
    func = entry_function(path)
    # Seeded draws for every argument, inputs and weights alike, finite for
    # any model (random_args: rank-1 floats such as batch-norm variances are
    # positive). Integers are ids in [0, 2): inside every table an id may
    # index (the smallest, MobileBERT's type-id table, has 2 rows), and the
    # values of a 0/1 mask.
    args = random_args(path, func, np.random.default_rng(0), int_high=2)
    inputs, weights = interface(path, func)
    want = run_function(path, func, args)
    for systems in system_counts([args[i] for i in inputs], want):
        run_dir = tmp_path / f"systems{systems}"
        run_dir.mkdir()
        got = wsc_run(path, systems, [args[i] for i in inputs],
                      {name: args[i] for i, name in weights.items()}, run_dir)
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            check(g, w, f"output{k} on {systems} system(s)")


@pytest.mark.parametrize("path", [_runnable(p) for p in RUNNABLE])
def test_rebatched_samples_match_one_by_one(path, tmp_path):
    """batch=N runs the file at another batch size: each sample of a run at
    the new batch is that sample's output at the traced one. A file whose
    samples wsc-opt cannot tell apart is refused at the op, naming batch=."""
    func = entry_function(path)
    inputs, weights = interface(path, func)
    rng = np.random.default_rng(1)
    traced = [random_args(path, func, rng, int_high=2) for _ in range(2)]
    weight_values = {name: traced[0][i] for i, name in weights.items()}
    batch = traced[0][inputs[0]].shape[0]
    stacked = [np.concatenate([t[i] for t in traced]) for i in inputs]
    try:
        got = wsc_run(path, 1, stacked, weight_values, tmp_path, f"batch={2 * batch}")
    except AssertionError as refused:
        assert re.search(r"\.mlir:\d+:\d+: error: .*batch=", str(refused)), refused
        return
    for k in range(2):
        run_dir = tmp_path / f"sample{k}"
        run_dir.mkdir()
        want = wsc_run(path, 1, [traced[k][i] for i in inputs], weight_values, run_dir)
        for j, (g, w) in enumerate(zip(got, want)):
            check(g[k * w.shape[0]:(k + 1) * w.shape[0]], w, f"output{j}, traced batch {k}")


def compile_elided(path, tmp_path):
    """wsc-opt compiles a file with elided weights, warning that zeros stand
    in for them, and wsc-translate writes its schedule."""
    compiled, schedule = tmp_path / "model.wsc.mlir", tmp_path / "schedule.json"
    proc = subprocess.run([compiler.tool_path("wsc-opt"), str(path),
                           "--wsc-pipeline=systems=1 stream-dtype=f32", "-o", str(compiled)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "were elided (dense_resource<__elided__>): zeros stand in" in proc.stderr
    wsc_tool("wsc-translate", "--wsc-to-schedule", compiled, "-o", schedule)
    return compiled, schedule


@pytest.mark.parametrize("path", ELIDED, ids=lambda p: p.name)
def test_elided_weights_cannot_run_inference(path, tmp_path):
    """Without the weights neither side has numerics: upstream's reference
    says so, and wsc-run refuses the schedule's numerics (exit 1, not a
    signal), naming --model-only."""
    func = entry_function(path)
    with pytest.raises(CannotRun, match="__elided__"):
        run_function(path, func, random_args(path, func, np.random.default_rng(0), int_high=2))
    compiled, schedule = compile_elided(path, tmp_path)
    weights, feed = tmp_path / "w.safetensors", tmp_path / "in.safetensors"
    wsc_tool("wsc-translate", "--wsc-to-weights", compiled, "-o", weights)
    inputs, _ = interface(path, func)
    args = random_args(path, func, np.random.default_rng(0), int_high=2)
    safetensors.save({f"input{k}": args[i] for k, i in enumerate(inputs)}, str(feed))
    proc = subprocess.run([compiler.tool_path("wsc-run"), str(schedule), "--weights", str(weights),
                           "--inputs", str(feed), "--outputs", str(tmp_path / "out.safetensors")],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "weights were elided" in proc.stderr and "--model-only" in proc.stderr, proc.stderr


@pytest.mark.parametrize("path", ELIDED, ids=lambda p: p.name)
def test_elided_weights_compile_for_model_only(path, tmp_path):
    """The mapping is still there to see: wsc-run --model-only models it."""
    _, schedule = compile_elided(path, tmp_path)
    out = wsc_tool("wsc-run", schedule, "--model-only").stdout
    assert re.search(r"summary: modeled step [0-9.]+ [num]?s", out), out


def _bf16_hex(rng, shape):
    from upstream_reference import _bf16_bits
    bits = _bf16_bits(rng.standard_normal(shape).astype(np.float32) * 0.5)
    return '"0x' + bits.astype("<u2").tobytes().hex().upper() + '"'


def test_bf16_weights_with_values_match_upstream(tmp_path):
    """The bf16 sample's weights are splats, and its outputs saturate; here
    a torch-mlir dynamo bf16 MLP with real weights (a 64x32 parameter,
    streamed from its f32 master copy, and bf16 constants) runs in bf16 as
    upstream's lowering does: every op, and each term of a matmul's sum,
    rounded to bf16."""
    rng = np.random.default_rng(3)
    text = f"""#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
module attributes {{torch.debug_module_name = "_lambda"}} {{
  func.func @forward(%arg0: tensor<8x64xbf16>) -> tensor<8x16xbf16> {{
    %w0 = arith.constant dense<{_bf16_hex(rng, (64, 32))}> : tensor<64x32xbf16>
    %b0 = arith.constant dense<{_bf16_hex(rng, (32,))}> : tensor<32xbf16>
    %w1 = arith.constant dense<{_bf16_hex(rng, (32, 16))}> : tensor<32x16xbf16>
    %zero = arith.constant 0.000000e+00 : bf16
    %e0 = tensor.empty() : tensor<8x32xbf16>
    %f0 = linalg.fill ins(%zero : bf16) outs(%e0 : tensor<8x32xbf16>) -> tensor<8x32xbf16>
    %m0 = linalg.matmul ins(%arg0, %w0 : tensor<8x64xbf16>, tensor<64x32xbf16>) outs(%f0 : tensor<8x32xbf16>) -> tensor<8x32xbf16>
    %h = linalg.generic {{indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]}} ins(%m0, %b0 : tensor<8x32xbf16>, tensor<32xbf16>) outs(%e0 : tensor<8x32xbf16>) {{
    ^bb0(%in: bf16, %in_1: bf16, %out: bf16):
      %s = arith.addf %in, %in_1 : bf16
      %p = arith.cmpf ugt, %s, %zero : bf16
      %r = arith.select %p, %s, %zero : bf16
      linalg.yield %r : bf16
    }} -> tensor<8x32xbf16>
    %e1 = tensor.empty() : tensor<8x16xbf16>
    %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<8x16xbf16>) -> tensor<8x16xbf16>
    %m1 = linalg.matmul ins(%h, %w1 : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%f1 : tensor<8x16xbf16>) -> tensor<8x16xbf16>
    return %m1 : tensor<8x16xbf16>
  }}
}}
"""
    path = tmp_path / "bf16_mlp.mlir"
    path.write_text(text)
    args = random_args(path, "forward", np.random.default_rng(4), scale=1.0)
    want = run_function(path, "forward", args)
    inputs, weights = interface(path, "forward")
    assert not weights and inputs == [0]
    for systems in (1, 2):
        run_dir = tmp_path / f"systems{systems}"
        run_dir.mkdir()
        got = wsc_run(path, systems, [args[0]], {}, run_dir)
        assert len(got) == 1
        check(got[0], want[0], f"on {systems} system(s)")
    params = subprocess.run([compiler.tool_path("wsc-opt"), str(path), "--wsc-pipeline"],
                            capture_output=True, text=True, check=True).stdout
    assert re.search(r"wsc\.(memx|wafer)\.param @const0 : tensor<64x32xf32>", params), "no f32 master"
