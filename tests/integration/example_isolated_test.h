// The set-up two isolation test files share: the example compiling plugin (recording,
// samples/example_ep) alone in a plugin folder, its calls in every process counted through the call
// journal (plugin_call_record.h), and a chain model of 2x3 floats saved beside it.
#pragma once

#include <stdlib.h>

#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "test_support.h"

namespace ephost_test {

class ExampleIsolatedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    install_plugins(dir_, {"ephost_test_example_sdk1"});
    journal_ = dir_.file("calls.txt");
    ::setenv("EPHOST_TEST_CALL_JOURNAL", journal_.c_str(), 1);
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_FATAL, std::vector<std::string>{dir_.path()});
    model_ = chain_model(2, 3).save(dir_);
  }
  void TearDown() override { ::unsetenv("EPHOST_TEST_CALL_JOURNAL"); }

  // The example plugin named, in a provider host process.
  Ephost::SessionOptions isolated() const {
    Ephost::SessionOptions o;
    o.add_config("session.provider_isolation", "process");
    o.append_provider("example");
    return o;
  }

  // How often the example plugin's `function` was called so far, in every process.
  int calls(const std::string& function) const {
    std::ifstream in(journal_);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) n += line == "example " + function;
    return n;
  }

  TempDir dir_;
  std::string journal_, model_;
  std::unique_ptr<Ephost::Env> env_;
  std::vector<float> x_ = {-1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f};
};

}  // namespace ephost_test
