//===- Checkpoints.cpp - Checkpoints and optimizer state on wsc._runtime.Session ===//
//
// Adds to the Session class (RuntimeModule.cpp) what Program.save/load and
// the torch.optim interop need (docs/Checkpoints.md): writing and restoring
// checkpoints (Runtime/Checkpoint.h) and the optimizer state per parameter.
// Optimizer buffers cross as float32 numpy arrays of the parameter's shape.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Checkpoint.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

namespace py = pybind11;
using namespace wsc::rt;

namespace {

using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;

py::array floatsOf(const std::vector<float> &v, const Shape &shape) {
  Floats a(std::vector<py::ssize_t>(shape.begin(), shape.end()));
  if (!v.empty())
    std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(float));
  return std::move(a);
}

std::vector<float> floatsFrom(const py::handle &obj, const std::string &what) {
  py::array any = py::array::ensure(obj);
  if (!any || any.dtype().kind() != 'f')
    throw Error(what + ": expected a floating point array");
  Floats a = Floats::ensure(any);
  return std::vector<float>(a.data(), a.data() + a.size());
}

/// The names a state dict of one parameter may hold.
const char *const kBuffers[] = {"momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};

std::vector<float> &bufferOf(OptimizerState &s, const std::string &name) {
  if (name == "momentum_buffer") return s.momentumBuffer;
  if (name == "exp_avg") return s.expAvg;
  if (name == "exp_avg_sq") return s.expAvgSq;
  return s.maxExpAvgSq;
}

} // namespace

void bindCheckpoints(py::module &m) {
  auto session = py::reinterpret_borrow<py::class_<Session>>(m.attr("Session"));
  session
      .def(
          "save_checkpoint",
          [](const Session &s, const std::string &path, int64_t step, std::optional<double> loss,
             const std::map<std::string, std::string> &extra) {
            TrainingPosition position;
            position.step = step;
            position.loss = loss;
            position.extra = extra;
            writeCheckpointFile(path, captureCheckpoint(s, position));
          },
          py::arg("path"), py::arg("step"), py::arg("loss") = std::nullopt,
          py::arg("extra") = std::map<std::string, std::string>{},
          "Writes the session's state to `path` atomically (docs/Checkpoints.md), after "
          "`step` steps, the last with `loss`; `extra` adds metadata entries.")
      .def(
          "load_checkpoint",
          [](Session &s, const std::string &path) {
            const CheckpointContents contents = readCheckpointFile(path);
            const TrainingPosition position = restoreCheckpoint(s, contents, path);
            py::dict masks;
            for (const ParamSpec &p : s.schedule().params) {
              auto it = contents.tensors.find(maskTensorName(p.name));
              if (it == contents.tensors.end())
                continue;
              const Tensor &t = it->second;
              py::array_t<bool> a(std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
              if (t.numel())
                std::memcpy(a.mutable_data(), t.rawData(), t.byteSize());
              masks[py::str(p.name)] = a;
            }
            py::dict out;
            out["step"] = position.step;
            out["extra"] = position.extra;
            out["masks"] = masks;
            return out;
          },
          py::arg("path"),
          "Restores a checkpoint written for this schedule (errors name the file and what "
          "differs). Returns {'step', 'extra' metadata, 'masks' by parameter name}.")
      .def(
          "optimizer_state",
          [](const Session &s) {
            py::dict out;
            const ParamStore &store = s.parameters();
            for (size_t i = 0; i < store.numParams(); ++i) {
              const ParamSpec &p = store.param(static_cast<int>(i));
              if (p.buffer || p.optimizer.kind == OptimizerKind::None)
                continue;
              OptimizerState state = store.optimizer(static_cast<int>(i)).state();
              py::dict entry;
              entry["step"] = state.steps;
              for (const char *name : kBuffers)
                if (!bufferOf(state, name).empty())
                  entry[name] = floatsOf(bufferOf(state, name), p.shape);
              out[py::str(p.name)] = entry;
            }
            return out;
          },
          "Each trained parameter's optimizer state: {'step': updates taken, and the "
          "buffers it keeps ('momentum_buffer', 'exp_avg', 'exp_avg_sq', "
          "'max_exp_avg_sq') as float32 arrays}.")
      .def(
          "load_optimizer_state",
          [](Session &s, const py::dict &state) {
            std::map<std::string, OptimizerState> m;
            for (auto item : state) {
              const std::string name = py::str(item.first);
              const int p = s.schedule().paramIndex(name);
              if (p < 0)
                throw Error("optimizer state for unknown parameter '" + name + "'");
              const int64_t numel = numElements(s.schedule().params[p].shape);
              py::dict entry = py::reinterpret_borrow<py::dict>(item.second);
              OptimizerState st;
              for (auto field : entry) {
                const std::string key = py::str(field.first);
                if (key == "step") {
                  st.steps = field.second.cast<int64_t>();
                  continue;
                }
                if (std::none_of(std::begin(kBuffers), std::end(kBuffers),
                                 [&](const char *b) { return key == b; }))
                  throw Error("optimizer state of '" + name + "': unknown entry '" + key + "'");
                std::vector<float> v = floatsFrom(field.second, "optimizer state '" + key +
                                                                    "' of '" + name + "'");
                if (static_cast<int64_t>(v.size()) != numel)
                  throw Error("optimizer state '" + key + "' of '" + name + "' has " +
                              std::to_string(v.size()) + " elements, expected " +
                              std::to_string(numel));
                bufferOf(st, key) = std::move(v);
              }
              m[name] = std::move(st);
            }
            s.loadOptimizerState(m);
          },
          py::arg("state"),
          "Restores optimizer state in optimizer_state()'s form (after load_weights, which "
          "starts every optimizer afresh).");
}
