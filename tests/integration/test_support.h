// Helpers for the integration tests: temporary plugin directories holding chosen test plugins, and a
// small builder for ONNX models (so test models are made in code, not committed as binaries).
#pragma once

#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "test_paths.h"

namespace ephost_test {

namespace fs = boost::filesystem;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / fs::unique_path("ephost-test-%%%%-%%%%-%%%%")) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    boost::system::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// The built test plugin library `lib<name>.so`.
inline std::string test_plugin(const std::string& name) {
  return std::string(EPHOST_TEST_PLUGIN_DIR) + "/lib" + name + ".so";
}

// Copies the named test plugins into `dir`.
inline void install_plugins(const TempDir& dir, const std::vector<std::string>& names) {
  for (const auto& n : names)
    fs::copy_file(test_plugin(n), fs::path(dir.path()) / ("lib" + n + ".so"), fs::copy_option::overwrite_if_exists);
}

// A shell command's exit code and what it printed on stdout (add " 2>&1" to the command for stderr too).
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = popen(command.c_str(), "r");
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = p ? pclose(p) : -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Writes a float TensorProto file (the ONNX test-data layout: input_N.pb / output_N.pb).
inline void write_tensor(const std::string& path, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
}

#ifdef EPHOST_SOURCE_DIR
// The PP-OCR model folder tests/models/fetch_models.sh prints (fetched once per process), or "" with
// `why` set when the models are unavailable (the tests then skip with that message).
inline std::string ocr_model_folder(std::string* why) {
  static const CommandResult fetched =
      run_command(std::string("bash '") + EPHOST_SOURCE_DIR + "/tests/models/fetch_models.sh' 2>&1");
  if (fetched.exit_code != 0) {
    *why = "models unavailable (fetch_models.sh exit " + std::to_string(fetched.exit_code) + "): " + fetched.output;
    return "";
  }
  std::istringstream lines(fetched.output);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  while (!last.empty() && last.back() == '\r') last.pop_back();
  return last;
}
#endif

// Attributes of a node, by type.
inline void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void attr_float(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13, const std::string& graph_name = "test") {
    model_.set_ir_version(8);
    model_.set_producer_name("ephost-tests");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name(graph_name);
  }

  ModelBuilder& input(const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
    set_type(model_.mutable_graph()->add_input(), name, elem, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
    set_type(model_.mutable_graph()->add_output(), name, elem, dims);
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  onnx::ModelProto& proto() { return model_; }
  std::string bytes() const {
    std::string s;
    model_.SerializeToString(&s);
    return s;
  }
  std::string save(const TempDir& dir, const std::string& file = "model.onnx") const {
    std::string path = dir.file(file);
    std::ofstream(path, std::ios::binary) << bytes();
    return path;
  }

  static void set_type(onnx::ValueInfoProto* vi, const std::string& name, int32_t elem,
                       const std::vector<int64_t>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      if (d >= 0)
        shape->add_dim()->set_dim_value(d);
      else
        shape->add_dim()->set_dim_param("N");
    }
  }

 private:
  onnx::ModelProto model_;
};

// x[R,C] -> Add(c1) -> Mul(c2) -> Relu -> Sub(c3) -> Sigmoid -> y: claimable in part by alpha (Add, Mul)
// and beta (chains of Add/Mul/Relu), with the rest left to the CPU plugin.
inline ModelBuilder chain_model(int64_t rows, int64_t cols) {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {rows, cols}).output("y", onnx::TensorProto::FLOAT, {rows, cols});
  std::vector<float> c1(cols), c2(cols), c3(cols);
  for (int64_t i = 0; i < cols; ++i) {
    c1[i] = 0.5f - 0.1f * static_cast<float>(i % 7);
    c2[i] = 1.5f + 0.25f * static_cast<float>(i % 3);
    c3[i] = 0.2f * static_cast<float>(i % 5);
  }
  m.initializer("c1", {cols}, c1).initializer("c2", {cols}, c2).initializer("c3", {cols}, c3);
  m.node("Add", {"x", "c1"}, {"a"}, "add");
  m.node("Mul", {"a", "c2"}, {"m"}, "mul");
  m.node("Relu", {"m"}, {"r"}, "relu");
  m.node("Sub", {"r", "c3"}, {"s"}, "sub");
  m.node("Sigmoid", {"s"}, {"y"}, "sigmoid");
  return m;
}

inline std::vector<float> chain_expected(const std::vector<float>& x, int64_t cols) {
  std::vector<float> y(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    int64_t i = static_cast<int64_t>(k) % cols;
    float c1 = 0.5f - 0.1f * static_cast<float>(i % 7), c2 = 1.5f + 0.25f * static_cast<float>(i % 3),
          c3 = 0.2f * static_cast<float>(i % 5);
    float r = std::max(0.0f, (x[k] + c1) * c2);
    y[k] = 1.0f / (1.0f + std::exp(-(r - c3)));
  }
  return y;
}

// A branch of an If: one `op` node over the outer scope's x and c (the main graph's input and
// initializer), with output `out`.
inline onnx::GraphProto if_branch(const std::string& name, const std::string& op, const std::string& out) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name + "_" + op);
  n->add_input("x");  // outer scope: the main graph's input
  n->add_input("c");  // outer scope: the main graph's initializer
  n->add_output(out);
  ModelBuilder::set_type(g.add_output(), out, onnx::TensorProto::FLOAT, {2});
  return g;
}

inline void set_graph_attribute(onnx::NodeProto& node, const std::string& attr, const onnx::GraphProto& g) {
  auto* a = node.add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

// cond ? x + c : (cond ? x - c : x * c)  — the inner If sits in the outer else-branch. Graphs: "test"
// (main), "outer_then" and "outer_else" (of node "outer_if"), "inner_then" and "inner_else" (of node
// "inner_if"); alpha can take outer_then_Add and inner_else_Mul.
inline std::string nested_if_model() {
  ModelBuilder m;
  m.input("cond", onnx::TensorProto::BOOL, {}).input("x", onnx::TensorProto::FLOAT, {2});
  m.output("y", onnx::TensorProto::FLOAT, {2});
  m.initializer("c", {2}, {10, 20});
  onnx::GraphProto inner_else;
  inner_else.set_name("outer_else");
  auto& inner = *inner_else.add_node();
  inner.set_op_type("If");
  inner.set_name("inner_if");
  inner.add_input("cond");
  inner.add_output("inner_out");
  set_graph_attribute(inner, "then_branch", if_branch("inner_then", "Sub", "sub_out"));
  set_graph_attribute(inner, "else_branch", if_branch("inner_else", "Mul", "mul_out"));
  ModelBuilder::set_type(inner_else.add_output(), "inner_out", onnx::TensorProto::FLOAT, {2});
  auto& outer = m.node("If", {"cond"}, {"y"}, "outer_if");
  set_graph_attribute(outer, "then_branch", if_branch("outer_then", "Add", "add_out"));
  set_graph_attribute(outer, "else_branch", inner_else);
  return m.bytes();
}

inline std::vector<float> ramp(size_t n, float scale = 0.01f, float offset = -1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>(i % 211);
  return v;
}

}  // namespace ephost_test
