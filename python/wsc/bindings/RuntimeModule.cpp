//===- RuntimeModule.cpp - Python binding of the runtime (wsc._runtime) ---===//
//
// Arrays cross as numpy arrays (copied). wsc::rt::Error becomes ValueError;
// the GIL is released while a step or an inference pass runs.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Report.h"
#include "wsc/Support/SafeTensors.h"
#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Runtime/Threads.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace py = pybind11;
using namespace wsc::rt;

namespace {

/// numpy array -> Tensor of `want`'s storage class; `what` names it in errors.
Tensor fromArray(const py::handle &obj, DType want, const std::string &what) {
  py::array a = py::array::ensure(obj);
  if (!a)
    throw Error(what + ": expected a numpy array");
  const char kind = a.dtype().kind();
  Shape shape(a.shape(), a.shape() + a.ndim());
  switch (storageOf(want)) {
  case Storage::F32: {
    if (kind != 'f')
      throw Error(what + ": expected a floating point array, got dtype " +
                  std::string(py::str(a.dtype())));
    auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
    Tensor t = Tensor::uninitialized(want, shape);
    if (t.numel())
      std::memcpy(t.rawData(), f.data(), t.byteSize());
    return t;
  }
  case Storage::I64: {
    if (kind != 'i' && kind != 'u')
      throw Error(what + ": expected an integer array, got dtype " +
                  std::string(py::str(a.dtype())));
    auto i = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    Tensor t = Tensor::uninitialized(want, shape);
    if (t.numel())
      std::memcpy(t.rawData(), i.data(), t.byteSize());
    return t;
  }
  case Storage::U8: {
    if (kind != 'b')
      throw Error(what + ": expected a bool array, got dtype " + std::string(py::str(a.dtype())));
    auto b = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(a);
    Tensor t = Tensor::uninitialized(want, shape);
    if (t.numel())
      std::memcpy(t.rawData(), b.data(), t.byteSize());
    return t;
  }
  }
  throw Error(what + ": unsupported dtype");
}

py::array toArray(const Tensor &t) {
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  switch (t.storage()) {
  case Storage::F32: {
    py::array_t<float> a(shape);
    if (t.numel())
      std::memcpy(a.mutable_data(), t.rawData(), t.byteSize());
    return std::move(a);
  }
  case Storage::I64: {
    py::array_t<int64_t> a(shape);
    if (t.numel())
      std::memcpy(a.mutable_data(), t.rawData(), t.byteSize());
    return std::move(a);
  }
  case Storage::U8: {
    py::array_t<bool> a(shape);
    if (t.numel())
      std::memcpy(a.mutable_data(), t.rawData(), t.byteSize());
    return std::move(a);
  }
  }
  return py::array();
}

std::vector<Tensor> inputsFrom(const Session &s, const py::sequence &seq) {
  const auto &specs = s.schedule().inputs;
  if (py::len(seq) != specs.size())
    throw Error("expected " + std::to_string(specs.size()) + " inputs, got " +
                std::to_string(py::len(seq)));
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < specs.size(); ++i)
    inputs.push_back(fromArray(seq[i], specs[i].dtype, "input '" + specs[i].name + "'"));
  return inputs;
}

/// A JSON value as the Python value json.loads would give (ints stay ints,
/// non-finite floats stay floats).
py::object toPython(const nlohmann::json &j) {
  switch (j.type()) {
  case nlohmann::json::value_t::object: {
    py::dict d;
    for (const auto &[key, value] : j.items())
      d[py::str(key)] = toPython(value);
    return std::move(d);
  }
  case nlohmann::json::value_t::array: {
    py::list l;
    for (const nlohmann::json &value : j)
      l.append(toPython(value));
    return std::move(l);
  }
  case nlohmann::json::value_t::string:
    return py::str(j.get<std::string>());
  case nlohmann::json::value_t::boolean:
    return py::bool_(j.get<bool>());
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
    return py::int_(j.get<int64_t>());
  case nlohmann::json::value_t::number_float:
    return py::float_(j.get<double>());
  default:
    return py::none();
  }
}

/// The step report, keyed as wsc-run --report writes it, plus the loss.
py::dict reportDict(const StepReport &r) {
  nlohmann::json j = stepTimingJson(r.timing);
  j["loss"] = r.loss;
  return toPython(j);
}

/// A dict of parameter name -> bool array as i1 tensors (`what` names them
/// in errors).
std::map<std::string, Tensor> boolArrays(const py::dict &arrays, const std::string &what) {
  std::map<std::string, Tensor> m;
  for (auto item : arrays) {
    std::string name = py::str(item.first);
    m[name] = fromArray(item.second, DType::I1, what + " '" + name + "'");
  }
  return m;
}

py::dict tensorsToDict(const std::map<std::string, Tensor> &m) {
  py::dict d;
  for (const auto &[name, t] : m)
    d[py::str(name)] = toArray(t);
  return d;
}

std::unique_ptr<Session> sessionFromText(const std::string &text, const std::string &source) {
  return std::make_unique<Session>(parseSchedule(text, source));
}

} // namespace

/// wsc._runtime.MaskSchedule (MaskSchedules.cpp).
void bindMaskSchedules(py::module &m);
/// Checkpoint and optimizer-state methods of Session (Checkpoints.cpp).
void bindCheckpoints(py::module &m);

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "wsc runtime: emulates a weight-streaming cluster (or, for a layer-pipelined "
            "schedule, one wafer) executing a wsc schedule";
  // wsc._runtime.Error subclasses ValueError: every runtime error is about
  // bad input (schedule, weights, data).
  py::register_exception<Error>(m, "Error", PyExc_ValueError);
  bindMaskSchedules(m);

  m.def(
      "set_num_threads",
      [](int n) {
        setParallelThreads(n);
        return setNumThreads(n);
      },
      py::arg("n"),
      "Sets the BLAS thread count and the runtime's parallel loops' (a "
      "system thread's loops get n / system_threads); returns False if the BLAS cannot.");
  m.def("set_parallel_threads", &setParallelThreads, py::arg("n"),
        "Sets only the runtime's parallel loops' threads (BLAS keeps its count); "
        "returns False for n < 1.");
  m.def("get_parallel_threads", &parallelThreads);
  m.def("get_num_threads", &getNumThreads);
  m.def(
      "read_safetensors",
      [](const std::string &path) { 
        SafeTensorsFile f = readSafeTensors(path);
        py::dict d;
        for (const auto &[name, t] : f.tensors)
          d[py::str(name)] = toArray(t.tensor);
        return d;
      },
      py::arg("path"), "Reads a .safetensors file into a dict of numpy arrays.");
  m.def(
      "write_safetensors",
      [](const std::string &path, const py::dict &tensors,
         const std::map<std::string, std::string> &metadata) {
        std::map<std::string, Tensor> m;
        for (auto item : tensors) {
          std::string name = py::str(item.first);
          py::array a = py::array::ensure(item.second);
          if (!a)
            throw Error("tensor '" + name + "': expected a numpy array");
          const char kind = a.dtype().kind();
          DType dt = kind == 'f' ? DType::F32 : kind == 'b' ? DType::I1 : DType::I64;
          m[name] = fromArray(a, dt, "tensor '" + name + "'");
        }
        writeSafeTensors(path, m, metadata);
      },
      py::arg("path"), py::arg("tensors"), py::arg("metadata") = std::map<std::string, std::string>{},
      "Writes a dict of numpy arrays (float -> F32, int -> I64, bool -> BOOL).");

  py::class_<Session>(m, "Session")
      .def(py::init([](const std::string &scheduleJson, const std::string &source) {
             return sessionFromText(scheduleJson, source);
           }),
           py::arg("schedule_json"), py::arg("source") = "schedule",
           "Builds the emulated cluster for a schedule given as JSON text.")
      .def_static(
          "from_file",
          [](const std::string &path) { return std::make_unique<Session>(loadSchedule(path)); },
          py::arg("path"))
      .def(
          "load_weights",
          [](Session &s, const py::dict &weights) {
            std::map<std::string, Tensor> m;
            for (auto item : weights) {
              std::string name = py::str(item.first);
              const int p = s.schedule().paramIndex(name);
              if (p < 0)
                continue;
              const ParamSpec &spec = s.schedule().params[p];
              m[name] = fromArray(item.second, spec.dtype,
                                  (spec.buffer ? "buffer '" : "parameter '") + name + "'");
            }
            s.loadWeights(m);
          },
          py::arg("weights"))
      .def(
          "load_masks",
          [](Session &s, const py::dict &masks) { s.loadMasks(boolArrays(masks, "mask")); },
          py::arg("masks"),
          "Sparsity masks (bool arrays, true = active) by parameter name; may change "
          "between steps.")
      .def(
          "request_gradients",
          [](Session &s, const py::dict &entries) {
            s.requestGradients(boolArrays(entries, "gradient request"));
          },
          py::arg("entries"),
          "For the next step, the gradients of these parameters at the true entries "
          "(bool arrays) besides the active weights.")
      .def(
          "requested_gradients",
          [](const Session &s) { return tensorsToDict(s.requestedGradients()); },
          "The gradients the last step's requests brought back, by parameter name.")
      .def(
          "load_weights_file",
          [](Session &s, const std::string &path) {
            SafeTensorsFile f = readSafeTensors(path);
            std::map<std::string, Tensor> m;
            for (const auto &[name, t] : f.tensors) {
              const int p = s.schedule().paramIndex(name);
              if (p >= 0 && !s.schedule().params[p].buffer && t.fileDType != "F32")
                throw Error(path + ": parameter '" + name + "' has dtype " + t.fileDType +
                            ", expected F32");
              m[name] = t.tensor;
            }
            try {
              s.loadWeights(m);
            } catch (const Error &e) {
              throw Error(path + ": " + e.what());
            }
          },
          py::arg("path"))
      .def(
          "step",
          [](Session &s, const py::sequence &inputs) {
            std::vector<Tensor> in = inputsFrom(s, inputs);
            py::gil_scoped_release release;
            return s.step(in);
          },
          py::arg("inputs"), "One training step; inputs in schedule input order. Returns the loss.")
      .def(
          "infer",
          [](Session &s, const py::sequence &inputs) {
            std::vector<Tensor> in = inputsFrom(s, inputs);
            std::vector<Tensor> out;
            {
              py::gil_scoped_release release;
              out = s.infer(in);
            }
            py::list l;
            for (const Tensor &t : out)
              l.append(toArray(t));
            return l;
          },
          py::arg("inputs"))
      .def_property("seed", &Session::seed, &Session::setSeed,
                    "Seed of the random inputs (dropout masks): each step draws from "
                    "(seed, step, input) alone.")
      .def_property("allow_nonfinite", &Session::allowNonFinite, &Session::setAllowNonFinite,
                    "False (default): a step whose loss or a gradient is NaN or Inf raises "
                    "ValueError naming the step and the parameter. True: it trains on.")
      .def_property("system_threads", &Session::systemThreads, &Session::setSystemThreads,
                    "Threads the systems run on, each system on one at a time (1: one after "
                    "another); the results are the same bit for bit.")
      .def(
          "random_draw",
          [](const Session &s, size_t index, uint64_t step) {
            return toArray(s.randomDraw(index, step));
          },
          py::arg("index"), py::arg("step"),
          "The whole batch's uniform draw of random input `index` at step `step`.")
      .def_property_readonly("num_random_inputs",
                             [](const Session &s) { return s.schedule().randoms.size(); })
      .def("last_report", [](const Session &s) { return reportDict(s.lastReport()); })
      .def("weights", [](const Session &s) { return tensorsToDict(s.weights()); })
      .def("write_trace", &Session::writeTrace, py::arg("path"))
      .def_property_readonly("systems", [](const Session &s) { return s.schedule().systems; })
      .def_property_readonly("mode", [](const Session &s) { return s.schedule().mode; })
      .def_property_readonly("global_batch",
                             [](const Session &s) { return s.schedule().globalBatch; })
      .def_property_readonly("kind", [](const Session &s) {
        return s.schedule().isTraining() ? "train" : "inference";
      })
      .def_property_readonly("input_names",
                             [](const Session &s) {
                               std::vector<std::string> n;
                               for (const auto &i : s.schedule().inputs)
                                 n.push_back(i.name);
                               return n;
                             })
      .def_property_readonly("output_names",
                             [](const Session &s) {
                               std::vector<std::string> n;
                               for (const auto &o : s.schedule().outputs)
                                 n.push_back(o.name);
                               return n;
                             })
      .def_property_readonly("param_names", [](const Session &s) {
        std::vector<std::string> n;
        for (const auto &p : s.schedule().params)
          n.push_back(p.name);
        return n;
      });
  bindCheckpoints(m); // adds methods to Session, defined above
}
