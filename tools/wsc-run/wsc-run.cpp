//===- wsc-run.cpp - Run a wsc schedule on the emulated cluster -----------===//
//
//   wsc-run SCHEDULE.json --weights W.safetensors
//           [--data D.safetensors [--steps N] [--sparsity S.json]] (training)
//           [--inputs IN.safetensors [--outputs OUT.safetensors]] (inference)
//           [--trace T.json] [--save-weights W2.safetensors]
//           [--report R.json] [--threads N] [--seed S] [--quiet]
//   wsc-run SCHEDULE.json --model-only [--steps N] [--report R.json]
//   mpirun -np R wsc-run SCHEDULE.json ...   (one rank per group of systems;
//                                             scripts/wsc-mpirun, MpiJob.h)
//
// Exit status: 0 on success, 1 for a bad or incompatible input file (the
// message names the file), 2 for a usage error.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/MaskScheduleDriver.h"
#include "wsc/Runtime/BatchFile.h"
#include "wsc/Runtime/MpiJob.h"
#include "wsc/Runtime/Checkpoint.h"
#include "wsc/Runtime/NonFinite.h"
#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Runtime/PipelineModel.h"
#include "wsc/Runtime/Report.h"
#include "wsc/Support/SafeTensors.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Runtime/Threads.h"
#include "wsc/Runtime/TimingModel.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace wsc::rt;

namespace {

const char *kUsage =
    "usage: wsc-run SCHEDULE.json --weights W.safetensors\n"
    "               [--data D.safetensors [--steps N] [--sparsity S.json]]\n"
    "               [--checkpoint-dir D [--checkpoint-every K] [--keep L]] [--resume D]\n"
    "               [--inputs IN.safetensors [--outputs OUT.safetensors]]\n"
    "               [--trace TRACE.json] [--save-weights OUT.safetensors]\n"
    "               [--report REPORT.json] [--threads N] [--system-threads N]\n"
    "               [--seed S] [--quiet] [--rank-timeout S] [--allow-nonfinite]\n"
    "       wsc-run SCHEDULE.json --model-only [--steps N] [--report REPORT.json]\n"
    "\n"
    "Runs a wsc schedule (wsc-translate --wsc-to-schedule) on the emulated\n"
    "weight-streaming cluster or, for a layer-pipelined schedule, one wafer.\n"
    "  --weights        initial parameters, one tensor per schedule param name\n"
    "  --data           training data: per schedule input name a tensor\n"
    "                   [S, *input_shape] (S batches) or exactly input_shape\n"
    "  --steps          training steps (default S); step i uses batch i mod S;\n"
    "                   a resumed run counts the steps before it too\n"
    "  --checkpoint-dir write checkpoints (docs/Checkpoints.md) into this directory:\n"
    "                   every --checkpoint-every K steps (default: at the end only)\n"
    "                   and after the last step, keeping the newest --keep L\n"
    "                   (default all)\n"
    "  --resume         continue from a checkpoint file, or from the newest complete\n"
    "                   checkpoint of a directory (same schedule, data, seed)\n"
    "  --sparsity       masks and dynamic-sparsity schedules (GMP, RigL, SET)\n"
    "                   as JSON; format in docs/Sparsity.md\n"
    "  --inputs         inference inputs (exact input shapes)\n"
    "  --outputs        where to write inference outputs\n"
    "  --trace          Chrome/Perfetto trace of every step's modeled timeline\n"
    "  --save-weights   final weights after training\n"
    "  --report         per-step report as JSON\n"
    "  --threads        cores this process uses (default: all, shared by the\n"
    "                   ranks on this host): system threads x BLAS threads\n"
    "  --system-threads systems run concurrently (default: as many as\n"
    "                   --threads allows); BLAS gets threads / system threads\n"
    "  --rank-timeout   under mpirun: seconds a rank waits for another before\n"
    "                   it ends the job (default 120)\n"
    "  --seed           seed of the random inputs (dropout masks; default 0):\n"
    "                   step t's draws depend on (seed, t) alone\n"
    "  --quiet          no per-step lines, only the summary\n"
    "  --allow-nonfinite  train on through NaN or Inf (by default the first\n"
    "                   non-finite loss or gradient stops the run, naming the\n"
    "                   step and the parameter)\n"
    "  --model-only     timing model only: no weights, data or numerics (for\n"
    "                   shapes-only compiles of models too large to run)\n";

struct UsageError {
  std::string message;
};

struct Options {
  std::string schedule, weights, data, inputs, outputs, trace, saveWeights, report, sparsity;
  std::optional<int64_t> steps;
  std::optional<int> threads, systemThreads;
  double rankTimeout = 120;
  uint64_t seed = 0;
  bool quiet = false;
  bool modelOnly = false;
  bool allowNonFinite = false;
  CheckpointOptions checkpoint;
};

int64_t parseCount(const std::string &flag, const std::string &text, int64_t lo, int64_t hi) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
    throw UsageError{flag + " expects an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got '" + text + "'"};
  return v;
}

Options parseArgs(int argc, char **argv) {
  Options o;
  std::map<std::string, std::string *> stringFlags = {
      {"--weights", &o.weights}, {"--data", &o.data},
      {"--inputs", &o.inputs},   {"--outputs", &o.outputs},
      {"--trace", &o.trace},     {"--save-weights", &o.saveWeights},
      {"--report", &o.report},   {"--sparsity", &o.sparsity},
      {"--checkpoint-dir", &o.checkpoint.dir}, {"--resume", &o.checkpoint.resume}};
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg == "--model-only") {
      o.modelOnly = true;
      continue;
    }
    if (arg == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (arg == "--allow-nonfinite") {
      o.allowNonFinite = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      std::string flag = arg, value;
      bool hasValue = false;
      if (auto eq = arg.find('='); eq != std::string::npos) {
        flag = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        hasValue = true;
      }
      const bool known = stringFlags.count(flag) || flag == "--steps" || flag == "--threads" ||
                         flag == "--seed" || flag == "--system-threads" ||
                         flag == "--rank-timeout" || flag == "--checkpoint-every" ||
                         flag == "--keep";
      if (!known)
        throw UsageError{"unknown option '" + flag + "'"};
      if (!hasValue) {
        if (i + 1 >= argc)
          throw UsageError{flag + " needs a value"};
        value = argv[++i];
      }
      if (value.empty())
        throw UsageError{flag + " needs a non-empty value"};
      if (flag == "--steps")
        o.steps = parseCount(flag, value, 0, int64_t(1) << 40);
      else if (flag == "--checkpoint-every")
        o.checkpoint.every = parseCount(flag, value, 1, int64_t(1) << 40);
      else if (flag == "--keep")
        o.checkpoint.keep = static_cast<int>(parseCount(flag, value, 1, 1000000));
      else if (flag == "--threads")
        o.threads = static_cast<int>(parseCount(flag, value, 1, 1024));
      else if (flag == "--system-threads")
        o.systemThreads = static_cast<int>(parseCount(flag, value, 1, 1024));
      else if (flag == "--rank-timeout")
        o.rankTimeout = static_cast<double>(parseCount(flag, value, 1, 86400));
      else if (flag == "--seed")
        o.seed = static_cast<uint64_t>(
            parseCount(flag, value, 0, std::numeric_limits<int64_t>::max()));
      else
        *stringFlags[flag] = value;
      continue;
    }
    positional.push_back(arg);
  }
  if (positional.empty())
    throw UsageError{"missing the schedule file"};
  if (positional.size() > 1)
    throw UsageError{"unexpected argument '" + positional[1] + "'"};
  o.schedule = positional[0];
  if ((!o.checkpoint.dir.empty() || !o.checkpoint.resume.empty()) && o.data.empty())
    throw UsageError{"--checkpoint-dir and --resume need --data (training)"};
  if ((o.checkpoint.every || o.checkpoint.keep) && o.checkpoint.dir.empty())
    throw UsageError{"--checkpoint-every and --keep need --checkpoint-dir"};
  if (o.modelOnly) {
    if (!o.weights.empty() || !o.data.empty() || !o.inputs.empty() || !o.saveWeights.empty() ||
        !o.trace.empty() || !o.sparsity.empty())
      throw UsageError{"--model-only takes no --weights, --data, --inputs, --trace, "
                       "--save-weights or --sparsity"};
    return o;
  }
  if (o.weights.empty())
    throw UsageError{"missing --weights"};
  if (!o.data.empty() && !o.inputs.empty())
    throw UsageError{"--data (training) and --inputs (inference) exclude each other"};
  if (!o.outputs.empty() && o.inputs.empty())
    throw UsageError{"--outputs needs --inputs"};
  if (o.steps && o.data.empty())
    throw UsageError{"--steps needs --data (or --model-only)"};
  if (!o.sparsity.empty() && o.data.empty())
    throw UsageError{"--sparsity needs --data (training)"};
  return o;
}

/// Runs `f`, prefixing any Error it throws with `file` (unless the message
/// already starts with it).
template <typename F> auto withFile(const std::string &file, F &&f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error &e) {
    std::string msg = e.what();
    if (msg.rfind(file + ":", 0) == 0)
      throw;
    throw Error(file + ": " + msg);
  }
}

std::string fmtTime(double s) {
  char buf[64];
  const double a = std::abs(s);
  if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (a >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else if (a >= 1e-6 || a == 0)
    std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3f ns", s * 1e9);
  return buf;
}

std::string fmtBytes(double b) {
  char buf[64];
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else if (b >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f KB", b / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

/// "  vts ragged 13.0% valid (compute 1.2 ms, dense 9.3 ms)", or nothing.
std::string vtsNote(const StepTiming &t) {
  if (!t.vts)
    return "";
  char valid[32];
  std::snprintf(valid, sizeof valid, "%.1f%%", 100 * t.vts->validFraction);
  return std::string("  vts ") + (t.vts->ragged ? "ragged " : "dense ") + valid +
         " valid (compute " + fmtTime(t.vts->computeS) + ", dense " +
         fmtTime(t.vts->denseComputeS) + ")";
}

/// "  sparse 10.0% dense, 6 spmm, 2 sddmm, 0 dense fallbacks", or nothing.
std::string sparseNote(const StepTiming &t) {
  if (!t.sparse)
    return "";
  const SparseTiming &s = *t.sparse;
  char text[160];
  std::snprintf(text, sizeof text,
                "  sparse %.1f%% dense, %lld spmm, %lld sddmm, %lld dense fallbacks",
                s.phi > 0 ? 100.0 * static_cast<double>(s.nnz) / static_cast<double>(s.phi) : 100.0,
                static_cast<long long>(s.spmm), static_cast<long long>(s.sddmm),
                static_cast<long long>(s.denseFallbacks));
  return text;
}

std::string timingLine(const StepTiming &t) {
  if (const auto &p = t.pipeline) {
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.1f", p->samplesPerS);
    return "time " + fmtTime(t.timeS) + " (fill " + fmtTime(p->fillS) + ", interval " +
           fmtTime(p->intervalS) + ", compute " + fmtTime(p->computeS) + ", bubble " +
           fmtTime(p->bubbleS) + ")  " + rate + " samples/s  bottleneck " + p->bottleneck +
           "  buffers " + fmtBytes(p->bufferBytes) + vtsNote(t);
  }
  return "time " + fmtTime(t.timeS) + " (compute " + fmtTime(t.computeS) + ", stream " +
         fmtTime(t.streamS) + ", stall " + fmtTime(t.stallS) + ")  in " + fmtBytes(t.bytesIn) +
         "  out " + fmtBytes(t.bytesOut) + "  sram/PE " + fmtBytes(t.peakSramPerPeBytes) +
         vtsNote(t) + sparseNote(t);
}

/// How to read the step lines' time columns (printed under the summary).
std::string columnsNote(const StepTiming &t) {
  if (t.pipeline)
    return "reading the steps: fill = the first sample's trip through every layer; interval = "
           "the slowest layer's time per sample; compute = the slowest layer's busy time; "
           "bubble = the rest (fill, drain, waits); time = compute + bubble (docs/Runtime.md)";
  return "reading the steps: compute = the wafer busy computing; stream = the MemoryX link busy "
         "sending weights (overlapped with compute); stall = compute waiting for a stream to "
         "arrive; time = compute + stall (docs/Runtime.md)";
}

/// "  bottleneck NAME" for a layer-pipelined step, else nothing.
std::string bottleneckNote(const StepTiming &t) {
  return t.pipeline ? "  bottleneck " + t.pipeline->bottleneck : std::string();
}

/// FP32 words MemoryX (or, layer pipelined, the wafer) keeps per parameter:
/// the weight and, when trained, its gradient and optimizer state.
int stateWords(const OptimizerSpec &o) {
  return o.kind == OptimizerKind::None ? 1 : 2 + optimizerStateWords(o);
}

/// What the compiler chose: mode, cluster, streams, MemoryX, and each
/// kernel's layout on the wafer.
void printProgram(const Schedule &s) {
  const std::vector<BatchShard> shards = shardBatch(s.globalBatch, s.systems);
  // An inference run keeps only the weights: no gradients, no optimizer state.
  const bool training = s.isTraining();
  double params = 0, memx = 0;
  for (const ParamSpec &p : s.params) {
    params += static_cast<double>(numElements(p.shape));
    memx += static_cast<double>(numElements(p.shape)) * 4.0 *
            (training ? stateWords(p.optimizer) : 1);
  }
  const bool lp = s.isLayerPipelined();
  if (lp)
    std::printf("program %s: %s, 1 system, global batch %lld, samples flow through the "
                "layers one at a time\n",
                s.function.c_str(), s.mode.c_str(), static_cast<long long>(s.globalBatch));
  else
    std::printf("program %s: %s, %d system(s), global batch %lld (%lld per system), weights "
                "stream as %s, gradients as %s\n",
                s.function.c_str(), s.mode.c_str(), s.systems,
                static_cast<long long>(s.globalBatch), static_cast<long long>(shards[0].size),
                dtypeName(s.streamDType), dtypeName(s.gradientDType));
  std::printf("wafer %lldx%lld PEs, %s SRAM/PE; %s holds %.0f parameters in %s "
              "(%sweights%s)%s\n",
              static_cast<long long>(s.target.gridX), static_cast<long long>(s.target.gridY),
              fmtBytes(static_cast<double>(s.target.sramPerPe)).c_str(),
              lp ? "the wafer" : "MemoryX", params, fmtBytes(memx).c_str(), lp ? "FP32 " : "",
              training ? ", gradients, optimizer state" : "",
              lp ? " in their layers' regions" : "");
  for (const Step &st : s.steps) {
    if (st.kind != StepKind::Kernel)
      continue;
    if (lp) {
      const PeRect &r = *st.region;
      std::printf("  kernel %-12s %-9s region %lldx%lld at (%lld, %lld)  %.6g cycles/sample  "
                  "%.6g words/PE\n",
                  st.name.c_str(), st.lp->kind.c_str(), static_cast<long long>(r.width),
                  static_cast<long long>(r.height), static_cast<long long>(r.x),
                  static_cast<long long>(r.y), st.lp->cyclesPerSample, st.lp->memoryWords);
      continue;
    }
    const ValueSpec *shown = nullptr;
    for (int id : st.results)
      if (!s.values[id].layout.empty()) {
        shown = &s.values[id];
        break;
      }
    std::printf("  kernel %-12s %.3g GFLOP  %s  sram/PE %s\n", st.name.c_str(),
                st.cost.flops / 1e9, shown ? shown->layout.c_str() : "(no layout)",
                fmtBytes(shown ? shown->sramBytesPerPe : 0).c_str());
  }
}

void writeJson(const std::string &path, const nlohmann::json &doc) {
  std::ofstream out(path, std::ios::trunc);
  if (!out)
    fail(path, ": cannot open for writing");
  out << doc.dump(2) << "\n";
  out.close();
  if (!out)
    fail(path, ": write error");
}

/// --model-only: the timing model over the schedule's own cost figures.
int runModelOnly(const Options &o) {
  Schedule s = loadSchedule(o.schedule);
  printProgram(s);
  std::unique_ptr<StepModel> model = makeStepModel(s);
  model->setTraceSteps(TraceSteps::None);
  nlohmann::json steps = nlohmann::json::array();
  StepTiming t;
  for (int64_t i = 0; i < o.steps.value_or(2); ++i) {
    t = model->simulateStep();
    std::printf("step %lld (modeled)  %s\n", static_cast<long long>(i), timingLine(t).c_str());
    nlohmann::json j = stepTimingJson(t);
    j["step"] = i;
    steps.push_back(j);
  }
  std::printf("summary: modeled step %s  %.1f samples/s modeled  peak sram/PE %s%s\n",
              fmtTime(t.timeS).c_str(), t.timeS > 0 ? s.globalBatch / t.timeS : 0.0,
              fmtBytes(t.peakSramPerPeBytes).c_str(), bottleneckNote(t).c_str());
  if (!o.report.empty())
    writeJson(o.report, {{"schedule", o.schedule},
                         {"kind", s.isTraining() ? "train" : "inference"},
                         {"systems", s.systems},
                         {"global_batch", s.globalBatch},
                         {"steps", steps}});
  return 0;
}

/// Fails before any step runs if an output cannot be written: a long run
/// must not lose its results to a typo in a path at the end.
void checkWritable(const std::string &flag, const std::string &path) {
  if (path.empty())
    return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file(path);
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (fs::is_directory(file, ec))
    fail(flag, ": '", path, "' is a directory");
  if (!fs::is_directory(dir, ec))
    fail(flag, ": cannot write '", path, "': no directory '", dir.string(), "'");
  const bool exists = fs::exists(file, ec);
  if (::access((exists ? file : dir).c_str(), W_OK) != 0)
    fail(flag, ": cannot write '", path, "': ", std::strerror(errno));
}

/// Splits the process's cores (--threads; default all of this host's, shared
/// by its ranks) between concurrent systems and BLAS threads per system.
void setThreads(const Options &o, Session &session, const MpiJob *job) {
  const int hostCores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int cores = o.threads.value_or(std::max(1, hostCores / (job ? job->ranksOnThisHost() : 1)));
  int localSystems = 0;
  for (int k = 0; k < session.schedule().systems; ++k)
    localSystems += session.system(k).isLocal() ? 1 : 0;
  const int systemThreads =
      std::max(1, std::min(localSystems, o.systemThreads.value_or(cores)));
  session.setSystemThreads(systemThreads);
  // The runtime's own loops: all cores between stretches, a share within.
  setParallelThreads(cores);
  if (!setNumThreads(std::max(1, cores / systemThreads)) && o.threads)
    std::cerr << "wsc-run: warning: the BLAS library does not support --threads\n";
}

/// Writes `path` whole or not at all: a run that ends early (a killed MPI
/// rank ends the job) leaves no half-written weights behind.
void writeWeightsAtomically(const std::string &path, const Session &session) {
  const std::string partial = path + ".partial";
  writeSafeTensors(partial, session.weights(),
                   {{"producer", "wsc-run"}, {"steps", std::to_string(session.stepsRun())}});
  if (std::rename(partial.c_str(), path.c_str()) != 0)
    fail(path, ": cannot write: ", std::strerror(errno));
}

/// Where the files went and how to open them: a first run should not have
/// to guess.
void printWhereFilesWent(const Options &o) {
  if (!o.trace.empty())
    std::printf("trace: %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
                o.trace.c_str());
  if (!o.report.empty())
    std::printf("report: %s (JSON, docs/Runtime.md)\n", o.report.c_str());
  if (!o.saveWeights.empty())
    std::printf("weights: %s (safetensors)\n", o.saveWeights.c_str());
  if (!o.outputs.empty())
    std::printf("outputs: %s (safetensors)\n", o.outputs.c_str());
}

int run(const Options &o, MpiJob *job) {
  using Clock = std::chrono::steady_clock;
  // Under mpirun rank 0 writes every file, and only it checks the paths.
  if (!job || job->isMemoryXRank())
    for (const auto &[flag, path] : {std::pair{"--trace", &o.trace},
                                     {"--save-weights", &o.saveWeights},
                                     {"--report", &o.report},
                                     {"--outputs", &o.outputs}})
      checkWritable(flag, *path);
  if (job && job->ranks() > 1 && (o.modelOnly || !o.inputs.empty()))
    throw CollectiveError("wsc-run: under mpirun with more than one rank wsc-run trains "
                          "(--data); --model-only and inference (--inputs) run in one process");
  if (o.modelOnly)
    return runModelOnly(o);
  if (job) {
    job->setTimeout(o.rankTimeout);
    job->checkSameFile("the schedule", o.schedule);
    job->checkSameFile("--weights", o.weights);
  }

  Schedule schedule = loadSchedule(o.schedule);
  const bool training = schedule.isTraining();
  if (training && o.data.empty())
    throw UsageError{"'" + o.schedule + "' is a training schedule: --data is required"};
  if (!training && o.inputs.empty())
    throw UsageError{"'" + o.schedule + "' is an inference schedule: --inputs is required"};

  std::unique_ptr<SwarmX> swarmX = job ? job->makeSwarmX(schedule.systems) : nullptr;
  Session session(std::move(schedule), std::move(swarmX));
  session.setSeed(o.seed);
  session.setAllowNonFinite(o.allowNonFinite);
  // --trace covers every step of the run; without it none is kept.
  session.setTraceSteps(o.trace.empty() ? TraceSteps::None : TraceSteps::All);
  setThreads(o, session, job);
  const Schedule &s = session.schedule();

  // Only MemoryX's rank needs the weights (the others checked their hash).
  SafeTensorsFile weightsFile =
      session.hostsMemoryX() ? readSafeTensors(o.weights) : SafeTensorsFile();
  std::map<std::string, Tensor> weights;
  for (const ParamSpec &p : s.params) {
    if (!session.hostsMemoryX())
      break;
    auto it = weightsFile.tensors.find(p.name);
    const char *what = p.buffer ? "buffer" : "parameter";
    if (it == weightsFile.tensors.end())
      fail(o.weights, ": missing ", what, " '", p.name, "'");
    if (it->second.fileDType != fileDTypeFor(p.dtype))
      fail(o.weights, ": ", what, " '", p.name, "' has dtype ", it->second.fileDType,
           ", expected ", fileDTypeFor(p.dtype));
    weights[p.name] = it->second.tensor.withDType(p.dtype);
    // Parameters only: a buffer may hold -inf on purpose (a causal mask).
    std::optional<NonFiniteValues> bad =
        p.buffer ? std::nullopt : findNonFinite(weights[p.name]);
    if (bad)
      std::cerr << "wsc-run: warning: " << o.weights << ": " << what << " '" << p.name
                << "' has " << describeNonFinite(*bad) << "\n";
  }
  if (session.hostsMemoryX())
    withFile(o.weights, [&] { session.loadWeights(weights); });
  weightsFile = SafeTensorsFile();
  // Masks start from the loaded weights; the schedules move them between steps.
  std::optional<MaskScheduleDriver> masks;
  if (!o.sparsity.empty() && session.hostsMemoryX()) { // MemoryX's rank moves the masks
    masks.emplace(session, loadSparsityConfig(o.sparsity, s));
    withFile(o.sparsity, [&] { masks->start(); });
  }

  nlohmann::json report = {{"schedule", o.schedule},
                           {"kind", training ? "train" : "inference"},
                           {"systems", s.systems},
                           {"global_batch", s.globalBatch}};
  const auto wallStart = Clock::now();
  std::vector<RankStepWall> rankWalls; // under mpirun, on rank 0

  if (training) {
    // A rank reads only its systems' samples of each batch.
    BatchFile data(s, o.data, true);
    const BatchShard samples = session.localSamples();
    const int64_t batches = data.batches();
    const int64_t steps = o.steps.value_or(batches);
    // Validate every batch (labels in range, ...) before training starts.
    for (int64_t b = 0; b < std::min(batches, steps); ++b)
      withFile(o.data, [&] {
        try {
          session.checkInputs(data.read(b, samples));
        } catch (const Error &e) {
          if (batches > 1)
            fail("batch ", b, ": ", e.what());
          throw;
        }
      });
    TrainingCheckpoints checkpoints(o.checkpoint, s, o.data, data.file(), batches);
    const int64_t first = checkpoints.resume(session, masks ? &*masks : nullptr);
    if (job && !o.checkpoint.resume.empty()) // every rank resumes from the same file
      job->checkSameFile("--resume", checkpoints.resumedFrom());
    if (first > steps)
      fail(o.checkpoint.resume, ": the checkpoint is at step ", first, ", past --steps ", steps);
    if (!o.quiet)
      printProgram(s);
    nlohmann::json stepsJson = nlohmann::json::array();
    double lossSum = 0;
    for (int64_t i = first; i < steps; ++i) {
      const auto t0 = Clock::now();
      if (masks)
        masks->beforeStep();
      const std::vector<Tensor> inputs = data.read(i, samples);
      const double loss = withFile(o.schedule, [&] { return session.step(inputs); });
      if (masks)
        withFile(o.sparsity, [&] { masks->afterStep(); });
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      const StepTiming &t = session.lastReport().timing;
      lossSum += loss;
      if (!o.quiet) {
        std::printf("step %lld  loss %.6f  %s  [wall %s]\n", static_cast<long long>(i), loss,
                    timingLine(t).c_str(), fmtTime(wall).c_str());
        std::fflush(stdout);
      }
      nlohmann::json j = stepTimingJson(t);
      j["step"] = i;
      j["loss"] = loss;
      j["wall_s"] = wall;
      if (job) {
        const double start = std::chrono::duration<double>(t0 - wallStart).count();
        const std::vector<double> starts = job->gatherOnMemoryXRank(start);
        const std::vector<double> walls = job->gatherOnMemoryXRank(wall);
        for (size_t r = 0; r < walls.size(); ++r)
          rankWalls.push_back({static_cast<int>(r), i, starts[r], walls[r]});
        j["rank_wall_s"] = walls;
      }
      stepsJson.push_back(j);
      checkpoints.afterStep(session, masks ? &*masks : nullptr, i + 1, loss, i + 1 == steps);
    }
    const int64_t ran = steps - first; // this process's steps
    const double wall = std::chrono::duration<double>(Clock::now() - wallStart).count();
    report["steps"] = stepsJson;
    // Each rank's bytes read from --data: its samples' share of the file.
    const double dataBytes = static_cast<double>(data.bytesRead());
    report["data_bytes_read"] =
        job ? job->gatherOnMemoryXRank(dataBytes) : std::vector<double>{dataBytes};
    if (ran > 0) {
      const StepTiming &t = session.lastReport().timing;
      const double finalLoss = session.lastReport().loss;
      std::printf("summary: %lld steps  final loss %.6f  mean loss %.6f  modeled step %s "
                  "(last step)  %.1f samples/s modeled  peak sram/PE %s%s  emulator wall %s\n",
                  static_cast<long long>(ran), finalLoss, lossSum / ran,
                  fmtTime(t.timeS).c_str(), t.timeS > 0 ? s.globalBatch / t.timeS : 0.0,
                  fmtBytes(t.peakSramPerPeBytes).c_str(), bottleneckNote(t).c_str(),
                  fmtTime(wall).c_str());
      std::printf("%s\n", columnsNote(t).c_str());
      report["summary"] = {{"steps", ran},           {"final_loss", finalLoss},
                           {"mean_loss", lossSum / ran}, {"step_time_s", t.timeS},
                           {"wall_s", wall}};
    } else {
      std::printf("summary: 0 steps\n");
      report["summary"] = {{"steps", 0}};
    }
  } else {
    BatchFile data(s, o.inputs, false);
    std::vector<Tensor> inputs = data.read(0, session.localSamples());
    withFile(o.inputs, [&] { session.checkInputs(inputs); });
    if (!o.quiet)
      printProgram(s);
    std::vector<Tensor> outputs = withFile(o.schedule, [&] { return session.infer(inputs); });
    const StepTiming &t = session.lastReport().timing;
    const double wall = std::chrono::duration<double>(Clock::now() - wallStart).count();
    std::printf("inference  %s  [wall %s]\n", timingLine(t).c_str(), fmtTime(wall).c_str());
    nlohmann::json outs = nlohmann::json::array();
    std::map<std::string, Tensor> named;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string &name = s.outputs[i].name;
      std::printf("output %s  %s %s\n", name.c_str(), dtypeName(outputs[i].dtype()),
                  shapeToString(outputs[i].shape()).c_str());
      outs.push_back({{"name", name}, {"shape", outputs[i].shape()}});
      named[name] = outputs[i];
    }
    report["timing"] = stepTimingJson(t);
    report["outputs"] = outs;
    if (!o.outputs.empty())
      writeSafeTensors(o.outputs, named, {{"producer", "wsc-run"}});
  }
  std::fflush(stdout);
  if (job && !job->isMemoryXRank())
    return 0; // rank 0 writes the files

  if (!o.trace.empty() && job)
    writeJson(o.trace, traceWithRankWalls(session.timing().traceJson(), rankWalls));
  else if (!o.trace.empty())
    session.writeTrace(o.trace);
  if (!o.saveWeights.empty())
    writeWeightsAtomically(o.saveWeights, session);
  if (!o.report.empty())
    writeJson(o.report, report);
  printWhereFilesWent(o);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // Under mpirun: MPI_Init now, MPI_Finalize when `job` goes. Usage and
  // collective errors happen on every rank alike: rank 0 says so and all
  // exit. Any other error may be one rank's alone: it ends the job.
  std::unique_ptr<MpiJob> job = MpiJob::startIfLaunched(&argc, &argv);
  const bool speaks = !job || job->isMemoryXRank();
  auto failed = [&](const std::string &message) {
    if (job)
      job->abort(message);
    std::cerr << message << "\n";
    return 1;
  };
  try {
    Options o = parseArgs(argc, argv);
    return run(o, job.get());
  } catch (const UsageError &e) {
    if (speaks)
      std::cerr << "wsc-run: " << e.message << "\nRun 'wsc-run --help' for usage.\n";
    return 2;
  } catch (const CollectiveError &e) {
    if (speaks)
      std::cerr << e.what() << "\n";
    return 1;
  } catch (const Error &e) {
    return failed(e.what());
  } catch (const std::bad_alloc &) {
    return failed("wsc-run: out of memory");
  } catch (const std::exception &e) {
    return failed(std::string("wsc-run: ") + e.what());
  }
}
