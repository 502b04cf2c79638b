"""Test helpers: verify exported text with mlir-opt and read its signature."""

import os
import re
import subprocess

MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"


def verify(text: str) -> None:
    """Parse and verify ``text`` with a stock mlir-opt (mlir-22-tools)."""
    proc = subprocess.run([MLIR_OPT, "-", "-o", os.devnull], input=text, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr[:4000]


_ARG = re.compile(r"%arg\d+: (tensor<[^>]*>) \{([^}]*)\}")
_RESULT = re.compile(r"(tensor<[^>]*>) \{([^}]*)\}")


def _attrs(text):
    out = {}
    for item in text.split(", "):
        key, _, value = item.partition(" = ")
        out[key] = value
    return out


def signature(text: str, func: str):
    """[(type, {attr: value text})] for the arguments and for the results."""
    header = next(line for line in text.splitlines() if f"func.func @{func}(" in line)
    args, results = header.split(") -> (", 1)
    return ([(t, _attrs(a)) for t, a in _ARG.findall(args)],
            [(t, _attrs(a)) for t, a in _RESULT.findall(results)])


def module_attributes(text: str) -> str:
    first = text.splitlines()[0]
    return first[len("module attributes {"):-len("} {")] if first.startswith("module attributes") else ""
