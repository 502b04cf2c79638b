"""scripts/check-layering.py passes on this tree and fails on a forbidden
include or link (docs/Architecture.md)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-layering.py"


@pytest.fixture
def tree(tmp_path):
    for part in ("lib", "include", "tools"):
        shutil.copytree(ROOT / part, tmp_path / part)
    shutil.copytree(ROOT / "python" / "wsc" / "bindings", tmp_path / "python" / "wsc" / "bindings")
    shutil.copy(ROOT / "python" / "CMakeLists.txt", tmp_path / "python" / "CMakeLists.txt")
    return tmp_path


def check(root):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                          capture_output=True, text=True)


def prepend(path: Path, line: str):
    path.write_text(line + "\n" + path.read_text())


def test_this_tree_is_layered(tree):
    result = check(tree)
    assert result.returncode == 0, result.stderr


def test_runtime_including_a_pass_header_fails(tree):
    prepend(tree / "lib" / "Runtime" / "Random.cpp", '#include "wsc/Transforms/Passes.h"')
    result = check(tree)
    assert result.returncode == 1
    assert ("lib/Runtime/Random.cpp:1: Runtime may not include 'wsc/Transforms/Passes.h'"
            in result.stderr)


def test_plain_cpp_including_mlir_fails(tree):
    prepend(tree / "include" / "wsc" / "Support" / "DType.h", '#include "mlir/IR/Value.h"')
    result = check(tree)
    assert result.returncode == 1
    assert "include/wsc/Support/DType.h:1: Support is plain C++" in result.stderr


def test_analysis_including_transforms_fails(tree):
    prepend(tree / "lib" / "Analysis" / "KernelCost.cpp", '#include "wsc/Transforms/Passes.h"')
    result = check(tree)
    assert result.returncode == 1
    assert "Analysis may not include 'wsc/Transforms/Passes.h'" in result.stderr


def test_target_linking_the_runtime_fails(tree):
    cmake = tree / "lib" / "Target" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text() + "\ntarget_link_libraries(MLIRWSCTarget PRIVATE WSCRuntime)\n")
    result = check(tree)
    assert result.returncode == 1
    assert "MLIRWSCTarget (Target) may not link WSCRuntime (Runtime)" in result.stderr


def test_runtime_linking_mlir_fails(tree):
    cmake = tree / "lib" / "Runtime" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text() + "\ntarget_link_libraries(WSCRuntime PRIVATE MLIR)\n")
    result = check(tree)
    assert result.returncode == 1
    assert "WSCRuntime (Runtime) is plain C++ and may not link MLIR" in result.stderr
