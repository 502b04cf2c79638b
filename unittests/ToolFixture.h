//===- ToolFixture.h - Run a command-line tool from a gtest ------*- C++ -*-===//
//
// Each test gets a fresh temporary directory; run() executes the tool with
// stdout and stderr captured and reports the exit status (128 + signal when
// the tool crashed, so "never a crash" is an assertion on the status).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_UNITTESTS_TOOLFIXTURE_H
#define WSC_UNITTESTS_TOOLFIXTURE_H

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace wsc::test {

struct ToolResult {
  int status;
  std::string out, err;
};

inline std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ToolFixture : public ::testing::Test {
protected:
  explicit ToolFixture(std::string tool) : tool_(std::move(tool)) {}

  void SetUp() override {
    dir_ = ::testing::TempDir() + "wsc_tool_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("rm -rf '" + dir_ + "' && mkdir -p '" + dir_ + "'").c_str());
  }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(path(name)) << text;
  }
  ToolResult run(const std::string &args) const {
    const std::string out = path("stdout"), err = path("stderr");
    int raw = std::system((tool_ + " " + args + " >'" + out + "' 2>'" + err + "'").c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(out), slurp(err)};
  }

private:
  std::string tool_;
  std::string dir_;
};

} // namespace wsc::test

#endif // WSC_UNITTESTS_TOOLFIXTURE_H
