"""Wall-clock timing shared by the bench scripts."""
import statistics
import time


def median_seconds(step, reps):
    """Median wall time of `reps` calls of `step`, after one warm-up call."""
    step()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
