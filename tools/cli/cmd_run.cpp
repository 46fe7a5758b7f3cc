// ephost run MODEL: one run, printing each output (and optionally writing it and the partition report).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.h"
#include "epcontext_diagnostics.h"
#include "json_report.h"
#include "host_value.h"
#include "memory_picture.h"
#include "partition_picture.h"
#include "model_io.h"
#include "tensor_values.h"

namespace fs = std::filesystem;

namespace ephost_cli {

namespace {

struct RunArgs {
  std::string model;
  SessionArgs session;
  InputArgs inputs;
  std::string output_dir;
  bool report = false;
  std::string dot;         // --dot FILE: the partition drawn (DOT, or SVG/PNG/PDF through graphviz)
  std::string svg, png;    // --svg FILE, --png FILE: the same, rendered whatever the name
  std::string memory_svg;  // --memory-svg FILE: the memory pattern the run recorded
  size_t values = 8;
};

// The values and statistics of a tensor, indented under the line that names it.
void print_tensor_values(std::ostream& os, const HostTensor& t, size_t max_values) {
  const size_t n = t.element_count();
  if (max_values > 0 && n > 0) {
    os << "      values:";
    for (size_t i = 0; i < n && i < max_values; ++i) os << (i ? ", " : " ") << element_to_string(t, i);
    if (n > max_values) os << ", ... (" << n << " elements)";
    os << "\n";
  }
  if (auto s = compute_stats(t); s && n > 0) {
    os << "      min " << number_to_string(s->min) << "  max " << number_to_string(s->max) << "  mean "
       << number_to_string(s->mean) << "  sum " << number_to_string(s->sum) << "  abs_sum "
       << number_to_string(s->abs_sum);
    if (s->nan) os << "  nan " << s->nan;
    if (s->inf) os << "  inf " << s->inf;
    os << "\n";
  }
}

void print_value(std::ostream& os, size_t index, const HostValue& v, size_t max_values) {
  os << "  [" << index << "] " << v.name() << ": " << v.describe() << "\n";
  if (v.kind() == HostValue::Kind::kTensor) print_tensor_values(os, v.tensor(), max_values);
  if (v.kind() != HostValue::Kind::kSequence) return;
  for (size_t k = 0; k < v.elements().size(); ++k) {
    const HostTensor& e = v.elements()[k];
    os << "    element " << k << ": " << element_type_name(e.elem_type()) << " " << shape_string(e.shape()) << "\n";
    print_tensor_values(os, e, max_values);
  }
}

int run_command(const RunArgs& args, const GlobalArgs& global) {
  const Ephost::Env env = create_env(global);
  Ephost::SessionOptions options = make_session_options(args.session);
  auto t0 = std::chrono::steady_clock::now();
  Ephost::Session session = create_session(env, args.model, options, args.session);
  double create_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::vector<HostValue> inputs = prepare_inputs(session, args.inputs);

  std::cout << "model: " << args.model << "\n";
  for (const std::string& line : unusable_context_lines(session)) std::cout << line << "\n";
  if (args.report) {
    const std::string json = with_context("partition report", [&] { return session.partition_report_json(); });
    print_json_report(std::cout, json, "partition");
  }
  std::cout << "inputs:\n";
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::cout << "  [" << i << "] " << inputs[i].name() << ": " << inputs[i].describe()
              << (args.inputs.inputs_dir.empty() ? " (random, seed " + std::to_string(args.inputs.seed) + ")"
                                                 : " (from " + args.inputs.inputs_dir + ")")
              << "\n";
  }

  BoundRun bound(session, inputs);
  t0 = std::chrono::steady_clock::now();
  std::vector<Ephost::Tensor> outputs = bound.run();
  double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::cout << "outputs:\n";
  if (!args.output_dir.empty()) fs::create_directories(args.output_dir);
  for (size_t i = 0; i < outputs.size(); ++i) {
    HostValue v = from_ephost_value(outputs[i], bound.output_names()[i]);
    print_value(std::cout, i, v, args.values);
    if (!args.output_dir.empty())
      save_value_file(v, (fs::path(args.output_dir) / ("output_" + std::to_string(i) + ".pb")).string());
  }
  std::cout << "session created in " << ms_to_string(create_ms) << " ms, run took " << ms_to_string(run_ms)
            << " ms\n";
  if (!args.output_dir.empty())
    std::cout << "wrote " << outputs.size() << " output file(s) to " << args.output_dir << "\n";
  write_profile(session, args.session, std::cout);
  if (!args.dot.empty() || !args.svg.empty() || !args.png.empty() || !args.memory_svg.empty()) {
    // After the run: the report then holds the memory pattern the run recorded.
    const nlohmann::json report = nlohmann::json::parse(
        with_context("partition report", [&] { return session.partition_report_json(); }));
    for (const auto& picture : {std::pair{args.dot, std::string()}, {args.svg, std::string("svg")},
                                {args.png, std::string("png")}}) {
      // Not a structured binding: clang 14 cannot capture one in the lambda below.
      const std::string& path = picture.first;
      const std::string& format = picture.second;
      if (path.empty()) continue;
      with_context(format.empty() ? "--dot" : "--" + format, [&] { write_partition_picture(report, path, format); });
      std::cout << "partition picture written to " << path << "\n";
    }
    if (!args.memory_svg.empty()) {
      const std::string svg = with_context("--memory-svg", [&] { return memory_svg(report); });
      std::ofstream out(args.memory_svg, std::ios::binary | std::ios::trunc);
      out << svg;
      out.close();
      if (!out) throw Ephost::Exception(EPHOST_FAIL, "--memory-svg: cannot write " + args.memory_svg);
      std::cout << "memory pattern picture written to " << args.memory_svg << "\n";
    }
  }
  const std::string rebuilt = wait_for_context_rebuild(session);
  if (!rebuilt.empty()) std::cout << rebuilt << "\n";
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model once and print its outputs");
  cmd->add_option("model", args->model, "ONNX model file")->required()->check(CLI::ExistingFile);
  add_input_args(cmd, args->inputs);
  add_session_args(cmd, args->session);
  cmd->add_option("--output-dir", args->output_dir,
                  "Write the outputs there as output_N.pb files (TensorProto, SequenceProto or OptionalProto)");
  cmd->add_flag("--report", args->report, "Print the partition report (node -> provider, refused claims)");
  cmd->add_option("--dot", args->dot,
                  "Draw the partition to FILE: providers as colours, fused groups boxed, copies in red (DOT; "
                  ".svg/.png/.pdf rendered with graphviz's dot)");
  cmd->add_option("--svg", args->svg, "Draw the partition to FILE as SVG (needs graphviz's dot)");
  cmd->add_option("--png", args->png, "Draw the partition to FILE as PNG (needs graphviz's dot)");
  cmd->add_option("--memory-svg", args->memory_svg,
                  "Draw the memory pattern the run recorded to FILE (SVG: values by offset and step)");
  cmd->add_option("--values", args->values, "How many values of each output to print")->default_str("8");
  return {cmd, [args](const GlobalArgs& g) { return run_command(*args, g); }};
}

}  // namespace ephost_cli
