#!/usr/bin/env python3
"""Collects raw seed inputs for the fuzz targets from the project's tests.

    /usr/bin/python3 fuzz/collect_seeds.py BUILD_DIR OUT_DIR

writes OUT_DIR/<target>/ for schedule, safetensors, kgraph, wsc-opt and
interpreter. The committed corpora (fuzz/corpus/<target>) are these,
minimised by libFuzzer: `make fuzz-corpus` (docs/Fuzzing.md). Sources:
  wsc-opt      every lit test's IR (split at `// -----`, with its RUN lines'
               --wsc-pipeline options as the `// wsc-pipeline:` directive),
               the pytest models exported by wsc.export (training and
               inference), the torch-mlir / JAX / IREE-style modules;
  schedule     unittests/Runtime/Inputs and the schedules BUILD_DIR's
               wsc-opt and wsc-translate make of the wsc-opt seeds;
  safetensors  fuzz/inputs, the files the lit tests left in BUILD_DIR/test,
               and checkpoints wsc-run writes of fuzz/inputs;
  kgraph       test/Placement/Inputs and wsc-place's solutions for them;
  interpreter  each committed schedule, unedited, with a few value seeds.
"""

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Larger seeds are left out: they cover little more, and keep the committed
# corpora to a few hundred KB each.
MAX_SEED_BYTES = {"schedule": 12000, "safetensors": 12000, "wsc-opt": 6000,
                  "kgraph": 64 * 1024, "interpreter": 64}


def save(out, target, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_SEED_BYTES[target]:
        return
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=120, **kw)


def lit_ir_seeds():
    """(options, text) per lit test piece."""
    pieces = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        text = open(path).read()
        options = set(m.group(1) or "" for m in
                      re.finditer(r'wsc-pipeline(?:="([^"]*)"|=(\S+))?', text))
        options = sorted(options) or [""]
        body = "\n".join(line for line in text.splitlines()
                         if not re.match(r"\s*//\s*(RUN|CHECK|[A-Z-]+:|expected-)", line))
        for piece in re.split(r"^// -----.*$", body, flags=re.M):
            if piece.strip():
                pieces += [(o, piece) for o in options]
    return pieces


def python_ir_seeds():
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    import torch
    import export_models
    import cnn_models
    import exporter_style_inputs
    import torch_mlir_inputs
    from wsc.export import export_inference, export_training_step

    texts = []
    for cases in (export_models.CASES, cnn_models.CASES):
        for name, make in sorted(cases.items()):
            torch.manual_seed(0)
            model, loss_fn, x, y = make()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            try:
                texts.append(export_training_step(model, loss_fn, opt, (x,), (y,)))
                if name in ("relu_ce", "bn_relu", "conv_s2_p1"):
                    texts.append(export_inference(model.eval(), (x,)))
            except Exception as e:  # an exporter limit is not a seed
                print("skipped", name, e, file=sys.stderr)
    for models in (torch_mlir_inputs.MODELS, exporter_style_inputs.MODELS):
        for name, make in sorted(models.items()):
            texts.append(make()[1])
    return texts


def main(build, out):
    tools = os.path.join(build, "bin")
    tmp = tempfile.mkdtemp()
    try:
        # wsc-opt, and the schedules compiled from it.
        seeds = lit_ir_seeds()
        seeds += [(o, t) for t in python_ir_seeds()
                  for o in ("", "systems=2 stream-dtype=f32 min-param-elements=16")]
        for options, text in seeds:
            save(out, "wsc-opt", ("// wsc-pipeline: " + options + "\n" if options else "") + text)
            opt = run([os.path.join(tools, "wsc-opt"), "-",
                       "--wsc-pipeline=" + options + " time-limit=0.5"], input=text.encode())
            if opt.returncode != 0:
                continue
            tr = run([os.path.join(tools, "wsc-translate"), "--wsc-to-schedule", "-"],
                     input=opt.stdout)
            if tr.returncode == 0:
                save(out, "schedule", tr.stdout)
        for path in glob.glob(os.path.join(ROOT, "unittests", "Runtime", "Inputs", "*.json")):
            save(out, "schedule", open(path, "rb").read())

        # safetensors: the fixture's files, lit's files, checkpoints.
        inputs = os.path.join(ROOT, "fuzz", "inputs")
        for path in glob.glob(os.path.join(inputs, "*.safetensors")) + glob.glob(
                os.path.join(build, "test", "**", "*.safetensors"), recursive=True):
            save(out, "safetensors", open(path, "rb").read())
        ck = os.path.join(tmp, "ck")
        run([os.path.join(tools, "wsc-run"),
             os.path.join(ROOT, "unittests", "Runtime", "Inputs", "sparse_mlp_s2.json"),
             "--weights", os.path.join(inputs, "sparse_mlp_s2.weights.safetensors"),
             "--data", os.path.join(inputs, "sparse_mlp_s2.data.safetensors"),
             "--steps", "3", "--checkpoint-dir", ck, "--checkpoint-every", "1"], check=True)
        for path in glob.glob(os.path.join(ck, "step-*.safetensors")):
            save(out, "safetensors", open(path, "rb").read())

        # kgraph: graphs, and graph NUL solution.
        for path in glob.glob(os.path.join(ROOT, "test", "Placement", "Inputs", "*.kgraph")):
            graph = open(path, "rb").read()
            save(out, "kgraph", graph)
            placed = run([os.path.join(tools, "wsc-place"), path, "--time-limit", "1"])
            if placed.returncode == 0:
                save(out, "kgraph", graph + b"\0" + placed.stdout)

        # interpreter: schedule i unedited (second byte: no edits), a few value seeds.
        for i in range(12):
            for seed in (b"\x01\x02\x03\x04", b"\x7f\x00\x10\x22"):
                save(out, "interpreter", bytes([i, 0]) + seed + b"\x01\x00\x00\x00")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]))
