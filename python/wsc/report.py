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


RECOMPUTED = ".recompute"  # the memory plan's name for a kernel run again


def _memory_by_kernel(kernels, values, clock_hz: float) -> dict:
    """The memory plan per kernel whose results the backward pass reads: the
    bytes per PE of them it keeps on the wafer and in MemoryX, and the
    kernel that recomputes the rest with its modeled compute
    (docs/MicroBatching.md, "Memory plan")."""
    clones = {k["name"][:-len(RECOMPUTED)]: k for k in kernels
              if k["name"].endswith(RECOMPUTED)}
    late = set()  # values a backward kernel or a recomputation reads
    for k in kernels:
        if k["phase"] == "backward" or k["name"].endswith(RECOMPUTED):
            late.update(k["operands"])
    plan = {}
    for k in kernels:
        if k["phase"] == "backward" or k["name"].endswith(RECOMPUTED):
            continue
        kept = [values[r] for r in k["results"] if r in late]
        clone = clones.get(k["name"])
        if not kept and clone is None:
            continue
        entry = {
            "stored_bytes_per_pe": sum(v.get("sram_bytes_per_pe", 0) for v in kept
                                       if "offload_back_at" not in v),
            "offloaded_bytes_per_pe": sum(v.get("sram_bytes_per_pe", 0) for v in kept
                                          if "offload_back_at" in v)}
        if clone is not None:
            entry["recomputed_by"] = clone["name"]
            entry["recompute_s"] = clone["cost"]["cycles"] / clock_hz
        plan[k["name"]] = entry
    return plan


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
        "memory_by_kernel": _memory_by_kernel(kernels, values, schedule["target"]["clock_hz"]),
        "last_step": dict(last_step) if last_step else None,
    }
