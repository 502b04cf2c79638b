"""`pip install ./python` gives a working wsc, binding included."""
import os
import subprocess
import sys
import venv
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]


def test_pip_install_into_a_venv(tmp_path):
    # Offline and PEP 668: a venv that sees Debian's torch and numpy, and a
    # build that uses the installed setuptools.
    venv.create(tmp_path / "env", system_site_packages=True, with_pip=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    python = tmp_path / "env" / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-build-isolation",
                    "--no-index", str(PYTHON_DIR)], check=True, cwd=tmp_path, env=env)
    # env has no PYTHONPATH, so the import can only come from the venv.
    probe = ("import wsc, wsc._runtime, wsc.export; "
             "print(wsc.__file__); print(wsc.compile.__name__); print(wsc._runtime.__file__)")
    out = subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True,
                         cwd=tmp_path, env=env).stdout.split()
    assert str(tmp_path / "env") in out[0], out
    assert out[1] == "compile"
    # The binding too, not the build tree's copy that WSC_BUILD_DIR points at.
    assert str(tmp_path / "env") in out[2], out
