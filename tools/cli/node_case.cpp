#include "node_case.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "epcontext_diagnostics.h"
#include "host_value.h"
#include "model_io.h"
#include "nondeterminism.h"
#include "tool_errors.h"

namespace fs = std::filesystem;

namespace ephost_cli {

namespace {

bool is_case_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "model.onnx", ec);
}

// Numeric order of the suffix: test_data_set_2 before test_data_set_10.
bool numbered_less(const fs::path& a, const fs::path& b) {
  auto key = [](const fs::path& p) {
    std::string s = p.filename().string();
    size_t i = s.find_last_not_of("0123456789");
    std::string digits = s.substr(i + 1);
    return std::make_pair(s.substr(0, i + 1), digits.empty() ? -1L : std::stol(digits));
  };
  return key(a) < key(b);
}

// One test_data_set_* folder: its input_N.pb and output_N.pb files, read once the session says
// what each value is (a tensor, a sequence or an optional decides which proto a file holds).
struct DataSetFiles {
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

std::vector<DataSetFiles> find_data_sets(const fs::path& dir) {
  std::vector<fs::path> set_dirs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      set_dirs.push_back(entry.path());
  }
  std::sort(set_dirs.begin(), set_dirs.end(), numbered_less);
  std::vector<DataSetFiles> sets;
  for (const auto& sd : set_dirs)
    sets.push_back({sd.filename().string(), numbered_files(sd.string(), "input_"), numbered_files(sd.string(), "output_")});
  return sets;
}

}  // namespace

std::vector<TestCase> find_cases(const std::string& path) {
  std::vector<TestCase> out;
  fs::path p(path);
  std::error_code ec;
  if (fs::exists(p, ec) && !fs::is_directory(p, ec)) {
    // A case's model.onnx stands for its folder; any other file is no test case.
    const fs::path dir = fs::absolute(p).parent_path();
    if (p.filename() != "model.onnx" || !is_case_dir(dir) || find_data_sets(dir).empty())
      usage_error("'" + path + "' is a file, not an ONNX test case: `ephost test` takes folders holding model.onnx and "
                  "test_data_set_*/ (or such a model.onnx); to run a model on its own, use `ephost run " + path + "`");
    out.push_back({dir.filename().string(), dir});
    return out;
  }
  if (is_case_dir(p)) {
    out.push_back({fs::absolute(p).lexically_normal().filename().string(), p});
    if (out.back().name.empty()) out.back().name = fs::absolute(p).parent_path().filename().string();
    return out;
  }
  const auto opts = fs::directory_options::follow_directory_symlink | fs::directory_options::skip_permission_denied;
  for (auto it = fs::recursive_directory_iterator(p, opts, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    if (is_case_dir(it->path())) {
      out.push_back({it->path().lexically_relative(p).generic_string(), it->path()});
      it.disable_recursion_pending();  // its test_data_set_* folders are not cases
    }
  }
  if (ec) throw Ephost::Exception(EPHOST_NO_SUCHFILE, "cannot search " + path + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const TestCase& a, const TestCase& b) { return a.name < b.name; });
  return out;
}

namespace {

struct DataSet {
  std::string name;
  std::vector<HostValue> inputs;
  std::vector<HostValue> outputs;
};

// Reads every data set as the session declares its values; sets `skip` when a file cannot be used.
std::vector<DataSet> load_data_sets(const std::vector<DataSetFiles>& files, const std::vector<ValueInfo>& inputs,
                                    const std::vector<ValueInfo>& outputs, std::string& skip) {
  std::vector<DataSet> sets;
  for (const DataSetFiles& f : files) {
    DataSet ds;
    ds.name = f.name;
    std::string unsupported;
    ds.inputs = load_value_files(f.inputs, inputs, f.name + " inputs", unsupported);
    if (unsupported.empty()) ds.outputs = load_value_files(f.outputs, outputs, f.name + " outputs", unsupported);
    if (!unsupported.empty()) {
      skip = f.name + "/" + unsupported;
      return {};
    }
    sets.push_back(std::move(ds));
  }
  return sets;
}

}  // namespace

size_t nodes_run_by(const Ephost::Session& session, const std::string& provider) {
  const nlohmann::json report = nlohmann::json::parse(session.partition_report_json());
  const auto& counts = report.at("nodes_per_provider");
  return counts.contains(provider) ? counts.at(provider).get<size_t>() : 0;
}

CaseResult run_case(const Ephost::Env& env, const Ephost::SessionOptions& options, const TestCase& c,
                    const Tolerance& tol, const std::string& required_provider) {
  CaseResult result;
  std::vector<DataSetFiles> files = find_data_sets(c.dir);
  if (files.empty()) return {Outcome::kSkip, "no test_data_set_* folders"};

  const std::vector<std::string> random_ops = nondeterministic_ops((c.dir / "model.onnx").string());
  if (!random_ops.empty()) {
    std::string ops;
    for (const auto& op : random_ops) ops += (ops.empty() ? "" : ", ") + op;
    result.note = "nondeterministic ops (" + ops + "): outputs compared by type and shape only";
  }

  std::optional<Ephost::Session> session;
  try {
    session.emplace(env, (c.dir / "model.onnx").string(), options);
  } catch (const Ephost::Exception& e) {
    return {Outcome::kFail, std::string("session creation failed: ") + e.what()};
  }
  if (!required_provider.empty() && nodes_run_by(*session, required_provider) == 0)
    return {Outcome::kSkip, "not claimed: " + required_provider + " runs no node of this case"};
  for (const std::string& line : unusable_context_lines(*session))
    std::cout << "WARN " << c.name << ": " << line << std::endl;

  std::vector<DataSet> sets;
  std::vector<ValueInfo> inputs_info, outputs_info;
  try {
    inputs_info = session_inputs(*session);
    outputs_info = session_outputs(*session);
    std::string skip;
    sets = load_data_sets(files, inputs_info, outputs_info, skip);
    if (!skip.empty()) return {Outcome::kSkip, skip};
  } catch (const Ephost::Exception& e) {
    return {Outcome::kFail, std::string("reading test data: ") + e.what()};
  }

  const bool several = sets.size() > 1;
  for (DataSet& ds : sets) {
    const std::string where = several ? ds.name + ": " : "";
    std::vector<Ephost::Tensor> got;
    std::vector<std::string> got_names;
    try {
      bind_by_name_or_position(ds.inputs, inputs_info, ds.name + " inputs");
      adopt_declared_types(ds.inputs, inputs_info);
      bind_by_name_or_position(ds.outputs, outputs_info, ds.name + " outputs");
      adopt_declared_types(ds.outputs, outputs_info);
      BoundRun bound(*session, ds.inputs);
      got = bound.run();
      got_names = bound.output_names();
    } catch (const Ephost::Exception& e) {
      return {Outcome::kFail, where + "run failed: " + e.what()};
    }
    for (const HostValue& expected : ds.outputs) {
      size_t k = std::find(got_names.begin(), got_names.end(), expected.name()) - got_names.begin();
      if (k == got_names.size() || !got[k])
        return {Outcome::kFail, where + "output '" + expected.name() + "' was not produced"};
      HostValue actual = from_ephost_value(got[k], expected.name());
      // Random outputs: only what does not depend on the draw (element type and shape) is compared.
      const bool shape_only = !random_ops.empty() && expected.kind() == HostValue::Kind::kTensor &&
                              actual.kind() == HostValue::Kind::kTensor;
      const auto diff = shape_only ? compare_type_and_shape(expected.tensor(), actual.tensor())
                                   : compare_values(expected, actual, tol);
      if (diff)
        return {Outcome::kFail, where + "output " + std::to_string(k) + " '" + expected.name() + "': " + *diff +
                                    (random_ops.empty() ? "" : " (" + result.note + ")")};
    }
  }
  return result;
}

}  // namespace ephost_cli
