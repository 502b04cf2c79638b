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


@pytest.mark.parametrize("path, line, message", [
    ("lib/Runtime/Random.cpp", '#include "wsc/Transforms/Passes.h"',
     "lib/Runtime/Random.cpp:1: Runtime may not include 'wsc/Transforms/Passes.h'"),
    ("include/wsc/Support/DType.h", '#include "mlir/IR/Value.h"',
     "include/wsc/Support/DType.h:1: Support is plain C++"),
    ("lib/Analysis/KernelCost.cpp", '#include "wsc/Transforms/Passes.h"',
     "Analysis may not include 'wsc/Transforms/Passes.h'"),
    # MPI stays in RuntimeMPI: the runtime core and the binding run without it.
    ("lib/Runtime/Session.cpp", "#include <mpi.h>",
     "lib/Runtime/Session.cpp:1: Runtime may not include mpi.h"),
    ("lib/Runtime/Session.cpp", '#include "wsc/Runtime/MpiJob.h"',
     "Runtime may not include 'wsc/Runtime/MpiJob.h'"),
])
def test_a_forbidden_include_fails(tree, path, line, message):
    prepend(tree / path, line)
    result = check(tree)
    assert result.returncode == 1
    assert message in result.stderr


@pytest.mark.parametrize("path, link, message", [
    ("lib/Target/CMakeLists.txt", "target_link_libraries(MLIRWSCTarget PRIVATE WSCRuntime)",
     "MLIRWSCTarget (Target) may not link WSCRuntime (Runtime)"),
    ("lib/Runtime/CMakeLists.txt", "target_link_libraries(WSCRuntime PRIVATE MLIR)",
     "WSCRuntime (Runtime) is plain C++ and may not link MLIR"),
    ("lib/Runtime/CMakeLists.txt", "target_link_libraries(WSCRuntime PRIVATE MPI::MPI_C)",
     "WSCRuntime (Runtime) may not link MPI::MPI_C (only RuntimeMPI uses MPI)"),
    ("python/CMakeLists.txt", "target_link_libraries(wsc_runtime_python PRIVATE WSCRuntimeMPI)",
     "wsc_runtime_python (python) may not link WSCRuntimeMPI (RuntimeMPI)"),
])
def test_a_forbidden_link_fails(tree, path, link, message):
    cmake = tree / path
    cmake.write_text(cmake.read_text() + "\n" + link + "\n")
    result = check(tree)
    assert result.returncode == 1
    assert message in result.stderr
