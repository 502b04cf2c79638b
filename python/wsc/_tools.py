"""Locating and running the wsc command-line tools."""
import os
import shutil
import subprocess
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]


class CompileError(RuntimeError):
    """wsc-opt or wsc-translate rejected the program; the message holds their diagnostics."""


def tool_path(name: str) -> str:
    """The path of a wsc tool: $WSC_BUILD_DIR/bin, then ./build/bin, then PATH."""
    candidates = []
    if os.environ.get("WSC_BUILD_DIR"):
        candidates.append(Path(os.environ["WSC_BUILD_DIR"]) / "bin" / name)
    candidates.append(_REPO / "build" / "bin" / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"cannot find '{name}': build wsc with `make` or set WSC_BUILD_DIR")


def run_tool(name: str, args, stdin: str):
    """Runs a tool on `stdin`; returns (stdout, stderr) or raises CompileError."""
    proc = subprocess.run([tool_path(name), *args], input=stdin, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise CompileError(f"{name} failed:\n{proc.stderr.strip()}")
    return proc.stdout, proc.stderr
