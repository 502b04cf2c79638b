#!/usr/bin/env python3
"""Black-box mutation fuzz of the tool chain: wsc-opt -> wsc-translate -> wsc-run.

A development script (not part of `make test`; docs/MutationFuzz.md). It
mutates the inputs the tools meet in practice and runs each case through the
whole chain with timeouts:

  * textual MLIR: the test suite's inputs (each `// -----` chunk of
    test/**/*.mlir and the Inputs/ folders), modules exported by
    `python -m wsc.export` (examples/*.py and a few small torch.nn models
    written into the work directory), torch-mlir-style modules
    (/work/shared/samples/torch-mlir/*.mlir when present, read in place);
  * `--wsc-pipeline` option strings (those of the lit RUN lines);
  * the schedules and safetensors files the tools produce (fed to wsc-run).

Mutations: numeric edits (0, -1, 2^31, 2^62, 2^63-1, nan, inf, ...), a dim
replaced everywhere, token deletion and duplication, truncation, bracket
cuts, attribute removal and renaming (wsc.loss, wsc.param, wsc.input, ...),
resource-blob edits, deep nesting, option edits (systems=0/-1/300/nan, ...).

Each case is classified:
  signal   a tool died of a signal (or printed an LLVM crash banner)
  hang     a tool ran past --timeout
  silent   silent acceptance: wsc-opt and wsc-translate accepted but
           wsc-run rejected; or the schedule has a non-finite, negative or
           absurd figure; or a tool exited 0 having printed an error
  mute     a tool exited non-zero without a message
  resource a tool ran out of its memory or file-size bound (8 GB, 2 GB):
           the case asked for that much; listed, not a failure
  value-check  wsc-run stopped at a check of the values it computed: a
           non-finite loss or gradient (issue 21 item 5), the model's own
           cf.assert, or a slice past a sample's valid length under VTS; an
           outcome of the mutated constants or the drawn data, not a rejection
  rejected a clean rejection (non-zero exit with a message)
  ran      accepted by every tool, and wsc-run ran one step

signal, hang, silent and mute are failures: their inputs are written under
--out (one folder per case, with repro.sh), and the table groups them by
the first line of the failing tool's message.

    /usr/bin/python3 scripts/mutation-fuzz.py --cases 10000 --seed 1 \\
        --work /tmp/wsc-mutfuzz --out /tmp/wsc-mutfuzz/failures

Deterministic for a given --seed and seed set; one tool process at a time.
"""

import argparse
import glob
import json
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

from mutfuzz_mutations import TEXT_MUTATORS, mutate_bytes, mutate_json, mutate_options

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_MLIR_SAMPLES = "/work/shared/samples/torch-mlir"

# --- seeds -----------------------------------------------------------------

# Small models for `wsc.export`, besides examples/*.py: a conv/BN CNN, an
# embedding model with LayerNorm, an MSE regressor with Adam, dropout.
SEED_MODELS = {
    "cnn_bn.py": '''
import torch
from torch import nn
from wsc.export import Example

def build(batch_size: int = 4) -> Example:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    return Example(model=model, loss_fn=nn.CrossEntropyLoss(),
                   optimizer=torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                   inputs=torch.randn(batch_size, 3, 12, 12),
                   targets=torch.randint(0, 5, (batch_size,)))
''',
    "embed_ln.py": '''
import torch
from torch import nn
from wsc.export import Example

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 16)
        self.ln = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 7)
    def forward(self, ids):
        return self.fc(self.ln(self.emb(ids)).mean(dim=1))

def build(batch_size: int = 4) -> Example:
    torch.manual_seed(0)
    model = Net()
    return Example(model=model, loss_fn=nn.CrossEntropyLoss(),
                   optimizer=torch.optim.AdamW(model.parameters(), lr=1e-3),
                   inputs=torch.randint(0, 20, (batch_size, 6)),
                   targets=torch.randint(0, 7, (batch_size,)))
''',
    "mse_adam.py": '''
import torch
from torch import nn
from wsc.export import Example

def build(batch_size: int = 6) -> Example:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Dropout(0.1), nn.Linear(24, 3))
    return Example(model=model, loss_fn=nn.MSELoss(),
                   optimizer=torch.optim.Adam(model.parameters(), lr=1e-3),
                   inputs=torch.randn(batch_size, 10), targets=torch.randn(batch_size, 3))
''',
}

PIPELINE_OPTION = re.compile(r'--wsc-pipeline(?:="([^"]*)"|=(\S+)|\b)')


def split_chunks(text):
    return [c.strip("\n") + "\n" for c in re.split(r"^// -----\s*$", text, flags=re.M) if c.strip()]


def run_lines(text):
    return "\n".join(l for l in text.splitlines() if l.lstrip().startswith(("// RUN:", "# RUN:")))


def collect_seed_texts(work):
    """(name, text, entry) for every seed module; entry is 'pipeline' or 'translate'."""
    seeds = []
    paths = sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True))
    for path in paths:
        text = open(path).read()
        runs = run_lines(text)
        entry = "translate" if "wsc-translate" in runs and "%s" in runs and "wsc-opt %s" not in runs else "pipeline"
        rel = os.path.relpath(path, ROOT)
        for i, chunk in enumerate(split_chunks(text)):
            seeds.append((f"{rel}#{i}", chunk, entry))
    for path in sorted(glob.glob(os.path.join(TORCH_MLIR_SAMPLES, "*.mlir"))):
        seeds.append((path, open(path).read(), "pipeline"))
    seeds.extend(exported_seeds(work))
    return seeds


def collect_option_strings():
    options = {""}
    for path in glob.glob(os.path.join(ROOT, "test", "**", "*"), recursive=True):
        if not os.path.isfile(path) or not path.endswith((".mlir", ".test")):
            continue
        for m in PIPELINE_OPTION.finditer(run_lines(open(path, errors="replace").read())):
            options.add(m.group(1) or m.group(2) or "")
    # The placement budget of a test-sized model: 2 s keeps cases short.
    return sorted(o for o in options if "time-limit" not in o)


def exported_seeds(work):
    out = []
    models = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
    os.makedirs(os.path.join(work, "models"), exist_ok=True)
    for name, source in SEED_MODELS.items():
        path = os.path.join(work, "models", name)
        with open(path, "w") as f:
            f.write(source)
        models.append(path)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    for model in models:
        stem = os.path.splitext(os.path.basename(model))[0]
        for inference in (False, True):
            tag = stem + ("-inference" if inference else "")
            mlir = os.path.join(work, "models", tag + ".mlir")
            if not os.path.exists(mlir):
                cmd = [sys.executable, "-m", "wsc.export", model, "-o", mlir, "--batch", "8"]
                cmd += ["--inference"] if inference else []
                r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
                if r.returncode != 0:
                    print(f"seed export failed: {tag}: {r.stderr.strip()[-300:]}", file=sys.stderr)
                    continue
            out.append((f"export:{tag}", open(mlir).read(), "pipeline"))
    return out


# --- safetensors and inputs for wsc-run -------------------------------------

ST_DTYPES = {"f32": ("F32", "<f4"), "f16": ("F16", "<f2"), "bf16": ("BF16", None),
             "i64": ("I64", "<i8"), "i32": ("I32", "<i4"), "i1": ("BOOL", "|b1")}
MAX_RUN_ELEMENTS = 1 << 24


def read_safetensors(path):
    """name -> (dtype, shape, raw bytes), dtype spelled as in the schedule."""
    names = {st: d for d, (st, _) in ST_DTYPES.items()}
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = (names[entry["dtype"]], entry["shape"], data[8 + n + begin:8 + n + end])
    return out


def write_safetensors(path, tensors):
    """tensors: name -> (dtype, shape, array or raw bytes)."""
    import numpy as np
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, array) in tensors.items():
        st, npd = ST_DTYPES[dtype]
        if isinstance(array, bytes):
            raw = array
        elif dtype == "bf16":
            raw = (np.asarray(array, dtype="<f4").view("<u4") >> 16).astype("<u2").tobytes()
        else:
            raw = np.asarray(array).astype(npd).tobytes()
        header[name] = {"dtype": st, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def elements(shape):
    n = 1
    for d in shape:
        if not isinstance(d, int) or d < 0:
            return None
        n *= d
    return n


def run_files(schedule, rng, folder, weights=None):
    """wsc-run's arguments for one step of `schedule` (parsed JSON): weights
    (given, or drawn from the params' shapes) and data or inputs drawn from
    the inputs' shapes. None when they would be too large: --model-only."""
    import numpy as np
    params = schedule.get("params") or []
    inputs = [i for i in schedule.get("inputs") or [] if i.get("role") in ("input", "label")]
    sizes = [elements(t.get("shape", [])) for t in list(params) + inputs]
    if any(s is None for s in sizes) or sum(sizes) > MAX_RUN_ELEMENTS:
        return None
    gen = np.random.default_rng(rng.randrange(1 << 30))
    # wsc-translate --wsc-to-weights writes the weights the IR carries; an
    # imported function's argument weights come from the user: drawn here.
    given = read_safetensors(weights) if weights else {}
    if weights is None or any(p["name"] not in given for p in params):
        tensors = dict(given)
        for p in params:
            if p["name"] in given:
                continue
            shape, dtype = p["shape"], p.get("dtype", "f32")
            if dtype not in ST_DTYPES:
                return None
            if p.get("buffer") and dtype == "f32" and "var" in p["name"]:
                a = np.ones(shape)
            elif p.get("buffer"):
                a = np.zeros(shape)
            else:
                a = gen.normal(0, 0.1, shape)
            tensors[p["name"]] = (dtype, shape, a)
        weights = os.path.join(folder, "weights.safetensors")
        write_safetensors(weights, tensors)
    data = {}
    for i in inputs:
        shape, dtype = i["shape"], i.get("dtype", "f32")
        if dtype not in ST_DTYPES:
            return None
        n = elements(shape)
        if i["role"] == "label" and dtype in ("i64", "i32"):
            classes = i.get("num_classes")
            a = (np.arange(n) % classes if isinstance(classes, int) and 0 < classes < (1 << 62)
                 else np.zeros(n)).reshape(shape)
        elif dtype in ("i64", "i32", "i1"):
            a = np.zeros(shape)
        else:
            a = gen.normal(0, 1, shape)
        data[i["name"]] = (dtype, shape, a)
    data_path = os.path.join(folder, "data.safetensors")
    write_safetensors(data_path, data)
    if schedule.get("kind") == "inference":
        return ["--weights", weights, "--inputs", data_path]
    return ["--weights", weights, "--data", data_path, "--steps", "1"]


# --- schedule figures ---------------------------------------------------------

# Where a negative or non-finite number is legitimate: op constants in the
# bodies, the loss's ignore_index, the optimizer's hyperparameters.
SIGNED_KEYS = {"ignore_index", "value", "body", "optimizer", "min", "max"}


def bad_figures(schedule):
    found = []

    def walk(obj, path):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k not in SIGNED_KEYS:
                    walk(v, path + "." + k)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, path + "[]")
        elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
            if isinstance(obj, float) and not math.isfinite(obj):
                found.append(f"non-finite {path}")
            elif obj < 0:
                found.append(f"negative {path}")
            elif obj > 1e18 and not path.startswith(".target"):
                found.append(f"absurd {path}")

    walk(schedule, "")
    return found


# --- mutations: scripts/mutfuzz_mutations.py -----------------------------------


# --- running -------------------------------------------------------------------

CRASH_MARKS = ("LLVM ERROR", "Stack dump", "PLEASE submit a bug report", "Segmentation fault",
               "AddressSanitizer", "runtime error:")


# A mutated dim can ask for terabytes: the tools run with bounded memory and
# file sizes (a write past the bound fails with EFBIG instead of a signal).
MEMORY_LIMIT = 8 << 30
FILE_LIMIT = 2 << 30


def limits():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class Tool:
    def __init__(self, bindir, timeout):
        self.bindir, self.timeout = bindir, timeout

    def run(self, name, args, cwd):
        cmd = [os.path.join(self.bindir, name)] + args
        try:
            p = subprocess.Popen(["nice", "-n", "10"] + cmd, cwd=cwd, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limits)
            try:
                out, err = p.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
                return {"tool": name, "cmd": cmd, "rc": None, "err": "", "out": ""}
        except OSError as e:
            return {"tool": name, "cmd": cmd, "rc": 127, "err": str(e), "out": ""}
        return {"tool": name, "cmd": cmd, "rc": p.returncode,
                "out": out.decode(errors="replace")[-20000:], "err": err.decode(errors="replace")[-20000:]}


# Upstream MLIR checks `expected-*` comments even without -verify-diagnostics
# and prints these at exit 0 (mlir-opt 22 too); the test chunks carry them.
EXPECTED_NOTE = re.compile(r"^.*error: (expected \w+ .* was not produced|unexpected \w+: .*)\n(.*\n){0,2}?.*\^~*\n?",
                           re.M)


def verdict(result):
    """None when the tool accepted; else (class, message) for this tool's run."""
    rc, err = result["rc"], EXPECTED_NOTE.sub("", result["err"])
    first = first_error(err)
    if rc is None:
        return "hang", f"{result['tool']}: timeout"
    if OUT_OF_MEMORY.search(err) and (rc is None or rc != 0):
        return "resource", f"{result['tool']}: {first_line_with(err, OUT_OF_MEMORY)}"
    if rc < 0 or rc >= 128 or any(m in err for m in CRASH_MARKS):
        return "signal", f"{result['tool']}: {crash_line(err, rc)}"
    if rc != 0 and result["tool"] == "wsc-run" and VALUE_CHECK.search(err):
        return "value-check", f"{result['tool']}: {first_error(err)}"
    if rc != 0:
        return ("rejected", first) if err.strip() or result["out"].strip() else ("mute", f"{result['tool']}: rc {rc}")
    if re.search(r"\berror\b", err, re.I) and not re.search(r"\bwarning\b", first or "", re.I):
        return "silent", f"{result['tool']} exit 0 with: {first}"
    return None


# Exhausting the tools' memory bound is reported apart: it says how much a
# case asked for, not whether the tools check their input.
OUT_OF_MEMORY = re.compile(r"out of memory|bad_alloc|Cannot allocate memory|File too large")
# wsc-run stops on the first non-finite loss or gradient by design (issue 21
# item 5), where the model's cf.assert fails on a value, and where a slice
# runs past a sample's valid length under VTS (the drawn masks are all
# padding): outcomes of the mutated constants or the drawn data, which no
# compiler can refuse in general.
VALUE_CHECK = re.compile(r"non-finite|the loss is (-?inf|nan)|cf\.assert failed|"
                         r"the valid length of sample \d+ \(variable tensor shape\)")


def first_line_with(err, pattern):
    for line in err.splitlines():
        if pattern.search(line):
            return line.strip()
    return ""


def first_error(err):
    for line in err.splitlines():
        if "error" in line.lower():
            return line.strip()
    lines = [l for l in err.splitlines() if l.strip()]
    return lines[0].strip() if lines else ""


FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ (.+?) \((?:/|\S+\.cpp)")


def crash_line(err, rc):
    """The LLVM error, or the innermost named stack frame past the signal handlers."""
    for line in err.splitlines():
        if "LLVM ERROR" in line or "runtime error" in line:
            return line.strip()[:160]
    for m in FRAME.finditer(err):
        if not m.group(1).startswith(("llvm::sys::", "0x")):
            return m.group(1)[:160]
    return f"rc {rc}"


def signature(message):
    """A message with its numbers, names and locations blurred, to group cases."""
    s = re.sub(r"^\S*?:\d+:\d+: ", "", message or "")
    s = re.sub(r"'[^']*'|\"[^\"]*\"|@[\w.]+|%[\w.#]+", "_", s)
    s = re.sub(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", "N", s)
    return s[:140]


FAILURES = ("signal", "hang", "silent", "mute")


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.tool = Tool(args.bindir, args.timeout)
        self.work = args.work
        self.case_dir = os.path.join(self.work, "case")

    def prepare(self):
        os.makedirs(self.work, exist_ok=True)
        cache = os.path.join(self.work, "seeds.json")
        if os.path.exists(cache) and not self.args.refresh_seeds:
            self.seeds = json.load(open(cache))
            return
        rng = random.Random(0)
        seeds = []
        for name, text, entry in collect_seed_texts(self.work):
            base = self.base_run(name, text, entry, rng)
            seeds.append(base)
        with open(cache, "w") as f:
            json.dump(seeds, f)
        self.seeds = seeds

    def base_run(self, name, text, entry, rng):
        """The unmutated seed through the chain: its schedule, weights and
        data are seeds for the runtime's mutations."""
        folder = os.path.join(self.work, "base", re.sub(r"[^\w.-]", "_", name))
        os.makedirs(folder, exist_ok=True)
        src = os.path.join(folder, "input.mlir")
        with open(src, "w") as f:
            f.write(text)
        seed = {"name": name, "entry": entry, "text": text, "accepted": False, "options": ""}
        r = self.chain(folder, src, entry, "", rng, keep=True)
        seed["accepted"] = r["class"] == "ran"
        if seed["accepted"]:
            seed["schedule"] = os.path.join(folder, "schedule.json")
            seed["run_args"] = r["run_args"]
        print(f"seed {name}: {r['class']} {r.get('message', '')[:100]}", file=sys.stderr)
        return seed

    def chain(self, folder, src, entry, options, rng, keep=False):
        """Runs one module through the tools; returns its class and details."""
        steps = []
        module = src
        if entry == "pipeline":
            module = os.path.join(folder, "out.wsc.mlir")
            steps.append(self.tool.run("wsc-opt", [src, f"--wsc-pipeline={options}", "-o", module], folder))
            v = verdict(steps[-1])
            if v:
                return {"class": v[0], "message": v[1], "steps": steps}
        schedule_path = os.path.join(folder, "schedule.json")
        steps.append(self.tool.run("wsc-translate", ["--wsc-to-schedule", module, "-o", schedule_path], folder))
        v = verdict(steps[-1])
        if v:
            return {"class": v[0], "message": v[1], "steps": steps}
        try:
            with open(schedule_path) as f:
                schedule = json.load(f)
        except (OSError, ValueError) as e:
            return {"class": "silent", "message": f"wsc-translate wrote an unreadable schedule: {e}", "steps": steps}
        figures = bad_figures(schedule)
        if figures:
            return {"class": "silent", "message": "schedule figure: " + signature(figures[0]), "steps": steps,
                    "detail": figures[:10]}
        weights = None
        if "initial_value" in open(module, errors="replace").read():
            weights = os.path.join(folder, "weights.safetensors")
            steps.append(self.tool.run("wsc-translate", ["--wsc-to-weights", module, "-o", weights], folder))
            v = verdict(steps[-1])
            if v and v[0] not in ("rejected", "resource"):
                return {"class": v[0], "message": v[1], "steps": steps}
            if v and v[0] == "resource":
                return {"class": v[0], "message": v[1], "steps": steps}
            if v:
                weights = None
        run_args = run_files(schedule, rng, folder, weights)
        if run_args is None:
            run_args = ["--model-only", "--steps", "1"]
        steps.append(self.tool.run("wsc-run", [schedule_path] + run_args + ["--quiet"], folder))
        v = verdict(steps[-1])
        if v and v[0] == "rejected":
            return {"class": "silent", "message": "wsc-run rejected: " + v[1], "steps": steps}
        if v:
            return {"class": v[0], "message": v[1], "steps": steps}
        return {"class": "ran", "steps": steps, "run_args": run_args}

    def runtime_case(self, seed, rng, folder):
        """A mutated schedule or weights/data file, straight into wsc-run."""
        args = list(seed["run_args"])
        schedule = os.path.join(folder, "schedule.json")
        slots = [i + 1 for i, a in enumerate(args) if a in ("--weights", "--data", "--inputs")]
        if rng.random() < 0.6 or not slots:
            text = open(seed["schedule"]).read()
            for _ in range(rng.choice([1, 1, 2, 3])):
                text, what = mutate_json(text, rng)
            with open(schedule, "w") as f:
                f.write(text)
        else:
            shutil.copy(seed["schedule"], schedule)
            i = rng.choice(slots)
            data = open(args[i], "rb").read()
            data, what = mutate_bytes(data, rng)
            path = os.path.join(folder, "mutated" + os.path.basename(args[i]))
            with open(path, "wb") as f:
                f.write(data)
            args[i] = path
        r = self.tool.run("wsc-run", [schedule] + args + ["--quiet"], folder)
        v = verdict(r)
        if v is None:
            return {"class": "ran", "steps": [r], "what": what}
        return {"class": v[0], "message": v[1], "steps": [r], "what": what}

    def run_case(self, index, rng):
        folder = self.case_dir
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        accepted = [s for s in self.seeds if s["accepted"]]
        kind = rng.choices(["ir", "option", "runtime"], [70, 15, 15])[0]
        if kind == "runtime" and accepted:
            seed = rng.choice(accepted)
            result = self.runtime_case(seed, rng, folder)
            result.update(kind="runtime", seed=seed["name"])
            return result
        seed = rng.choice(accepted if rng.random() < 0.85 and accepted else self.seeds)
        text = seed["text"]
        options = rng.choice(self.options) if seed["entry"] == "pipeline" else ""
        whats = []
        if kind == "option" and seed["entry"] == "pipeline":
            for _ in range(rng.choice([1, 1, 2])):
                options, what = mutate_options(options, rng)
                whats.append(what)
        else:
            kind = "ir"
            mutators, weights = zip(*TEXT_MUTATORS)
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                fn = rng.choices(mutators, weights)[0]
                text, what = fn(text, rng)
                whats.append(what)
        if "time-limit" not in options:
            options = (options + " time-limit=2").strip()
        src = os.path.join(folder, "input.mlir")
        with open(src, "w") as f:
            f.write(text)
        result = self.chain(folder, src, seed["entry"], options, rng)
        result.update(kind=kind, seed=seed["name"], what="; ".join(whats), options=options)
        return result

    def save_failure(self, index, result):
        dest = os.path.join(self.args.out, result["class"], f"case-{index:06d}")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.case_dir, dest)
        with open(os.path.join(dest, "case.json"), "w") as f:
            json.dump({k: v for k, v in result.items() if k != "steps"}, f, indent=1)
        with open(os.path.join(dest, "repro.sh"), "w") as f:
            f.write("#!/bin/sh\n# " + result.get("message", "") + "\ncd \"$(dirname \"$0\")\"\n")
            for s in result["steps"]:
                f.write(" ".join(shlex_quote(a) for a in s["cmd"]) + "\n")
            f.write("\n# stderr of the last tool:\n")
            f.write("".join("# " + l + "\n" for l in result["steps"][-1]["err"].splitlines()[:30]))

    def main(self):
        self.options = collect_option_strings()
        self.prepare()
        print(f"{len(self.seeds)} seeds ({sum(s['accepted'] for s in self.seeds)} run end to end), "
              f"{len(self.options)} option strings", file=sys.stderr)
        rng = random.Random(self.args.seed)
        counts, groups = {}, {}
        start = time.time()
        for index in range(self.args.cases):
            case_rng = random.Random(rng.randrange(1 << 62))
            if self.args.only and index not in self.args.only:
                continue
            result = self.run_case(index, case_rng)
            cls = result["class"]
            counts[cls] = counts.get(cls, 0) + 1
            if cls in ("signal", "hang", "silent", "mute", "resource"):
                key = (cls, signature(result.get("message", "")))
                groups.setdefault(key, []).append(index)
                self.save_failure(index, result)
                print(f"case {index}: {cls}: {result.get('message', '')[:150]} "
                      f"[{result['seed']}; {result.get('what', '')}; {result.get('options', '')}]",
                      file=sys.stderr)
            if (index + 1) % self.args.progress == 0:
                print(f"... {index + 1} cases, {time.time() - start:.0f} s, {counts}", file=sys.stderr)
        wall = time.time() - start
        print(f"\n{self.args.cases} cases in {wall:.0f} s (seed {self.args.seed})")
        print(f"{'class':11} {'cases':>7}")
        for cls in ("signal", "hang", "silent", "mute", "resource", "value-check", "rejected", "ran"):
            print(f"{cls:11} {counts.get(cls, 0):7}")
        if groups:
            print(f"\nfailures by message (inputs under {self.args.out}):")
            for (cls, sig), cases in sorted(groups.items(), key=lambda kv: -len(kv[1])):
                print(f"{cls:7} {len(cases):5}  {sig}  e.g. case-{cases[0]:06d}")
        return 1 if any(cls in FAILURES for cls, _ in groups) else 0


def shlex_quote(s):
    import shlex
    return shlex.quote(s)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60, help="seconds per tool run")
    p.add_argument("--bindir", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default="/tmp/wsc-mutfuzz", help="seed cache and scratch space")
    p.add_argument("--out", default=None, help="failing cases (default WORK/failures)")
    p.add_argument("--refresh-seeds", action="store_true", help="recompute the seeds' base runs")
    p.add_argument("--progress", type=int, default=500, help="print counts every N cases")
    p.add_argument("--only", type=lambda s: {int(i) for i in s.split(",")}, default=None,
                   help="replay just these case numbers (comma-separated) of --seed's run")
    args = p.parse_args()
    args.work = os.path.abspath(args.work)
    args.out = os.path.abspath(args.out or os.path.join(args.work, "failures"))
    if args.cases < 0 or args.timeout <= 0:
        p.error("--cases must be >= 0 and --timeout > 0")
    sys.exit(Fuzzer(args).main())


if __name__ == "__main__":
    main()
