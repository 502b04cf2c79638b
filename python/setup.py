"""Puts the native binding wsc._runtime into the wheel.

A build writes the binding into its build tree (<build>/python/wsc/), not
beside these sources, so build_py copies it from there: $WSC_BUILD_DIR, then
the repository's ./build (wsc/_build_tree.py). The rest of the metadata is in
pyproject.toml.
"""
import importlib.machinery
import runpy
import shutil
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
_build_tree = runpy.run_path(str(HERE / "wsc" / "_build_tree.py"))


def _binding() -> Path:
    """The binding built for the interpreter running this script."""
    names = ["_runtime" + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    for directory in _build_tree["binding_dirs"]():
        for name in names:
            if (Path(directory) / name).is_file():
                return Path(directory) / name
    looked = ", ".join(str(d / "python" / "wsc") for d in _build_tree["build_dirs"]())
    raise SystemExit(f"wsc: no {names[0]} in {looked}; build wsc first (`make`) "
                     "or set WSC_BUILD_DIR to its build tree")


class BuildPyWithBinding(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "wsc"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(_binding(), target)


class BinaryDistribution(Distribution):
    """A wheel for this interpreter and platform, as it carries a native module."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithBinding}, distclass=BinaryDistribution)
