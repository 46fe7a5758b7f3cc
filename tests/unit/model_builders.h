// Helpers that build ONNX ModelProtos in C++ for the unit tests (instead of committed binary files).
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "graph/graph.h"
#include "model/model.h"

namespace ephost_test {

// A model and the IR built from it. `->` and `*` reach the model; the IR points into it, so it is
// declared after the model and destroyed first.
struct ModelAndIr {
  std::unique_ptr<ephost::Model> model;
  std::unique_ptr<ephost::Graph> main;
  ephost::Model* operator->() const { return model.get(); }
  ephost::Model& operator*() const { return *model; }
};

// Runs fn, expecting an ephost::Error with `code` whose message contains every one of `parts`.
template <typename Fn>
void expect_error(Fn&& fn, EphostStatusCode code, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an ephost::Error with code " << ephost::status_code_name(code);
  } catch (const ephost::Error& e) {
    EXPECT_EQ(e.code(), code) << "got " << ephost::status_code_name(e.code()) << ": " << e.what();
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message lacks '" << part << "': " << e.what();
  }
}

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

inline onnx::ModelProto make_model(int64_t opset = 13, int64_t ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("ephost-unit-test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

// A tensor type. dims: -1 for an unknown dim; params[i] (when given and non-empty) names dim i.
inline void set_type(onnx::ValueInfoProto* vi, int32_t elem, const std::vector<int64_t>& dims,
                     const std::vector<std::string>& params = {}, bool has_shape = true) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  if (!has_shape) return;
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i < params.size() && !params[i].empty())
      d->set_dim_param(params[i]);
    else if (dims[i] >= 0)
      d->set_dim_value(dims[i]);
  }
}

inline onnx::ValueInfoProto* add_input(onnx::GraphProto* g, const std::string& name, int32_t elem = kFloat,
                                       const std::vector<int64_t>& dims = {2, 3},
                                       const std::vector<std::string>& params = {}) {
  auto* vi = g->add_input();
  vi->set_name(name);
  set_type(vi, elem, dims, params);
  return vi;
}

inline onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name, int32_t elem = kFloat,
                                        const std::vector<int64_t>& dims = {2, 3}, bool has_shape = true) {
  auto* vi = g->add_output();
  vi->set_name(name);
  set_type(vi, elem, dims, {}, has_shape);
  return vi;
}

// An output with no type at all (subgraph outputs whose type is left to inference).
inline onnx::ValueInfoProto* add_untyped_output(onnx::GraphProto* g, const std::string& name) {
  auto* vi = g->add_output();
  vi->set_name(name);
  return vi;
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, const std::string& name = "",
                                 const std::string& domain = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  if (!domain.empty()) n->set_domain(domain);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

inline void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void attr_graph(onnx::NodeProto* n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

inline void attr_tensor(onnx::NodeProto* n, const std::string& name, const onnx::TensorProto& t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

inline onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kFloat);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(values.data(), values.size() * sizeof(float));
  return t;
}

inline onnx::TensorProto int64_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kInt64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline onnx::TensorProto bool_tensor(const std::string& name, bool value) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kBool);
  t.add_int32_data(value ? 1 : 0);
  return t;
}

inline onnx::TensorProto* add_initializer(onnx::GraphProto* g, const onnx::TensorProto& t) {
  auto* init = g->add_initializer();
  *init = t;
  return init;
}

inline std::string serialize(const onnx::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

// Z = Add(X, Y), all float [2,3].
inline onnx::ModelProto add_model(int64_t opset = 13) {
  auto m = make_model(opset);
  auto* g = m.mutable_graph();
  add_input(g, "X");
  add_input(g, "Y");
  add_node(g, "Add", {"X", "Y"}, {"Z"}, "add");
  add_output(g, "Z");
  return m;
}

// A fresh temporary directory, removed with its content on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("ephost_test_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& rel) const { return (path_ / rel).string(); }
  std::string write(const std::string& rel, const std::string& bytes) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ephost_test
