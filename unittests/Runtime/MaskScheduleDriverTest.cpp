//===- MaskScheduleDriverTest.cpp - Dynamic sparsity in the runtime -------===//

#include "wsc/Runtime/MaskScheduleDriver.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace wsc::rt;
using namespace wsc::rt::test;
namespace sparse = wsc::sparse;

namespace {

const char *kRigl = R"({"schedules": [{"schedule": "rigl", "params": "sparse",
  "sparsity": 0.75, "end_step": 6, "update_frequency": 2, "drop_fraction": 0.5}]})";

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
}

// The driver makes exactly the calls the Python driver (Program.step)
// makes: its masks after each update are sparse::updateMask of the store's
// weights, old mask and requested dense gradient.
TEST(MaskScheduleDriver, RigLUpdatesFromTheRequestedDenseGradients) {
  std::unique_ptr<Session> session = sessionOf(sparseMlp());
  const Schedule &s = session->schedule();
  const Model model = randomModel(s, 1.0, 11);
  session->loadWeights(model.weights);
  SparsityConfig config = parseSparsityConfig(kRigl, "sp.json", s);
  ASSERT_EQ(config.schedules.size(), 1u);
  ASSERT_FALSE(config.schedules[0].params.empty());
  const sparse::MaskScheduleConfig rigl = config.schedules[0].config;
  MaskScheduleDriver driver(*session, config);
  driver.start();
  const ParamStore &store = session->parameters();
  for (const std::string &name : config.schedules[0].params) {
    const int p = store.paramIndex(name);
    ASSERT_TRUE(store.mask(p).defined()) << name;
    EXPECT_NEAR(store.density(p), 0.25, 0.01) << name;
  }
  int updates = 0;
  for (int64_t t = 0; t < 6; ++t) {
    driver.beforeStep();
    session->step(randomBatch(s, 100 + static_cast<uint32_t>(t)));
    std::map<std::string, Tensor> want;
    for (const std::string &name : config.schedules[0].params) {
      const int p = store.paramIndex(name);
      Tensor mask = store.mask(p).clone();
      if (sparse::updatesAt(rigl, t)) {
        ASSERT_TRUE(store.requestedGradient(p).defined()) << name << " step " << t;
        ASSERT_TRUE(sparse::updateMask(rigl, t, name, store.weights(p).data<float>(),
                                       store.requestedGradient(p).data<float>(),
                                       mask.numel(), mask.data<uint8_t>()));
      } else {
        EXPECT_FALSE(store.requestedGradient(p).defined()) << name << " step " << t;
      }
      want[name] = mask;
    }
    driver.afterStep();
    updates += sparse::updatesAt(rigl, t);
    for (const auto &[name, mask] : want)
      EXPECT_TRUE(sameBytes(store.mask(store.paramIndex(name)), mask)) << name << " step " << t;
  }
  EXPECT_EQ(updates, 2); // after steps 1 and 3
  EXPECT_EQ(driver.nextStep(), 6);
  EXPECT_EQ(driver.state().schedules[0].updatesDone, 2);
}

TEST(MaskScheduleDriver, StateRoundTripsThroughJsonAndRestoresExactly) {
  std::unique_ptr<Session> session = sessionOf(sparseMlp());
  const Schedule &s = session->schedule();
  session->loadWeights(randomModel(s, 1.0, 3).weights);
  const char *two = R"({"schedules": [
    {"schedule": "set", "params": ["%P0%"], "sparsity": 0.3, "end_step": 100,
     "update_frequency": 1, "drop_fraction": 0.1, "seed": 123456789012},
    {"schedule": "gmp", "params": ["%P1%"], "final_sparsity": 0.7, "end_step": 9,
     "initial_sparsity": 0.1, "frequency": 3}]})";
  std::vector<std::string> sparseNames;
  for (const ParamSpec &p : s.params)
    if (p.sparsity)
      sparseNames.push_back(p.name);
  ASSERT_GE(sparseNames.size(), 2u);
  std::string text = two;
  text.replace(text.find("%P0%"), 4, sparseNames[0]);
  text.replace(text.find("%P1%"), 4, sparseNames[1]);
  MaskScheduleDriver driver(*session, parseSparsityConfig(text, "sp.json", s));
  driver.start();
  for (int t = 0; t < 4; ++t) {
    driver.beforeStep();
    session->step(randomBatch(s, 7));
    driver.afterStep();
  }
  const MaskDriverState state = driver.state();
  EXPECT_EQ(state.schedules[0].nextStep, 4);
  EXPECT_EQ(state.schedules[0].updatesDone, 4);
  EXPECT_EQ(state.schedules[1].updatesDone, 2); // after steps 0 and 3
  const MaskDriverState back = MaskScheduleDriver::parseStateJson(driver.stateJson(), "ckpt");
  EXPECT_TRUE(back == state);

  MaskScheduleDriver fresh(*session, parseSparsityConfig(text, "sp.json", s));
  fresh.restore(back);
  EXPECT_EQ(fresh.nextStep(), 4);
  EXPECT_TRUE(fresh.state() == state);

  // Another run's state is refused, naming what differs.
  MaskDriverState other = state;
  other.schedules[0].config.seed = 1;
  EXPECT_NE(errorOf([&] { fresh.restore(other); }).find("schedule 0 is"), std::string::npos);
  other = state;
  other.params[1] = {sparseNames[0]};
  EXPECT_NE(errorOf([&] { fresh.restore(other); }).find("other parameters"), std::string::npos);
}

TEST(MaskScheduleDriver, BadConfigsNameTheField) {
  std::unique_ptr<Session> session = sessionOf(sparseMlp());
  const Schedule &s = session->schedule();
  auto message = [&](const std::string &text) {
    return errorOf([&] { parseSparsityConfig(text, "sp.json", s); });
  };
  EXPECT_EQ(message(R"({"schedules": [{"schedule": "set", "params": "sparse", "sparsity": 0.5,
                        "end_step": 0}]})"),
            "sp.json: schedules[0]: end_step must be >= 1, got 0");
  EXPECT_EQ(message(R"({"schedules": [{"schedule": "set", "params": "dense", "sparsity": 0.5,
                        "end_step": 3}]})"),
            "sp.json: schedules[0].params: expected a list of parameter names or \"sparse\", "
            "got a string");
  EXPECT_EQ(message(R"({"schedules": [{"schedule": "set", "params": [], "sparsity": 0.5,
                        "end_step": 3}]})"),
            "sp.json: schedules[0].params: expected at least one parameter");
  EXPECT_EQ(message(R"({"masks": ""})"), "sp.json: masks: expected a file name");
  EXPECT_EQ(message(R"({"schedules": 3})"), "sp.json: schedules: expected a list, got an integer");
}

} // namespace
