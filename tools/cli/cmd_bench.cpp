// ephost bench MODEL: session creation time and run latency (median, p90, min, mean, max); with
// --per-op, the operators that take the time, from the session's profile.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>

#include "commands.h"
#include "model_io.h"
#include "operator_profile.h"
#include "tensor_values.h"
#include "text_table.h"

namespace ephost_cli {

namespace {

struct BenchArgs {
  std::string model;
  SessionArgs session;
  InputArgs inputs;
  int repeat = 20;
  int warmup = 3;
  bool json = false;
  bool per_op = false;  // --per-op: profile the runs and sum the time by operator
  int per_op_top = 15;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double median(const std::vector<double>& sorted) {
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// What the built-in CPU plugin says it runs on: its hardware_architecture names the machine and the
// ISA tier of its own loops ("x86_64/avx512"; EPHOST_CPU_ISA caps it), so a number says which path made it.
std::string cpu_plugin_architecture(const Ephost::Env& env) {
  try {
    for (const nlohmann::json& r : nlohmann::json::parse(env.plugin_report_json()))
      if (r.value("builtin", false) && r.value("name", "") == "cpu") return r.value("hardware_architecture", "");
  } catch (const std::exception&) {
  }
  return "unknown";
}

// The session's trace as JSON: the file --profile named, or (--per-op alone) a trace of our own,
// read and removed.
nlohmann::json read_trace(Ephost::Session& session, const SessionArgs& session_args, bool own_trace) {
  std::string path = session_args.profile;
  if (own_trace) path = with_context("--per-op", [&] { return session.end_profiling(); });
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in, nullptr, false);
  if (own_trace) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  if (trace.is_discarded())
    throw Ephost::Exception(EPHOST_FAIL, "--per-op: cannot read the session's profile " + path);
  return trace;
}

int bench_command(const BenchArgs& original_args, const GlobalArgs& global) {
  BenchArgs args = original_args;
  // --per-op needs the session's profile: without --profile, one of our own in the temp folder.
  const bool own_trace = args.per_op && args.session.profile.empty();
  if (own_trace)
    args.session.profile =
        (std::filesystem::temp_directory_path() / ("ephost-bench-per-op-" + std::to_string(getpid()))).string();
  const Ephost::Env env = create_env(global);
  Ephost::SessionOptions options = make_session_options(args.session);
  auto t0 = std::chrono::steady_clock::now();
  Ephost::Session session = create_session(env, args.model, options, args.session);
  const double create_ms = ms_since(t0);

  std::vector<HostValue> inputs = prepare_inputs(session, args.inputs);
  BoundRun bound(session, inputs);
  for (int i = 0; i < args.warmup; ++i) bound.run();
  std::vector<double> times;
  times.reserve(static_cast<size_t>(args.repeat));
  for (int i = 0; i < args.repeat; ++i) {
    t0 = std::chrono::steady_clock::now();
    std::vector<Ephost::Tensor> outputs = bound.run();
    times.push_back(ms_since(t0));  // outputs are released after the clock stops
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double mean = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());

  // With --json, stdout carries only the JSON object.
  if (!own_trace) write_profile(session, args.session, args.json ? std::cerr : std::cout);
  OperatorProfile per_op;
  if (args.per_op) per_op = operator_profile(read_trace(session, args.session, own_trace));
  if (args.json) {
    nlohmann::ordered_json j;
    j["model"] = args.model;
    j["library_version"] = Ephost::version_string();
    j["providers"] = provider_list(args.session.providers);
    j["threads"] = args.session.threads;
    j["inputs"] = nlohmann::ordered_json::object();
    for (const HostValue& v : inputs) {
      if (v.kind() == HostValue::Kind::kTensor)
        j["inputs"][v.name()] = v.tensor().shape();
      else
        j["inputs"][v.name()] = v.describe();
    }
    j["input_source"] = args.inputs.inputs_dir.empty() ? "random" : args.inputs.inputs_dir;
    j["warmup"] = args.warmup;
    j["repeat"] = args.repeat;
    j["cpu_plugin_architecture"] = cpu_plugin_architecture(env);
    j["session_create_ms"] = round3(create_ms);
    j["run_ms_median"] = round3(median(sorted));
    j["run_ms_p90"] = round3(percentile(sorted, 0.9));
    j["run_ms_min"] = round3(sorted.front());
    j["run_ms_mean"] = round3(mean);
    j["run_ms_max"] = round3(sorted.back());
    if (args.per_op) j["per_op"] = operator_profile_json(per_op, static_cast<size_t>(args.per_op_top));
    std::cout << j.dump() << std::endl;
    return 0;
  }

  std::cout << "model:    " << args.model << "\n";
  std::cout << "inputs:  ";
  for (const HostValue& v : inputs)
    std::cout << " " << v.name() << " "
              << (v.kind() == HostValue::Kind::kTensor ? shape_string(v.tensor().shape()) : v.describe());
  std::cout << (args.inputs.inputs_dir.empty() ? " (random)" : " (from " + args.inputs.inputs_dir + ")") << "\n";
  std::cout << "threads:  " << (args.session.threads > 0 ? std::to_string(args.session.threads) : "default")
            << ", providers: " << (args.session.providers.empty() ? "default" : args.session.providers) << "\n";
  std::cout << "cpu plugin: " << cpu_plugin_architecture(env) << "\n";
  std::cout << "session creation: " << ms_to_string(create_ms) << " ms\n";
  std::cout << "run (" << args.repeat << " runs after " << args.warmup << " warm-up):\n";
  TextTable table({"median", "p90", "min", "mean", "max"});
  table.add_row({ms_to_string(median(sorted)), ms_to_string(percentile(sorted, 0.9)), ms_to_string(sorted.front()),
                 ms_to_string(mean), ms_to_string(sorted.back())});
  table.print(std::cout, "  ");
  std::cout << "  (milliseconds" << (args.per_op ? ", measured with profiling on" : "") << ")" << std::endl;
  if (args.per_op) print_operator_profile(per_op, static_cast<size_t>(args.per_op_top), std::cout);
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure session creation and run latency");
  cmd->add_option("model", args->model, "ONNX model file")->required()->check(CLI::ExistingFile);
  add_input_args(cmd, args->inputs);
  add_session_args(cmd, args->session);
  cmd->add_option("--repeat", args->repeat, "Timed runs")->default_str("20")->check(CLI::Range(1, 100000000));
  cmd->add_option("--warmup", args->warmup, "Untimed runs first")->default_str("3")->check(CLI::Range(0, 100000000));
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_flag("--per-op", args->per_op,
                "Profile the runs and print the operators that take the time, summed by op type and by node "
                "(inside fused regions too, where the plugin reports them)");
  cmd->add_option("--per-op-top", args->per_op_top, "How many operators --per-op lists of each kind")
      ->default_str("15")
      ->check(CLI::Range(1, 100000));
  return {cmd, [args](const GlobalArgs& g) { return bench_command(*args, g); }};
}

}  // namespace ephost_cli
