//===- MaskSchedules.cpp - wsc._runtime.MaskSchedule (Sparse/MaskSchedule.h) ===//
//
// The C++ mask schedules for wsc.sparse_schedule, so that Python and
// wsc-run --sparsity share one implementation. Arrays are flat numpy arrays
// (weights and gradients float32, masks bool), copied in and out.
//
//===----------------------------------------------------------------------===//

#include "wsc/Sparse/MaskSchedule.h"
#include "wsc/Support/Error.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>

namespace py = pybind11;
using namespace wsc::sparse;
using wsc::rt::Error;

namespace {

using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
using Bools = py::array_t<bool, py::array::c_style | py::array::forcecast>;

void check(const Status &s) {
  if (!s)
    throw Error(s.message());
}

MaskScheduleConfig makeConfig(const std::string &schedule, int64_t endStep, double finalSparsity,
                              double initialSparsity, int64_t beginStep, int64_t frequency,
                              double sparsity, int64_t updateFrequency, double dropFraction,
                              const std::string &init, int64_t seed) {
  MaskScheduleConfig c;
  const std::optional<MaskScheduleKind> kind = parseKind(schedule);
  if (!kind)
    throw Error("schedule must be 'gmp', 'rigl' or 'set', got '" + schedule + "'");
  const std::optional<MaskInit> initKind = parseInit(init);
  if (!initKind)
    throw Error("init must be 'random' or 'magnitude', got '" + init + "'");
  c.kind = *kind;
  c.endStep = endStep;
  c.finalSparsity = finalSparsity;
  c.initialSparsity = initialSparsity;
  c.beginStep = beginStep;
  c.frequency = frequency;
  c.sparsity = sparsity;
  c.updateFrequency = updateFrequency;
  c.dropFraction = dropFraction;
  c.init = *initKind;
  c.seed = seed;
  check(validate(c));
  return c;
}

/// A flat numpy bool array of `n` entries from a mask buffer.
py::array_t<bool> toBools(const std::vector<uint8_t> &mask) {
  py::array_t<bool> out(static_cast<py::ssize_t>(mask.size()));
  bool *dst = out.mutable_data();
  for (size_t i = 0; i < mask.size(); ++i)
    dst[i] = mask[i] != 0;
  return out;
}

void requireSize(const py::array &a, py::ssize_t n, const char *what) {
  if (a.ndim() != 1 || a.shape(0) != n)
    throw Error(std::string(what) + ": expected a flat array of " + std::to_string(n) +
                " entries");
}

} // namespace

void bindMaskSchedules(py::module &m) {
  py::class_<MaskScheduleConfig>(m, "MaskSchedule",
                                 "A GMP, RigL or SET mask schedule (Sparse/MaskSchedule.h).")
      .def(py::init(&makeConfig), py::kw_only(), py::arg("schedule"), py::arg("end_step"),
           py::arg("final_sparsity") = 0.0, py::arg("initial_sparsity") = 0.0,
           py::arg("begin_step") = 0, py::arg("frequency") = 1, py::arg("sparsity") = 0.0,
           py::arg("update_frequency") = 100, py::arg("drop_fraction") = 0.3,
           py::arg("init") = "random", py::arg("seed") = 0)
      .def("updates_at", [](const MaskScheduleConfig &c, int64_t t) { return updatesAt(c, t); })
      .def("sparsity_at", [](const MaskScheduleConfig &c, int64_t t) { return sparsityAt(c, t); })
      .def("drop_fraction_at",
           [](const MaskScheduleConfig &c, int64_t t) { return dropFractionAt(c, t); })
      .def_property_readonly("planned_density", &plannedDensity)
      .def_property_readonly("needs_gradients", &needsGradients)
      .def(
          "initial_mask",
          [](const MaskScheduleConfig &c, const std::string &name, const Floats &weights) {
            requireSize(weights, weights.size(), "weights");
            std::vector<uint8_t> mask(weights.size());
            check(initialMask(c, name, weights.data(), weights.size(), mask.data()));
            return toBools(mask);
          },
          py::arg("name"), py::arg("weights"),
          "The initial flat mask of parameter `name` from its flat float32 weights.")
      .def(
          "update",
          [](const MaskScheduleConfig &c, int64_t step, const std::string &name,
             const Floats &weights, const Bools &mask, std::optional<Floats> gradients) {
            const py::ssize_t n = weights.size();
            requireSize(weights, n, "weights");
            requireSize(mask, n, "mask");
            if (gradients)
              requireSize(*gradients, n, "gradients");
            std::vector<uint8_t> out(n);
            for (py::ssize_t i = 0; i < n; ++i)
              out[i] = mask.data()[i] ? 1 : 0;
            check(updateMask(c, step, name, weights.data(), gradients ? gradients->data() : nullptr,
                             n, out.data()));
            return toBools(out);
          },
          py::arg("step"), py::arg("name"), py::arg("weights"), py::arg("mask"),
          py::arg("gradients") = py::none(),
          "The flat mask of `name` after step `step` (an update step).");
}
