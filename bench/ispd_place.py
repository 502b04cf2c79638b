"""Layer-pipelined placement on ISPD 2020 contest kernel graphs.

    /usr/bin/python3 bench/ispd_place.py [--time-limit S] [GRAPH.kgraph | DIR ...]

For each graph (a DIR stands for its *.kgraph; default:
test/Placement/Inputs) runs $WSC_BUILD_DIR/bin/wsc-place (WSC_BUILD_DIR
defaults to build), checks the solution with `wsc-place --check`, and prints
the contest's score (wdeltat * delta_t + wlength * wirelength) and its terms,
the adapter count (our rule, docs/LayerPipelined.md) and the weighted total
with it, the area lower bound, the checker's verdict and the placement's
wall time. The contest's files are read as published (their warnings are
counted, not printed). Where CU.POKer's published score for a benchmark
(by file name A-D) is known, prints score / CU.POKer: below 1 is better.
Exits non-zero if any graph fails to place or any solution fails the checker.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The contest winner's published scores (issue 22).
CU_POKER = {"A": 35810, "B": 66143.5, "C": 66920, "D": 36435}


def metrics(text):
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            out[key] = value
    return out


def graphs_of(paths):
    if not paths:
        paths = [os.path.join(ROOT, "test/Placement/Inputs")]
    out = []
    for path in paths:
        out += sorted(glob.glob(os.path.join(path, "*.kgraph"))) if os.path.isdir(path) else [path]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    build = os.environ.get("WSC_BUILD_DIR", os.path.join(ROOT, "build"))
    tool = os.path.join(build, "bin", "wsc-place")
    if not os.path.exists(tool):
        sys.exit(f"ispd_place: {tool} not found; build it with ninja -C {build} wsc-place")
    header = ("graph", "kernels", "warnings", "delta_t", "wirelength", "adapter", "score",
              "weighted_total", "lower_bound", "dt/bound", "check", "place_s", "vs_CU.POKer")
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as tmp:
        for graph in graphs_of(args.graphs):
            name = os.path.splitext(os.path.basename(graph))[0]
            solution = os.path.join(tmp, "solution.txt")
            placed = subprocess.run([tool, graph, "-o", solution, "--time-limit",
                                     str(args.time_limit)], capture_output=True, text=True)
            warnings = placed.stderr.count(": warning: ")
            if placed.returncode != 0:
                print(placed.stderr, end="", file=sys.stderr)
                failed = True
                continue
            checked = subprocess.run([tool, "--check", graph, solution],
                                     capture_output=True, text=True)
            verdict = "legal" if checked.returncode == 0 else "ILLEGAL"
            if checked.returncode != 0:
                print(checked.stderr, end="", file=sys.stderr)
                failed = True
            m = metrics(checked.stdout)
            seconds = metrics(placed.stderr)["place_seconds"]
            ratio = (f"{float(m['score']) / CU_POKER[name]:.4f}" if name in CU_POKER else "")
            rows.append((name, m["kernels"], warnings, m["delta_t"], m["wirelength"],
                         m["adapter"], m["score"], m["weighted_total"], m["lower_bound"],
                         m["delta_t/lower_bound"], verdict, seconds, ratio))
    if rows:
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
        for row in [header] + rows:
            print("  ".join(str(v).rjust(w) for v, w in zip(row, widths)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
