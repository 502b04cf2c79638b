#!/usr/bin/env python3
"""Checks that wsc's libraries depend one way (docs/Architecture.md).

Every source file under lib/, include/wsc/, tools/ and the Python binding
belongs to one layer. A layer may include the headers of, and link, only the
layers below it that the table allows; the plain C++ layers include and link
no MLIR or LLVM. Prints each violation as `path:line: message` and exits 1
if there is one.

    scripts/check-layering.py [--root DIR]
"""
import argparse
import re
import sys
from pathlib import Path

# Each layer and what it may use directly. Order is bottom to top.
ALLOWED = {
    "Support": set(),
    "Schedule": {"Support"},
    "Sparse": {"Support"},
    "Model": {"Support", "Sparse"},
    "Placement": {"Support", "Model"},
    "Dialect": {"Support", "Sparse", "Model"},
    "Analysis": {"Support", "Sparse", "Model", "Dialect"},
    "Transforms": {"Support", "Schedule", "Sparse", "Model", "Placement", "Dialect", "Analysis"},
    "Target": {"Support", "Schedule", "Sparse", "Model", "Placement", "Dialect", "Analysis"},
    "Runtime": {"Support", "Schedule", "Sparse", "Model"},
    # The MPI SwarmX and rank bookkeeping (lib/Runtime/Mpi,
    # include/wsc/Runtime/Mpi*.h): only wsc-run links it.
    "RuntimeMPI": {"Support", "Schedule", "Sparse", "Model", "Runtime"},
    # Tools sit on top; each one names what it drives.
    "wsc-run": {"Support", "Schedule", "Sparse", "Model", "Runtime", "RuntimeMPI"},
    "wsc-place": {"Support", "Model", "Placement"},
    "wsc-opt": {"Support", "Schedule", "Sparse", "Model", "Placement", "Dialect", "Analysis",
                "Transforms"},
    "wsc-translate": {"Support", "Schedule", "Sparse", "Model", "Placement", "Dialect",
                      "Analysis", "Target"},
    "python": {"Support", "Schedule", "Sparse", "Model", "Runtime"},
}
# Layers that may include MLIR/LLVM headers and link MLIR.
USES_MLIR = {"Dialect", "Analysis", "Transforms", "Target", "wsc-opt", "wsc-translate"}
# The one layer that may include mpi.h and link MPI: the runtime core, the
# Python binding and the gtests run without it.
USES_MPI = {"RuntimeMPI"}

# CMake target -> layer.
TARGETS = {
    "WSCSupport": "Support", "WSCSchedule": "Schedule", "WSCSparse": "Sparse",
    "WSCModel": "Model", "WSCPlacement": "Placement", "MLIRWSC": "Dialect",
    "MLIRWSCAnalysis": "Analysis", "MLIRWSCTransforms": "Transforms",
    "MLIRWSCTarget": "Target", "WSCRuntime": "Runtime", "WSCRuntimeMPI": "RuntimeMPI",
    "wsc-run": "wsc-run", "wsc-place": "wsc-place", "wsc-opt": "wsc-opt",
    "wsc-translate": "wsc-translate", "wsc_runtime_python": "python",
}
MLIR_LIBS = {"MLIR", "LLVM"}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
LINK = re.compile(r"target_link_libraries\(\s*([\w-]+)([^)]*)\)", re.S)


def layer_of(rel: Path):
    """The layer a source file belongs to, or None if it is not checked."""
    parts = rel.parts
    if parts[:3] == ("lib", "Runtime", "Mpi") or (
            parts[:3] == ("include", "wsc", "Runtime") and parts[-1].startswith("Mpi")):
        return "RuntimeMPI"
    if len(parts) >= 3 and parts[:2] == ("include", "wsc"):
        return parts[2] if parts[2] in ALLOWED else None
    if len(parts) >= 2 and parts[0] == "lib":
        return parts[1] if parts[1] in ALLOWED else None
    if len(parts) >= 2 and parts[0] == "tools":
        return parts[1] if parts[1] in ALLOWED else None
    if parts[:3] == ("python", "wsc", "bindings"):
        return "python"
    return None


def header_layer(path: str):
    """The layer of an included wsc header, "MLIR" for MLIR/LLVM, "MPI" for
    mpi.h, else None."""
    if path.startswith(("mlir/", "llvm/")):
        return "MLIR"
    if path == "mpi.h":
        return "MPI"
    if path.startswith("wsc/Runtime/Mpi"):
        return "RuntimeMPI"
    match = re.match(r"wsc/([^/]+)/", path)
    if match and match.group(1) in ALLOWED:
        return match.group(1)
    return None


def check_includes(root: Path, errors: list):
    for path in sorted(root.glob("**/*")):
        rel = path.relative_to(root)
        if path.suffix not in (".h", ".cpp", ".inc") or rel.parts[0] not in (
                "lib", "include", "tools", "python"):
            continue
        layer = layer_of(rel)
        if layer is None:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            used = header_layer(match.group(1))
            if used is None or used == layer:
                continue
            if used == "MPI":
                if layer not in USES_MPI:
                    errors.append(f"{rel}:{number}: {layer} may not include mpi.h (only "
                                  "RuntimeMPI uses MPI)")
            elif used == "MLIR":
                if layer not in USES_MLIR:
                    errors.append(f"{rel}:{number}: {layer} is plain C++ and may not include "
                                  f"'{match.group(1)}'")
            elif used not in ALLOWED[layer]:
                errors.append(f"{rel}:{number}: {layer} may not include '{match.group(1)}' "
                              f"({used} is not below it; allowed: "
                              f"{', '.join(sorted(ALLOWED[layer])) or 'none'})")


def check_links(root: Path, errors: list):
    for cmake in sorted(list(root.glob("lib/*/CMakeLists.txt")) +
                        list(root.glob("lib/*/*/CMakeLists.txt")) +
                        list(root.glob("tools/*/CMakeLists.txt")) +
                        [root / "python" / "CMakeLists.txt"]):
        if not cmake.is_file():
            continue
        text = cmake.read_text()
        for match in LINK.finditer(text):
            layer = TARGETS.get(match.group(1))
            if layer is None:
                continue
            number = text.count("\n", 0, match.start()) + 1
            rel = cmake.relative_to(root)
            for lib in match.group(2).split():
                if lib in ("PUBLIC", "PRIVATE", "INTERFACE"):
                    continue
                if lib.startswith("MPI::") and layer not in USES_MPI:
                    errors.append(f"{rel}:{number}: {match.group(1)} ({layer}) may not link "
                                  f"{lib} (only RuntimeMPI uses MPI)")
                if lib in MLIR_LIBS and layer not in USES_MLIR:
                    errors.append(f"{rel}:{number}: {match.group(1)} ({layer}) is plain C++ "
                                  f"and may not link {lib}")
                used = TARGETS.get(lib)
                if used and used != layer and used not in ALLOWED[layer]:
                    errors.append(f"{rel}:{number}: {match.group(1)} ({layer}) may not link "
                                  f"{lib} ({used})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the source tree to check (default: this checkout)")
    args = parser.parse_args()
    if not (args.root / "lib").is_dir():
        print(f"check-layering: {args.root} has no lib/ directory", file=sys.stderr)
        return 2
    errors = []
    check_includes(args.root, errors)
    check_links(args.root, errors)
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        print(f"check-layering: {len(errors)} forbidden dependencies "
              "(docs/Architecture.md)", file=sys.stderr)
        return 1
    print("check-layering: every library depends only on the layers below it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
