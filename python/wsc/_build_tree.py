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
