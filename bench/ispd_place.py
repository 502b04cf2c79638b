"""Layer-pipelined placement on the example kernel graphs.

    /usr/bin/python3 bench/ispd_place.py [--time-limit S] [GRAPH.kgraph ...]

For each graph (default: test/Placement/Inputs/*.kgraph) runs
$WSC_BUILD_DIR/bin/wsc-place (WSC_BUILD_DIR defaults to build-place), checks
the solution with `wsc-place --check`, and prints the slowest kernel's time
(delta_t), the wire length, the score, the area lower bound, delta_t over the
bound and the placement's wall time. Exits non-zero if any solution fails
the checker.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def metrics(text):
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            out[key] = value
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    build = os.environ.get("WSC_BUILD_DIR", os.path.join(ROOT, "build-place"))
    tool = os.path.join(build, "bin", "wsc-place")
    if not os.path.exists(tool):
        sys.exit(f"ispd_place: {tool} not found; build it with ninja -C {build} wsc-place")
    graphs = args.graphs or sorted(glob.glob(os.path.join(ROOT, "test/Placement/Inputs/*.kgraph")))
    header = ("graph", "kernels", "delta_t", "wirelength", "score", "lower_bound",
              "dt/bound", "place_s")
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as tmp:
        for graph in graphs:
            solution = os.path.join(tmp, "solution.txt")
            placed = subprocess.run([tool, graph, "-o", solution, "--time-limit",
                                     str(args.time_limit)], capture_output=True, text=True)
            if placed.returncode != 0:
                print(placed.stderr, end="", file=sys.stderr)
                failed = True
                continue
            checked = subprocess.run([tool, "--check", graph, solution],
                                     capture_output=True, text=True)
            if checked.returncode != 0:
                print(checked.stderr, end="", file=sys.stderr)
                failed = True
            m = metrics(checked.stdout)
            seconds = metrics(placed.stderr)["place_seconds"]
            rows.append((os.path.basename(graph), m["kernels"], m["delta_t"], m["wirelength"],
                         m["score"], m["lower_bound"], m["delta_t/lower_bound"], seconds))
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(v).rjust(w) for v, w in zip(row, widths)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
