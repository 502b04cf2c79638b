"""Where a wsc build tree is, for a wsc run from its source tree.

The tools (bin/wsc-opt, ...) and the native binding (python/wsc/_runtime*.so)
live in the build tree: $WSC_BUILD_DIR, then the repository's ./build. This
module imports nothing from wsc, so the packaging script can run it too.
"""
import os
from pathlib import Path
from typing import List

_REPO = Path(__file__).resolve().parents[2]


def build_dirs() -> List[Path]:
    """The build trees to look in, in order."""
    dirs = []
    if os.environ.get("WSC_BUILD_DIR"):
        dirs.append(Path(os.environ["WSC_BUILD_DIR"]))
    dirs.append(_REPO / "build")
    return dirs


def binding_dirs() -> List[str]:
    """The existing directories a build writes wsc._runtime into."""
    found = (build / "python" / "wsc" for build in build_dirs())
    return [str(d) for d in found if d.is_dir()]


def import_runtime():
    """wsc._runtime, the native runtime binding; when it was never built, an
    ImportError that says how to build it rather than a bare 'No module'."""
    import importlib
    try:
        return importlib.import_module("wsc._runtime")
    except ModuleNotFoundError as err:
        if err.name != "wsc._runtime":
            raise
        looked = ", ".join(str(b / "python" / "wsc") for b in build_dirs())
        raise ImportError(
            "wsc's native module wsc._runtime is not built (looked beside the wsc package "
            f"and in {looked}): run `make` in the wsc repository, or set WSC_BUILD_DIR to "
            "the build tree that has it", name="wsc._runtime") from err
