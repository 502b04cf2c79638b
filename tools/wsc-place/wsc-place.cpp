//===- wsc-place.cpp - place a kernel graph on the wafer, or check one ----===//
//
//   wsc-place GRAPH.kgraph [-o SOLUTION] [--time-limit S] [--svg OUT.svg] [--strict]
//   wsc-place --check GRAPH.kgraph SOLUTION [--svg OUT.svg] [--strict]
//
// Exit status: 0 success, 1 a bad input or an illegal solution, 2 usage.
//
//===----------------------------------------------------------------------===//

#include "wsc/Placement/Checker.h"
#include "wsc/Placement/KGraph.h"
#include "wsc/Placement/LowerBound.h"
#include "wsc/Placement/Placer.h"
#include "wsc/Placement/Solution.h"
#include "wsc/Placement/Svg.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace wsc::place;

namespace {

const char *kUsage =
    "usage: wsc-place GRAPH.kgraph [-o SOLUTION] [--time-limit SECONDS] [--svg OUT.svg] [--strict]\n"
    "       wsc-place --check GRAPH.kgraph SOLUTION [--svg OUT.svg] [--strict]\n"
    "--strict: a node named twice or an edge shape that is not its producer's output\n"
    "          is an error (by default a warning, as the contest's files have both)\n";

int usage(const std::string &message) {
  std::cerr << "wsc-place: error: " << message << "\n" << kUsage;
  return 2;
}

int fail(const std::string &message) {
  std::cerr << message << "\n";
  return 1;
}

bool writeText(const std::string &path, const std::string &text, std::string &error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    error = path + ": error: cannot write: " + std::strerror(errno);
    return false;
  }
  return true;
}

void report(std::ostream &os, const Problem &problem, const Metrics &m, int64_t bound) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.4f", bound > 0 ? double(m.deltaT) / double(bound) : 0.0);
  char wire[32], score[32], total[32];
  std::snprintf(wire, sizeof wire, "%.1f", m.wirelength);
  std::snprintf(score, sizeof score, "%.10g", m.score);
  std::snprintf(total, sizeof total, "%.10g", m.weightedTotal);
  // score is the contest's published figure, wdeltat * delta_t + wlength *
  // wirelength; weighted_total adds wadapter * adapter, our rule's count.
  os << "test: " << problem.name << "\n"
     << "kernels: " << problem.kernels.size() << "\n"
     << "delta_t: " << m.deltaT << "\n"
     << "wirelength: " << wire << "\n"
     << "adapter: " << m.adapters << "\n"
     << "score: " << score << "\n"
     << "weighted_total: " << total << "\n"
     << "lower_bound: " << bound << "\n"
     << "delta_t/lower_bound: " << ratio << "\n";
}

struct Args {
  bool check = false;
  bool strict = false;
  std::vector<std::string> positional;
  std::string output, svg;
  double timeLimit = 60.0;
};

/// Empty on success, else the usage error.
std::string parseArgs(int argc, char **argv, Args &args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--check") {
      args.check = true;
    } else if (a == "--strict") {
      args.strict = true;
    } else if (a == "-o") {
      if (!value(args.output))
        return "-o needs a file";
    } else if (a == "--svg") {
      if (!value(args.svg))
        return "--svg needs a file";
    } else if (a == "--time-limit") {
      std::string v;
      if (!value(v))
        return "--time-limit needs seconds";
      char *end = nullptr;
      args.timeLimit = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !std::isfinite(args.timeLimit) || args.timeLimit <= 0)
        return "--time-limit needs a positive number of seconds, got '" + v + "'";
    } else if (a.size() > 1 && a[0] == '-') {
      return "unknown option '" + a + "'";
    } else {
      args.positional.push_back(a);
    }
  }
  if (args.check && (args.positional.size() != 2 || !args.output.empty()))
    return "--check takes GRAPH.kgraph SOLUTION (and no -o)";
  if (!args.check && args.positional.size() != 1)
    return "expected one GRAPH.kgraph";
  return "";
}

/// Reads the graph, printing the warnings of a lenient read on stderr.
bool loadGraph(const Args &args, KGraph &graph, std::string &error) {
  KGraphOptions options;
  options.strict = args.strict;
  if (!readKGraph(args.positional[0], graph, error, options))
    return false;
  for (const std::string &warning : graph.warnings)
    std::cerr << warning << "\n";
  return true;
}

Problem loadProblem(const KGraph &graph, const std::string &path) {
  Problem problem = toProblem(graph);
  if (problem.name.empty()) {
    size_t slash = path.find_last_of('/');
    problem.name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  }
  return problem;
}

int check(const Args &args) {
  KGraph graph;
  std::string error, text;
  if (!loadGraph(args, graph, error))
    return fail(error);
  Problem problem = loadProblem(graph, args.positional[0]);
  Placement placement;
  const std::string &solution = args.positional[1];
  if (!readFile(solution, text, error) || !parseSolution(text, solution, problem, placement, error))
    return fail(error);
  CheckReport result = check(problem, placement);
  int64_t bound = 0;
  if (!areaLowerBound(problem, bound, error))
    std::cerr << args.positional[0] << ": warning: no lower bound: " << error << "\n";
  for (const std::string &v : result.violations)
    std::cerr << solution << ": error: " << v << "\n";
  report(std::cout, problem, result.metrics, bound);
  if (!args.svg.empty() && !writeText(args.svg, renderSvg(problem, placement), error))
    return fail(error);
  return result.ok() ? 0 : 1;
}

int placeGraph(const Args &args) {
  KGraph graph;
  std::string error;
  if (!loadGraph(args, graph, error))
    return fail(error);
  Problem problem = loadProblem(graph, args.positional[0]);
  PlaceOptions options;
  options.timeLimitSeconds = args.timeLimit;
  PlaceResult result = place(problem, options);
  if (!result.ok)
    return fail(args.positional[0] + ": error: " + result.error);
  std::string solution = writeSolution(problem, result.placement);
  if (args.output.empty())
    std::cout << solution;
  else if (!writeText(args.output, solution, error))
    return fail(error);
  if (!args.svg.empty() && !writeText(args.svg, renderSvg(problem, result.placement), error))
    return fail(error);
  report(std::cerr, problem, measure(problem, result.placement), result.lowerBound);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", result.seconds);
  std::cerr << "place_seconds: " << seconds << "\n";
  if (result.timedOut)
    std::cerr << "wsc-place: warning: the time limit cut the search short\n";
  // The placer's output must pass the checker; anything else is a bug.
  CheckReport verdict = check(problem, result.placement);
  for (const std::string &v : verdict.violations)
    std::cerr << "wsc-place: internal error: " << v << "\n";
  return verdict.ok() ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  std::string error = parseArgs(argc, argv, args);
  if (!error.empty())
    return usage(error);
  return args.check ? check(args) : placeGraph(args);
}
