"""Wall-clock timing shared by the bench scripts."""
import json
import os
import statistics
import subprocess
import sys
import time


def peak_rss_bytes():
    """This process's peak resident set so far: /usr/bin/time -v's "Maximum
    resident set size". Each side of a bench runs in its own process, so it
    covers that side's whole run (model, compile, steps)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def median_seconds(step, reps):
    """Median wall time of `reps` calls of `step`, after one warm-up call."""
    step()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def eager_step_seconds(model, loss_fn, opt, x, y, reps):
    """Median wall time of one PyTorch eager training step."""
    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return median_seconds(step, reps)


def blas_core_env():
    """OPENBLAS_CORETYPE for both sides of a bench, when OpenBLAS does not
    recognise this CPU: Debian's OpenBLAS 0.3.21 then falls back to its
    Prescott (SSE3) kernels, 2-3x slower than the AVX2/AVX-512 ones the CPU
    runs. Returns ({} or {"OPENBLAS_CORETYPE": core}, the core in use)."""
    import ctypes
    if os.environ.get("OPENBLAS_CORETYPE"):
        return {}, os.environ["OPENBLAS_CORETYPE"]
    try:
        lib = ctypes.CDLL("libblas.so.3")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        core = lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return {}, "not OpenBLAS"
    if core.lower() != "prescott":
        return {}, core
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    for flag, better in (("avx512f", "SkylakeX"), ("avx2", "Haswell")):
        if flag in flags:
            return {"OPENBLAS_CORETYPE": better}, f"{better} (OpenBLAS saw {core})"
    return {}, core


def both_sides(script, argv, threads, env=None):
    """Runs `script --side torch|wsc ARGV` in a process of its own each (so
    the two thread pools do not compete) on `threads` threads; returns the
    JSON each side printed last, by side."""
    # torch.set_num_threads does not reach OpenBLAS's own pool, which both
    # sides share: pin every pool through the environment.
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               **(env or {}))
    results = {}
    for side in ("torch", "wsc"):
        out = subprocess.run([sys.executable, script, "--side", side] + argv, check=True,
                             capture_output=True, text=True, env=env)
        results[side] = json.loads(out.stdout.strip().splitlines()[-1])
    return results


def ratio_line(label, results):
    """One line for a workload measured by both_sides: each side's step, the
    emulator's over eager's, and each side's peak resident set."""
    step = {side: r["step_s"] for side, r in results.items()}
    rss = {side: r["peak_rss_bytes"] / 2**20 for side, r in results.items()}
    return (f"{label}: eager {step['torch'] * 1e3:8.1f} ms  emulator {step['wsc'] * 1e3:8.1f} ms  "
            f"emulator/eager {step['wsc'] / step['torch']:5.2f}x  peak RSS "
            f"{rss['torch']:.0f} / {rss['wsc']:.0f} MB = {rss['wsc'] / rss['torch']:4.2f}x")
