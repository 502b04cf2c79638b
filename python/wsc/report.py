"""Program.report(): a compiled program explained, from its schedule alone.

The compiler's own account (why this mode, the VTS decision, the placement,
warnings) is the schedule's ``report`` object, which wsc-translate writes
from the passes' results; the rest is read off the schedule's kernels and
values, and the emulator's last step.
"""
from typing import Optional

import numpy as np


def _layouts(kernels, values) -> dict:
    """Each kernel's first laid-out result: its layout and SRAM per PE."""
    layouts = {}
    for kernel in kernels:
        for result in kernel["results"]:
            value = values[result]
            if "layout" in value:
                layouts[kernel["name"]] = {"layout": value["layout"],
                                           "sram_bytes_per_pe": value["sram_bytes_per_pe"]}
                break
    return layouts


def _elements(params, buffers: bool) -> int:
    return sum(int(np.prod(p["shape"])) for p in params if bool(p.get("buffer")) == buffers)


def build_report(schedule: dict, masks: dict, last_step: Optional[dict]) -> dict:
    """Mode, layouts, memory, bandwidth and the last step's modeled time.

    `masks` are the current sparsity masks by schedule name; `last_step` is
    the emulator's report of the last step run (None before the first)."""
    compiler = schedule["report"]
    kernels = [s for s in schedule["steps"] if s["op"] == "kernel"]
    values = {v["id"]: v for v in schedule["values"]}
    return {
        "mode": schedule["mode"],
        "mode_reason": compiler["mode_reason"],
        # Variable tensor shape: the compiler's decision (docs/VTS.md).
        "vts_decision": compiler["vts_decision"],
        "warnings": list(compiler["warnings"]),
        "systems": schedule["systems"],
        "stream_dtype": schedule["stream_dtype"],
        "params": _elements(schedule["params"], buffers=False),
        "buffers": _elements(schedule["params"], buffers=True),
        "kernels": [k["name"] for k in kernels],
        "layouts": _layouts(kernels, values),
        # Sparsity masks: each sparse parameter's current density.
        "sparsity": {k: float(m.float().mean()) for k, m in masks.items()},
        # Layer-pipelined mode: each layer's region and kernel model.
        "placement": {k["layer"]: {"region": k["region"], **k["lp"]}
                      for k in kernels if "region" in k},
        "placement_summary": compiler["placement_summary"],
        # Micro-batching: the size each system's batch runs in, and why.
        "micro_batch": compiler.get("micro_batch", ""),
        # The memory plan: which activations kept for the backward pass are
        # recomputed or wait in MemoryX, and what that costs.
        "memory_plan": compiler.get("memory_plan", ""),
        "last_step": dict(last_step) if last_step else None,
    }
