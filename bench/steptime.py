"""Wall-clock timing shared by the bench scripts."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def peak_rss_bytes():
    """This process's peak resident set so far: /usr/bin/time -v's "Maximum
    resident set size". Each side of a bench runs in its own process, so it
    covers that side's whole run (model, compile, steps)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# Set by both_sides in each side's process: median_seconds then times its
# steps in turns with the other side (see both_sides).
_TURNS_ENV = "WSC_BENCH_TURNS"


def median_seconds(step, reps, warmup=3):
    """Median wall time of `reps` calls of `step`, after `warmup` calls (an
    allocator's and a BLAS's first calls are slower). Under both_sides each
    timed call waits for its turn."""
    for _ in range(warmup):
        step()
    turns = os.environ.get(_TURNS_ENV) == "1"
    times = []
    for _ in range(reps):
        if turns:
            print("turn-wait", flush=True)
            if sys.stdin.readline().strip() != "go":
                raise SystemExit("bench side: the driver stopped before the last turn")
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
        if turns:
            print(f"turn-time {times[-1]!r}", flush=True)
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


class _Side:
    """One side's process under both_sides: its turn lines, its step times,
    and the JSON it prints last."""

    def __init__(self, name, command, env):
        self.name = name
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, env=env)
        self.times, self.last = [], None

    def wait_turn(self):
        """Reads up to the next "turn-wait"; False once the side has
        finished instead (its last line is then its JSON)."""
        for line in self.proc.stdout:
            line = line.strip()
            if line == "turn-wait":
                return True
            if line:
                self.last = line
        return False

    def take_turn(self):
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith("turn-time "):
                self.times.append(float(line.split()[1]))
                return
        self.fail("ended during its turn")

    def fail(self, what):
        self.proc.kill()
        self.proc.wait()
        self.stderr.seek(0)
        raise RuntimeError(f"bench side '{self.name}' {what} (exit {self.proc.returncode}):\n"
                           f"{self.stderr.read()[-4000:]}")

    def result(self):
        if self.proc.wait() != 0 or self.last is None:
            self.fail("failed")
        return json.loads(self.last)


def both_sides(script, argv, threads, env=None):
    """Runs `script --side torch|wsc ARGV` in a process of its own each and
    returns the JSON each side printed last, by side, plus "ratio": the
    median over rounds of wsc's step time over torch's. Once both sides have
    warmed up they time their steps in turns, one step each per round (the
    order alternating), so that each round's ratio sees the machine in one
    state: a shared machine's speed drifts over the seconds one side's
    steps take. WSC_BENCH_ROUNDS=1 prints every round's step times."""
    # torch.set_num_threads does not reach OpenBLAS's own pool, which both
    # sides share: pin every pool through the environment.
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               **(env or {}), **{_TURNS_ENV: "1"})
    sides = [_Side(side, [sys.executable, script, "--side", side] + argv, env)
             for side in ("torch", "wsc")]
    try:
        order = 0
        while True:
            waiting = [side.wait_turn() for side in sides]
            if not any(waiting):
                break
            if not all(waiting):
                for side, waits in zip(sides, waiting):
                    if not waits:
                        side.result()  # raises with its stderr if it failed
                raise RuntimeError("bench sides timed different numbers of steps")
            for side in (sides if order % 2 == 0 else sides[::-1]):
                # Idle OpenBLAS workers spin for ~0.1 s before they sleep:
                # let the other side's go quiet first.
                time.sleep(0.15 if threads > 1 else 0.01)
                side.take_turn()
            order += 1
        results = {side.name: side.result() for side in sides}
    finally:
        for side in sides:
            if side.proc.poll() is None:
                side.proc.kill()
    torch, wsc = sides
    if not torch.times:
        raise RuntimeError("bench sides timed no steps")
    if os.environ.get("WSC_BENCH_ROUNDS"):
        for side in sides:
            print(f"{side.name} steps (ms):", " ".join(f"{t * 1e3:.1f}" for t in side.times),
                  file=sys.stderr)
    results["ratio"] = statistics.median(w / t for t, w in zip(torch.times, wsc.times))
    return results


def ratio_line(label, results):
    """One line for a workload measured by both_sides: each side's median
    step, the emulator's over eager's (the median of the paired rounds),
    and each side's peak resident set."""
    t, w = results["torch"], results["wsc"]
    rss_t, rss_w = t["peak_rss_bytes"] / 2**20, w["peak_rss_bytes"] / 2**20
    return (f"{label}: eager {t['step_s'] * 1e3:8.1f} ms  emulator {w['step_s'] * 1e3:8.1f} ms  "
            f"emulator/eager {results['ratio']:5.2f}x  peak RSS "
            f"{rss_t:.0f} / {rss_w:.0f} MB = {rss_w / rss_t:4.2f}x")
