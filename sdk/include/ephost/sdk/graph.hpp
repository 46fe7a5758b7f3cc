// ephost plugin SDK — the read-only graph view: Graph, Node (with attribute getters taking defaults)
// and Value.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/host.hpp"
#include "ephost/sdk/status.hpp"
#include "ephost/sdk/tensor.hpp"

namespace ephost::sdk {

class Node;

class Value {
 public:
  explicit Value(const EphostValueInfo* v = nullptr) : v_(v) {}
  bool valid() const { return v_ != nullptr; }
  const EphostValueInfo* get() const { return v_; }
  std::string name() const { return host().value_name(v_); }
  // Element type of a tensor; EPHOST_ELEMENT_UNDEFINED when unknown or not a tensor.
  int32_t elem_type() const { return host().value_elem_type(v_); }
  // EPHOST_VALUE_TENSOR, _SEQUENCE, _OPTIONAL, or _UNDEFINED when the model does not say.
  int32_t kind() const {
    if (host_has_values()) return host().value_kind(v_);
    return elem_type() != EPHOST_ELEMENT_UNDEFINED ? EPHOST_VALUE_TENSOR : EPHOST_VALUE_UNDEFINED;
  }
  // A declared sequence or optional (a value tensor-only kernels cannot take).
  bool is_non_tensor() const {
    const int32_t k = kind();
    return k == EPHOST_VALUE_SEQUENCE || k == EPHOST_VALUE_OPTIONAL;
  }
  // For an optional: the kind it may hold (TENSOR or SEQUENCE), else UNDEFINED.
  int32_t optional_kind() const { return host_has_values() ? host().value_optional_kind(v_) : EPHOST_VALUE_UNDEFINED; }
  // Element type of the tensor(s) the value is or holds (a sequence's elements', an optional's contents').
  int32_t tensor_elem_type() const { return host_has_values() ? host().value_tensor_elem_type(v_) : elem_type(); }
  int64_t rank() const { return host().value_rank(v_); }
  // Dimension sizes, -1 for symbolic/unknown; empty when the rank is unknown.
  std::vector<int64_t> dims() const {
    std::vector<int64_t> d;
    int64_t r = rank();
    for (int64_t i = 0; i < r; ++i) d.push_back(host().value_dim(v_, static_cast<size_t>(i)));
    return d;
  }
  bool is_constant() const { return host().value_is_constant_initializer(v_) != 0; }
  bool is_graph_input() const { return host().value_is_graph_input(v_) != 0; }
  bool is_graph_output() const { return host().value_is_graph_output(v_) != 0; }
  Tensor constant() const {
    EphostTensorView view{};
    check(host().value_initializer_data(v_, &view));
    return Tensor(view);
  }
  Node producer() const;
  std::vector<Node> consumers() const;
  // Tells the host that the provider compiling on this thread (inside compile or create_kernel) will
  // never read this constant's data again, not even to pack it anew (plugin ABI 5,
  // value_initializer_done): the host may then free it. Every Tensor this provider got from
  // constant() for it may become invalid. Returns false and does nothing against an older host or
  // outside compile/create_kernel.
  bool initializer_done() const {
    EphostProvider* provider = current_provider_slot();
    if (!host_has_initializer_release() || provider == nullptr) return false;
    check(host().value_initializer_done(provider, v_));
    return true;
  }

 private:
  const EphostValueInfo* v_;
};

class Graph;

class Node {
 public:
  explicit Node(const EphostNode* n = nullptr) : n_(n) {}
  bool valid() const { return n_ != nullptr; }
  const EphostNode* get() const { return n_; }
  size_t id() const { return host().node_id(n_); }
  std::string name() const { return host().node_name(n_); }
  std::string op_type() const { return host().node_op_type(n_); }
  std::string domain() const { return host().node_domain(n_); }
  size_t num_inputs() const { return host().node_num_inputs(n_); }
  Value input(size_t i) const { return Value(host().node_input(n_, i)); }
  // True when input i exists and is not an omitted optional input.
  bool has_input(size_t i) const { return i < num_inputs() && host().node_input(n_, i) != nullptr; }
  size_t num_outputs() const { return host().node_num_outputs(n_); }
  Value output(size_t i) const { return Value(host().node_output(n_, i)); }
  bool has_output(size_t i) const { return i < num_outputs() && host().node_output(n_, i) != nullptr; }
  // Values of enclosing graphs that this node's subgraphs read (an If's or a Loop's outer-scope values):
  // inputs too, as far as the order of nodes is concerned.
  size_t num_implicit_inputs() const { return host().node_num_implicit_inputs(n_); }
  Value implicit_input(size_t i) const { return Value(host().node_implicit_input(n_, i)); }
  Graph graph() const;
  // Opset of this node's domain imported by its model (-1 when none).
  int64_t opset() const;

  bool has_attr(const char* name) const { return host().node_attribute(n_, name) != nullptr; }
  int64_t attr_int(const char* name, int64_t def) const {
    auto* a = host().node_attribute(n_, name);
    if (!a) return def;
    int64_t v = 0;
    check(host().attribute_int(a, &v));
    return v;
  }
  float attr_float(const char* name, float def) const {
    auto* a = host().node_attribute(n_, name);
    if (!a) return def;
    float v = 0;
    check(host().attribute_float(a, &v));
    return v;
  }
  std::string attr_string(const char* name, const std::string& def) const {
    auto* a = host().node_attribute(n_, name);
    if (!a) return def;
    const char* s = nullptr;
    size_t n = 0;
    check(host().attribute_string(a, &s, &n));
    return std::string(s, n);
  }
  std::vector<int64_t> attr_ints(const char* name, std::vector<int64_t> def = {}) const {
    auto* a = host().node_attribute(n_, name);
    if (!a) return def;
    const int64_t* p = nullptr;
    size_t n = 0;
    check(host().attribute_ints(a, &p, &n));
    return std::vector<int64_t>(p, p + n);
  }
  std::vector<float> attr_floats(const char* name, std::vector<float> def = {}) const {
    auto* a = host().node_attribute(n_, name);
    if (!a) return def;
    const float* p = nullptr;
    size_t n = 0;
    check(host().attribute_floats(a, &p, &n));
    return std::vector<float>(p, p + n);
  }
  std::vector<std::string> attr_strings(const char* name) const {
    std::vector<std::string> out;
    auto* a = host().node_attribute(n_, name);
    if (!a) return out;
    size_t n = host().attribute_num_strings(a);
    for (size_t i = 0; i < n; ++i) {
      const char* s = nullptr;
      size_t len = 0;
      check(host().attribute_string_at(a, i, &s, &len));
      out.emplace_back(s, len);
    }
    return out;
  }
  // A TENSOR attribute (e.g. Constant's `value`); throws when absent.
  Tensor attr_tensor(const char* name) const {
    auto* a = host().node_attribute(n_, name);
    if (!a) fail(EPHOST_INVALID_ARGUMENT, "node '" + this->name() + "' has no attribute '" + name + "'");
    EphostTensorView view{};
    check(host().attribute_tensor(a, &view));
    return Tensor(view);
  }
  EphostAttributeType attr_type(const char* name) const {
    auto* a = host().node_attribute(n_, name);
    return a ? host().attribute_type(a) : EPHOST_ATTR_UNDEFINED;
  }
  // The subgraph in graph attribute `name`, or an invalid Graph.
  Graph subgraph(const char* name) const;

 private:
  const EphostNode* n_;
};

class Graph {
 public:
  explicit Graph(const EphostGraph* g = nullptr) : g_(g) {}
  bool valid() const { return g_ != nullptr; }
  const EphostGraph* get() const { return g_; }
  std::string name() const { return host().graph_name(g_); }
  std::string model_path() const { return host().graph_model_path(g_); }
  size_t num_nodes() const { return host().graph_num_nodes(g_); }
  Node node(size_t i) const { return Node(host().graph_node(g_, i)); }
  std::vector<Node> nodes() const {
    std::vector<Node> out;
    size_t n = num_nodes();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(node(i));
    return out;
  }
  size_t num_inputs() const { return host().graph_num_inputs(g_); }
  Value input(size_t i) const { return Value(host().graph_input(g_, i)); }
  size_t num_outputs() const { return host().graph_num_outputs(g_); }
  Value output(size_t i) const { return Value(host().graph_output(g_, i)); }
  size_t num_initializers() const { return host().graph_num_initializers(g_); }
  Value initializer(size_t i) const { return Value(host().graph_initializer(g_, i)); }
  int64_t opset(const char* domain = "") const { return host().graph_opset(g_, domain); }
  Node parent_node() const { return Node(host().graph_parent_node(g_)); }

 private:
  const EphostGraph* g_;
};

inline Node Value::producer() const { return Node(host().value_producer(v_)); }
inline std::vector<Node> Value::consumers() const {
  std::vector<Node> out;
  size_t n = host().value_num_consumers(v_);
  for (size_t i = 0; i < n; ++i) out.emplace_back(host().value_consumer(v_, i));
  return out;
}
inline Graph Node::graph() const { return Graph(host().node_graph(n_)); }
inline int64_t Node::opset() const {
  std::string d = domain();
  return host().graph_opset(host().node_graph(n_), d.c_str());
}
inline Graph Node::subgraph(const char* name) const { return Graph(host().node_subgraph(n_, name)); }

}  // namespace ephost::sdk
