// ephost test PATH...: runs ONNX backend test cases (node_case.h) and compares with the backend
// tolerances. With --require-provider NAME, cases where provider NAME runs no node are SKIP: a plugin
// is judged only on the cases whose nodes it claims.
#include <CLI/CLI.hpp>
#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "node_case.h"

namespace fs = std::filesystem;

namespace ephost_cli {

namespace {

struct TestArgs {
  std::vector<std::string> paths;
  SessionArgs session;
  Tolerance tolerance;
  std::vector<std::string> filters;
  std::vector<std::string> excludes;
  std::string required_provider;
  bool verbose = false;
};

bool matches_any(const std::vector<std::string>& globs, const TestCase& c) {
  const std::string base = c.dir.filename().string();
  for (const auto& g : globs)
    if (fnmatch(g.c_str(), c.name.c_str(), 0) == 0 || fnmatch(g.c_str(), base.c_str(), 0) == 0) return true;
  return false;
}

int test_command(const TestArgs& args, const GlobalArgs& global) {
  std::vector<TestCase> cases;
  for (const std::string& p : args.paths) {
    std::vector<TestCase> found = find_cases(p);
    if (found.empty())
      throw Ephost::Exception(EPHOST_NO_SUCHFILE, "no test cases (folders with model.onnx) under " + p);
    for (auto& c : found)
      if ((args.filters.empty() || matches_any(args.filters, c)) && !matches_any(args.excludes, c))
        cases.push_back(std::move(c));
  }

  const Ephost::Env env = create_env(global);
  const Ephost::SessionOptions options = make_session_options(args.session);
  size_t passed = 0, failed = 0, skipped = 0;
  for (const TestCase& c : cases) {
    auto t0 = std::chrono::steady_clock::now();
    CaseResult r;
    try {
      r = run_case(env, options, c, args.tolerance, args.required_provider);
    } catch (const Ephost::Exception& e) {
      r = {Outcome::kFail, e.what()};
    } catch (const std::exception& e) {
      r = {Outcome::kFail, e.what()};
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    switch (r.outcome) {
      case Outcome::kPass:
        ++passed;
        if (args.verbose)
          std::cout << "PASS " << c.name << " (" << ms_to_string(ms) << " ms" << (r.note.empty() ? "" : "; " + r.note)
                    << ")" << std::endl;
        break;
      case Outcome::kFail:
        ++failed;
        std::cout << "FAIL " << c.name << ": " << r.reason << std::endl;
        break;
      case Outcome::kSkip:
        ++skipped;
        std::cout << "SKIP " << c.name << ": " << r.reason << std::endl;
        break;
    }
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped) std::cout << ", " << skipped << " skipped";
  std::cout << std::endl;
  if (passed + failed == 0) {
    // Nothing was tested: not a success.
    std::cerr << "ephost test: no test case ran (" << skipped << " skipped)" << std::endl;
    return 1;
  }
  return failed ? 1 : 0;
}

}  // namespace

Command add_test_command(CLI::App& app) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* cmd = app.add_subcommand(
      "test", "Run ONNX backend test cases (model.onnx + test_data_set_*/) and compare with their outputs");
  cmd->add_option("paths", args->paths, "Test case folders, or folders searched recursively for them")
      ->required()
      ->check(CLI::ExistingPath);
  add_session_args(cmd, args->session);
  cmd->add_option("--rtol", args->tolerance.rtol, "Relative tolerance for floating outputs")->default_str("1e-3");
  cmd->add_option("--atol", args->tolerance.atol, "Absolute tolerance for floating outputs")->default_str("1e-7");
  add_repeatable(cmd, "--filter", args->filters, "Only cases whose name or folder matches this glob (repeatable)");
  add_repeatable(cmd, "--exclude", args->excludes, "Leave out cases whose name or folder matches this glob (repeatable)");
  cmd->add_option("--require-provider", args->required_provider,
                  "Judge only cases in which this provider runs a node; the others are SKIP (not claimed)");
  cmd->add_flag("-v,--verbose", args->verbose, "Also print a line for each passing case");
  return {cmd, [args](const GlobalArgs& g) { return test_command(*args, g); }};
}

}  // namespace ephost_cli
