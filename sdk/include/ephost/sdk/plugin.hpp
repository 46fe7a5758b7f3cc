// ephost plugin SDK — C++ helpers over the plugin C ABI (ephost/ephost_plugin.h).
//
// What you get: RAII-free, exception-based wrappers for the read-only graph view, attribute getters
// with defaults, a typed kernel context, EPContext caching (ContextProvider), and EPHOST_DEFINE_PLUGIN,
// which generates the exported entry point and the C function table, negotiates the ABI version and
// turns every exception into an EphostStatus so that none crosses the boundary.
//
// Build plugins with -fvisibility=hidden (the ephost::sdk CMake target sets it): this header's
// inline state must stay private to each plugin library.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ephost/ephost_plugin.h"

namespace ephost::sdk {

// ---- host table ---------------------------------------------------------------------------------

// The host's table, set once by the generated entry point before anything else runs.
inline const EphostHostApi*& host_api_slot() {
  static const EphostHostApi* api = nullptr;
  return api;
}
inline const EphostHostApi& host() { return *host_api_slot(); }

// ---- errors -------------------------------------------------------------------------------------

// Thrown by plugin code; converted to an EphostStatus at the boundary.
class Error : public std::runtime_error {
 public:
  Error(EphostStatusCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  EphostStatusCode code() const { return code_; }

 private:
  EphostStatusCode code_;
};

[[noreturn]] inline void fail(EphostStatusCode code, const std::string& message) { throw Error(code, message); }

// True when the host offers plugin ABI 2 (sequence and optional values). Against an older host the
// SDK negotiates ABI 1: nodes with such values are never claimed for it, so kernels never see them.
inline bool host_has_values() { return EPHOST_STRUCT_HAS(&host(), EphostHostApi, value_create_tensor); }
inline void require_values(const char* what) {
  if (!host_has_values())
    fail(EPHOST_NOT_IMPLEMENTED, std::string(what) + " needs plugin ABI 2 (sequence and optional values); the host "
                                                      "speaks ABI 1");
}

// Throws when `status` is an error (taking ownership of it).
inline void check(EphostStatus* status) {
  if (status == nullptr) return;
  std::string message = host().status_message(status);
  EphostStatusCode code = host().status_code(status);
  host().status_release(status);
  throw Error(code, message);
}

// Runs `fn`, converting any exception into a status. Every generated C entry goes through this.
template <typename Fn>
EphostStatus* guard(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const Error& e) {
    return host().status_create(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return host().status_create(EPHOST_FAIL, "out of memory");
  } catch (const std::exception& e) {
    return host().status_create(EPHOST_RUNTIME_EXCEPTION, e.what());
  } catch (...) {
    return host().status_create(EPHOST_RUNTIME_EXCEPTION, "unknown exception in plugin");
  }
}

inline void log(EphostLogLevel level, const std::string& message) { host().log(nullptr, level, message.c_str()); }

// ---- tensors --------------------------------------------------------------------------------------

inline size_t element_size(int32_t elem_type) { return EphostElementSize(elem_type); }

// The element type a C++ type stands for (uint16_t means UINT16: pass FLOAT16/BFLOAT16 explicitly).
template <typename T>
constexpr int32_t element_type_of() {
  if constexpr (std::is_same_v<T, float>) return EPHOST_ELEMENT_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return EPHOST_ELEMENT_DOUBLE;
  else if constexpr (std::is_same_v<T, int64_t>) return EPHOST_ELEMENT_INT64;
  else if constexpr (std::is_same_v<T, int32_t>) return EPHOST_ELEMENT_INT32;
  else if constexpr (std::is_same_v<T, int16_t>) return EPHOST_ELEMENT_INT16;
  else if constexpr (std::is_same_v<T, int8_t>) return EPHOST_ELEMENT_INT8;
  else if constexpr (std::is_same_v<T, uint64_t>) return EPHOST_ELEMENT_UINT64;
  else if constexpr (std::is_same_v<T, uint32_t>) return EPHOST_ELEMENT_UINT32;
  else if constexpr (std::is_same_v<T, uint16_t>) return EPHOST_ELEMENT_UINT16;
  else if constexpr (std::is_same_v<T, uint8_t>) return EPHOST_ELEMENT_UINT8;
  else if constexpr (std::is_same_v<T, bool>) return EPHOST_ELEMENT_BOOL;
  else if constexpr (std::is_same_v<T, const char*>) return EPHOST_ELEMENT_STRING;
  else return EPHOST_ELEMENT_UNDEFINED;
}

inline int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A borrowed tensor (an input, a constant initializer or an attribute tensor).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(const EphostTensorView& view) : view_(view) {}
  bool present() const { return view_.data != nullptr; }
  int32_t elem_type() const { return view_.elem_type; }
  size_t rank() const { return view_.rank; }
  std::vector<int64_t> shape() const { return std::vector<int64_t>(view_.shape, view_.shape + view_.rank); }
  int64_t dim(size_t i) const { return view_.shape[i]; }
  int64_t size() const {
    int64_t n = 1;
    for (size_t i = 0; i < view_.rank; ++i) n *= view_.shape[i];
    return n;
  }
  template <typename T>
  const T* data() const { return static_cast<const T*>(view_.data); }
  const void* raw() const { return view_.data; }
  const EphostTensorView& view() const { return view_; }

 private:
  EphostTensorView view_{EPHOST_ELEMENT_UNDEFINED, 0, nullptr, nullptr};
};

// ---- graph view ---------------------------------------------------------------------------------

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

// ---- capability -----------------------------------------------------------------------------------

class Capability {
 public:
  explicit Capability(EphostCapability* c) : c_(c) {}
  void add_node(const Node& node) { check(host().capability_add_node(c_, node.get())); }
  void add_fused_group(const std::vector<Node>& nodes) {
    std::vector<const EphostNode*> raw;
    raw.reserve(nodes.size());
    for (const auto& n : nodes) raw.push_back(n.get());
    check(host().capability_add_fused_group(c_, raw.data(), raw.size()));
  }

 private:
  EphostCapability* c_;
};

// ---- kernel context -------------------------------------------------------------------------------

// A host value (a subgraph's result, a kernel input, a copy): a tensor, a sequence of tensors, or
// none (an empty optional). Released on destruction.
class OwnedValue {
 public:
  explicit OwnedValue(EphostValue* v = nullptr) : v_(v) {}
  OwnedValue(OwnedValue&& o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
  OwnedValue& operator=(OwnedValue&& o) noexcept {
    if (this != &o) {
      reset();
      v_ = std::exchange(o.v_, nullptr);
    }
    return *this;
  }
  OwnedValue(const OwnedValue&) = delete;
  OwnedValue& operator=(const OwnedValue&) = delete;
  ~OwnedValue() { reset(); }
  void reset() {
    if (v_) host().value_release(v_);
    v_ = nullptr;
  }
  const EphostValue* get() const { return v_; }
  explicit operator bool() const { return v_ != nullptr; }

  // A host value holding a copy of `t` (ABI 2), e.g. an iteration number to feed a subgraph.
  static OwnedValue copy_of(const Tensor& t) {
    require_values("OwnedValue::copy_of");
    EphostValue* v = nullptr;
    check(host().value_create_tensor(&t.view(), &v));
    return OwnedValue(v);
  }

  // EPHOST_VALUE_TENSOR, _SEQUENCE or _NONE (always TENSOR against an ABI 1 host).
  int32_t kind() const { return host_has_values() ? host().value_held_kind(v_) : EPHOST_VALUE_TENSOR; }
  // The tensor; throws unless the value is one.
  Tensor tensor() const {
    EphostTensorView view{};
    check(host().value_tensor(v_, &view));
    return Tensor(view);
  }
  // Sequences: the element type of their tensors, their length, element k (as a view valid while
  // this value lives, or as a host value of its own sharing the buffer).
  int32_t sequence_elem_type() const {
    require_values("OwnedValue::sequence_elem_type");
    int32_t type = EPHOST_ELEMENT_UNDEFINED;
    check(host().value_sequence(v_, &type, nullptr));
    return type;
  }
  size_t sequence_length() const {
    require_values("OwnedValue::sequence_length");
    size_t n = 0;
    check(host().value_sequence(v_, nullptr, &n));
    return n;
  }
  Tensor element(size_t k) const {
    require_values("OwnedValue::element");
    EphostTensorView view{};
    check(host().value_sequence_element(v_, k, &view));
    return Tensor(view);
  }
  OwnedValue element_value(size_t k) const {
    require_values("OwnedValue::element_value");
    EphostValue* v = nullptr;
    check(host().value_sequence_element_value(v_, k, &v));
    return OwnedValue(v);
  }

 private:
  EphostValue* v_;
};

// A sequence input of a kernel (valid during compute).
class SequenceInput {
 public:
  SequenceInput(EphostKernelContext* c, size_t index) : c_(c), index_(index) {
    check(host().kernel_input_sequence(c_, index_, &elem_type_, &length_));
  }
  int32_t elem_type() const { return elem_type_; }
  size_t size() const { return length_; }
  Tensor element(size_t k) const {
    EphostTensorView view{};
    check(host().kernel_input_sequence_element(c_, index_, k, &view));
    return Tensor(view);
  }

 private:
  EphostKernelContext* c_;
  size_t index_;
  int32_t elem_type_ = EPHOST_ELEMENT_UNDEFINED;
  size_t length_ = 0;
};

class KernelContext {
 public:
  explicit KernelContext(EphostKernelContext* c) : c_(c) {}
  EphostKernelContext* get() const { return c_; }
  size_t num_inputs() const { return host().kernel_num_inputs(c_); }
  // Input i; an absent optional input (or i past the end) gives a Tensor with present() == false.
  // Throws for a sequence or none input (see input_kind).
  Tensor input(size_t i) const {
    EphostTensorView view{EPHOST_ELEMENT_UNDEFINED, 0, nullptr, nullptr};
    if (i >= num_inputs()) return Tensor(view);
    check(host().kernel_input(c_, i, &view));
    return Tensor(view);
  }
  // Run-time kind of input i: TENSOR, SEQUENCE, NONE; UNDEFINED when absent. Always TENSOR or
  // UNDEFINED against an ABI 1 host.
  int32_t input_kind(size_t i) const {
    if (host_has_values()) return host().kernel_input_kind(c_, i);
    return input(i).present() ? EPHOST_VALUE_TENSOR : EPHOST_VALUE_UNDEFINED;
  }
  // A sequence input (ABI 2).
  SequenceInput input_sequence(size_t i) const {
    require_values("KernelContext::input_sequence");
    return SequenceInput(c_, i);
  }
  // Input i (any kind) as a host value, to hand to a subgraph or an output without copying (ABI 2).
  // Release it before compute returns.
  OwnedValue input_value(size_t i) const {
    require_values("KernelContext::input_value");
    EphostValue* v = nullptr;
    check(host().kernel_input_value(c_, i, &v));
    return OwnedValue(v);
  }
  size_t num_outputs() const { return host().kernel_num_outputs(c_); }
  // Allocates output i. For types C++ cannot tell apart (float16 and bfloat16 bits in uint16_t,
  // bool vs uint8_t) pass the element type explicitly.
  void* output_raw(size_t i, int32_t elem_type, const std::vector<int64_t>& shape) {
    void* data = nullptr;
    check(host().kernel_output(c_, i, elem_type, shape.data(), shape.size(), &data));
    return data;
  }
  template <typename T>
  T* output(size_t i, const std::vector<int64_t>& shape, int32_t elem_type = element_type_of<T>()) {
    return static_cast<T*>(output_raw(i, elem_type, shape));
  }
  const char* output_string(size_t i, const std::string& s) {
    const char* out = nullptr;
    check(host().kernel_output_string(c_, i, s.data(), s.size(), &out));
    return out;
  }
  // ABI 2 outputs. A sequence output: declare it, then write each element once (allocating it, or
  // from a host value without copying).
  void output_sequence(size_t i, int32_t elem_type, size_t length) {
    require_values("KernelContext::output_sequence");
    check(host().kernel_output_sequence(c_, i, elem_type, length));
  }
  void* output_sequence_element_raw(size_t i, size_t k, const std::vector<int64_t>& shape) {
    void* data = nullptr;
    check(host().kernel_output_sequence_element(c_, i, k, shape.data(), shape.size(), &data));
    return data;
  }
  const char* output_sequence_element_string(size_t i, size_t k, const std::string& s) {
    const char* out = nullptr;
    check(host().kernel_output_sequence_element_string(c_, i, k, s.data(), s.size(), &out));
    return out;
  }
  // Element k of sequence output i := `value` (a tensor, position 0) or element `position` of it (a sequence).
  void set_output_sequence_element(size_t i, size_t k, const OwnedValue& value, size_t position = 0) {
    check(host().kernel_output_sequence_element_value(c_, i, k, value.get(), position));
  }
  // Output i := an empty optional.
  void output_none(size_t i) {
    require_values("KernelContext::output_none");
    check(host().kernel_output_none(c_, i));
  }
  // Output i := `value` (any kind), without copying.
  void set_output(size_t i, const OwnedValue& value) {
    require_values("KernelContext::set_output");
    check(host().kernel_output_value(c_, i, value.get()));
  }
  int threads() const { return host().kernel_num_threads(c_); }
  std::vector<OwnedValue> run_subgraph(const char* attribute, const std::vector<EphostTensorView>& inputs,
                                       size_t num_outputs) {
    std::vector<EphostValue*> raw(num_outputs, nullptr);
    check(host().kernel_run_subgraph(c_, attribute, inputs.data(), inputs.size(), raw.data(), num_outputs));
    std::vector<OwnedValue> out;
    out.reserve(num_outputs);
    for (auto* v : raw) out.emplace_back(v);
    return out;
  }
  // run_subgraph with inputs and outputs of any kind (ABI 2). The inputs stay owned by the caller.
  std::vector<OwnedValue> run_subgraph_values(const char* attribute, const std::vector<const OwnedValue*>& inputs,
                                              size_t num_outputs) {
    require_values("KernelContext::run_subgraph_values");
    std::vector<const EphostValue*> in;
    in.reserve(inputs.size());
    for (const OwnedValue* v : inputs) in.push_back(v ? v->get() : nullptr);
    std::vector<EphostValue*> raw(num_outputs, nullptr);
    check(host().kernel_run_subgraph_values(c_, attribute, in.data(), in.size(), raw.data(), num_outputs));
    std::vector<OwnedValue> out;
    out.reserve(num_outputs);
    for (auto* v : raw) out.emplace_back(v);
    return out;
  }

 private:
  EphostKernelContext* c_;
};

// ---- what a plugin implements -------------------------------------------------------------------

// A node's kernel. compute() may run concurrently from several threads: keep it const in spirit.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void compute(KernelContext& context) = 0;
};

// A compiled fused group. State is per session: create_state once, compute per run.
class CompiledGroup {
 public:
  virtual ~CompiledGroup() = default;
  virtual void* create_state() { return nullptr; }
  virtual void release_state(void*) {}
  virtual void compute(void* state, KernelContext& context) = 0;
};

using Options = std::vector<std::pair<std::string, std::string>>;

inline std::string option(const Options& options, const std::string& key, const std::string& def) {
  for (const auto& kv : options)
    if (kv.first == key) return kv.second;
  return def;
}

class Provider {
 public:
  virtual ~Provider() = default;
  virtual void get_capability(const Graph& graph, Capability& capability) = 0;
  virtual std::unique_ptr<Kernel> create_kernel(const Node& node) {
    fail(EPHOST_NOT_IMPLEMENTED, "provider has no kernel for node '" + node.name() + "'");
  }
  virtual std::unique_ptr<CompiledGroup> compile(const Graph& group, const std::string& fused_name) {
    (void)group;
    fail(EPHOST_NOT_IMPLEMENTED, "provider cannot compile fused group '" + fused_name + "'");
  }
  virtual void on_run_start() {}
  virtual void on_run_end() {}
};

// ---- EPContext: caching compiled groups -----------------------------------------------------------

// Where emit_context writes one compiled group: the bytes of its context, appended piece by piece, and
// attributes of its EPContext node. Valid during emit_context only.
class ContextSink {
 public:
  explicit ContextSink(EphostContextSink* s) : s_(s) {}
  // Appends `size` bytes (copied). Pieces are concatenated in call order, and judge_context /
  // load_context later receive exactly that concatenation. The host stores each distinct piece once,
  // so handing every weight tensor as its own piece deduplicates weights across partitions and across
  // the sessions of a weight-sharing group.
  void append(const void* data, size_t size) { check(host().context_set_blob(s_, data, size)); }
  void append(const std::vector<uint8_t>& bytes) { append(bytes.data(), bytes.size()); }
  // Sets "ep_sdk_version", "hardware_architecture", "notes" (strings) or "max_size" (a decimal
  // integer). The host fills the first two from the Description when they are not set.
  void set_attribute(const std::string& name, const std::string& value) {
    check(host().context_set_attribute(s_, name.c_str(), value.c_str()));
  }

 private:
  EphostContextSink* s_;
};

// A provider's verdict on a context before it is loaded, with the field that decided. The reason is
// what the user reads in the INVALID_GRAPH diagnostic: name the field and both values.
struct ContextJudgement {
  EphostContextVerdict verdict = EPHOST_CONTEXT_OPTIMAL;
  std::string reason;

  static ContextJudgement optimal() { return {EPHOST_CONTEXT_OPTIMAL, {}}; }
  static ContextJudgement prefer_recompile(std::string why) { return {EPHOST_CONTEXT_PREFER_RECOMPILE, std::move(why)}; }
  static ContextJudgement unsupported(std::string why) { return {EPHOST_CONTEXT_UNSUPPORTED, std::move(why)}; }
  static ContextJudgement not_mine(std::string why) { return {EPHOST_CONTEXT_NOT_MINE, std::move(why)}; }
};

// A provider whose compiled groups can be cached as EPContext nodes. Deriving from it (and returning
// std::unique_ptr<YourProvider> from the plugin's Create) is what makes EPHOST_DEFINE_PLUGIN fill the
// table's context_emit / context_judge / context_load; every other plugin keeps them NULL, so the host
// knows it cannot cache their groups.
class ContextProvider : public Provider {
 public:
  // Session option ep.context_enable=1: called once per group this provider compiled, after all
  // compiles, with the fused_name compile received. Write the compiled program into `sink`.
  virtual void emit_context(const std::string& fused_name, ContextSink& sink) = 0;
  // Decides whether the context `blob` (what emit_context wrote; valid during the call) can be loaded.
  // `context_node` is the EPContext node (attributes "ep_sdk_version", "hardware_architecture", ...).
  // Must never crash on arbitrary bytes: check sizes before reading.
  virtual ContextJudgement judge_context(const Node& context_node, const uint8_t* blob, size_t size) = 0;
  // Turns a context judged usable into a runnable group (copy what it needs: `blob` and `context_node`
  // are valid during the call only). Its compute receives the EPContext node's inputs and outputs.
  virtual std::unique_ptr<CompiledGroup> load_context(const Node& context_node, const uint8_t* blob,
                                                      size_t size) = 0;
};

struct Description {
  std::string name;
  std::string vendor;
  std::string version = "0.1.0";
  EphostDeviceType device_type = EPHOST_DEVICE_CPU;
  std::vector<std::string> context_source_keys;
  std::string sdk_version;
  std::string hardware_architecture;
  std::string driver_version;
  int32_t default_priority = 0;
};

// ---- generated glue -------------------------------------------------------------------------------

namespace detail {

// Strings handed to the host must outlive the library's use, so the description is kept here.
struct DescriptionStore {
  Description d;
  std::vector<const char*> keys;
};
inline DescriptionStore& description_store() {
  static DescriptionStore s;
  return s;
}

struct CompiledBox {
  std::unique_ptr<CompiledGroup> group;
};

// What the host holds as an EphostProvider*: the plugin's provider and the glue's state for it.
struct ProviderBox {
  std::unique_ptr<Provider> provider;
  ContextProvider* contexts = nullptr;  // the same object, when it caches contexts
  std::string judge_reason;             // context_judge's out_reason: valid until the next call
};

// The provider type a Create callable makes (it returns std::unique_ptr<T>).
template <typename Create>
using created_provider_t = typename std::invoke_result_t<Create&, const Options&>::element_type;

template <typename Describe, typename Create>
struct PluginGlue {
  static Describe& describe_fn() {
    static Describe fn;
    return fn;
  }
  static Create& create_fn() {
    static Create fn;
    return fn;
  }
  // EPContext slots are filled only for providers that implement them (see ContextProvider).
  static constexpr bool kCachesContexts = std::is_base_of_v<ContextProvider, created_provider_t<Create>>;

  static ProviderBox* box(EphostProvider* p) { return reinterpret_cast<ProviderBox*>(p); }
  static Provider* provider(EphostProvider* p) { return box(p)->provider.get(); }

  static EphostStatus* describe(EphostPluginInfo* info) {
    return guard([&] {
      auto& store = description_store();
      store.d = describe_fn()();
      store.keys.clear();
      for (const auto& k : store.d.context_source_keys) store.keys.push_back(k.c_str());
      auto opt = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
      info->name = store.d.name.c_str();
      info->vendor = store.d.vendor.c_str();
      info->version = store.d.version.c_str();
      info->device_type = store.d.device_type;
      info->context_source_keys = store.keys.empty() ? nullptr : store.keys.data();
      info->num_context_source_keys = store.keys.size();
      info->sdk_version = opt(store.d.sdk_version);
      info->hardware_architecture = opt(store.d.hardware_architecture);
      info->driver_version = opt(store.d.driver_version);
      info->default_priority = store.d.default_priority;
    });
  }
  static EphostStatus* provider_create(const char* const* keys, const char* const* values, size_t n,
                                       EphostProvider** out) {
    return guard([&] {
      Options options;
      for (size_t i = 0; i < n; ++i) options.emplace_back(keys[i], values[i]);
      auto b = std::make_unique<ProviderBox>();
      b->provider = create_fn()(options);
      if (!b->provider) fail(EPHOST_FAIL, "the plugin's Create returned no provider");
      b->contexts = dynamic_cast<ContextProvider*>(b->provider.get());
      // The table was built from Create's return type; a ContextProvider hidden behind
      // std::unique_ptr<Provider> would silently never be cached, so say how to fix it instead.
      if (b->contexts != nullptr && !kCachesContexts)
        fail(EPHOST_FAIL, "the provider is a ContextProvider but the plugin's Create returns std::unique_ptr<Provider>: "
                          "return std::unique_ptr<YourProvider> so that EPHOST_DEFINE_PLUGIN fills the EPContext slots");
      *out = reinterpret_cast<EphostProvider*>(b.release());
    });
  }
  static void provider_release(EphostProvider* p) { delete box(p); }
  static EphostStatus* get_capability(EphostProvider* p, const EphostGraph* g, EphostCapability* c) {
    return guard([&] {
      Capability cap(c);
      provider(p)->get_capability(Graph(g), cap);
    });
  }
  static EphostStatus* kernel_create(EphostProvider* p, const EphostNode* node, EphostKernel** out) {
    return guard([&] {
      std::unique_ptr<Kernel> k = provider(p)->create_kernel(Node(node));
      *out = reinterpret_cast<EphostKernel*>(k.release());
    });
  }
  static EphostStatus* kernel_compute(EphostKernel* k, EphostKernelContext* c) {
    return guard([&] {
      KernelContext ctx(c);
      reinterpret_cast<Kernel*>(k)->compute(ctx);
    });
  }
  static void kernel_release(EphostKernel* k) { delete reinterpret_cast<Kernel*>(k); }

  static EphostStatus* compiled_create_state(void* user, void** out_state) {
    return guard([&] { *out_state = static_cast<CompiledBox*>(user)->group->create_state(); });
  }
  static EphostStatus* compiled_compute(void* user, void* state, EphostKernelContext* c) {
    return guard([&] {
      KernelContext ctx(c);
      static_cast<CompiledBox*>(user)->group->compute(state, ctx);
    });
  }
  static void compiled_release_state(void* user, void* state) {
    try {
      static_cast<CompiledBox*>(user)->group->release_state(state);
    } catch (...) {
    }
  }
  static void compiled_release(void* user) { delete static_cast<CompiledBox*>(user); }
  // Hands a compiled group to the host (compile and context_load).
  static void export_group(std::unique_ptr<CompiledGroup> group, const std::string& what, EphostComputeInfo* out) {
    if (!group) fail(EPHOST_EP_FAIL, what + " returned nothing");
    auto compiled = std::make_unique<CompiledBox>();
    compiled->group = std::move(group);
    out->user = compiled.release();
    out->create_state = &compiled_create_state;
    out->compute = &compiled_compute;
    out->release_state = &compiled_release_state;
    out->release = &compiled_release;
  }
  static EphostStatus* compile(EphostProvider* p, const EphostGraph* g, const char* name, EphostComputeInfo* out) {
    return guard([&] { export_group(provider(p)->compile(Graph(g), name), std::string("compile of ") + name, out); });
  }
  static EphostStatus* on_run_start(EphostProvider* p) { return guard([&] { provider(p)->on_run_start(); }); }
  static EphostStatus* on_run_end(EphostProvider* p) { return guard([&] { provider(p)->on_run_end(); }); }

  static EphostStatus* context_emit(EphostProvider* p, const char* fused_name, EphostContextSink* s) {
    return guard([&] {
      ContextSink sink(s);
      box(p)->contexts->emit_context(fused_name, sink);
    });
  }
  static EphostStatus* context_judge(EphostProvider* p, const EphostNode* node, const void* blob, size_t size,
                                     EphostContextVerdict* out_verdict, const char** out_reason) {
    return guard([&] {
      ProviderBox* b = box(p);
      ContextJudgement j = b->contexts->judge_context(Node(node), static_cast<const uint8_t*>(blob), size);
      b->judge_reason = std::move(j.reason);
      *out_verdict = j.verdict;
      *out_reason = b->judge_reason.empty() ? nullptr : b->judge_reason.c_str();
    });
  }
  static EphostStatus* context_load(EphostProvider* p, const EphostNode* node, const void* blob, size_t size,
                                    EphostComputeInfo* out) {
    return guard([&] {
      Node context_node(node);
      export_group(box(p)->contexts->load_context(context_node, static_cast<const uint8_t*>(blob), size),
                   "load_context of '" + context_node.name() + "'", out);
    });
  }

  // The table for ABI `version` (the functions are the same; the table says which ABI it speaks).
  static const EphostPlugin* table(uint32_t version) {
    static const EphostPlugin tables[] = {make_table(1), make_table(2)};
    static_assert(EPHOST_PLUGIN_ABI_VERSION == 2, "add a table for the new ABI version");
    return &tables[version - 1];
  }
  static EphostPlugin make_table(uint32_t version) {
    EphostPlugin t{};
    t.struct_size = sizeof(EphostPlugin);
    t.abi_version = version;
    t.describe = &describe;
    t.provider_create = &provider_create;
    t.provider_release = &provider_release;
    t.get_capability = &get_capability;
    t.kernel_create = &kernel_create;
    t.kernel_compute = &kernel_compute;
    t.kernel_release = &kernel_release;
    t.compile = &compile;
    t.on_run_start = &on_run_start;
    t.on_run_end = &on_run_end;
    if constexpr (kCachesContexts) {
      t.context_emit = &context_emit;
      t.context_judge = &context_judge;
      t.context_load = &context_load;
    }
    return t;
  }

  static EphostStatus* negotiate(EphostPluginNegotiation* n) {
    if (n == nullptr || n->host_api == nullptr) return nullptr;  // cannot even report
    host_api_slot() = n->host_api;
    // Speak the newest version both sides know; refuse when the ranges do not meet.
    uint32_t version = n->host_max_abi_version < EPHOST_PLUGIN_ABI_VERSION ? n->host_max_abi_version
                                                                            : EPHOST_PLUGIN_ABI_VERSION;
    if (version < EPHOST_PLUGIN_ABI_MIN_VERSION || version < n->host_min_abi_version) {
      std::string msg = "plugin speaks plugin ABI " + std::to_string(EPHOST_PLUGIN_ABI_MIN_VERSION) + ".." +
                        std::to_string(EPHOST_PLUGIN_ABI_VERSION) + "; the host offers " +
                        std::to_string(n->host_min_abi_version) + ".." + std::to_string(n->host_max_abi_version);
      return n->host_api->status_create(EPHOST_NOT_IMPLEMENTED, msg.c_str());
    }
    n->plugin_abi_version = version;
    n->plugin = table(version);
    return nullptr;
  }
};

}  // namespace detail
}  // namespace ephost::sdk

// Defines the plugin's entry point.
//   ENTRY     the symbol name: ephost_plugin_negotiate for a loadable plugin.
//   DESCRIBE  a default-constructible callable type: () -> ephost::sdk::Description
//   CREATE    a default-constructible callable type: (const Options&) -> std::unique_ptr<P>, P derived
//             from Provider; the EPContext slots are filled when P derives from ContextProvider
#define EPHOST_DEFINE_PLUGIN_ENTRY(ENTRY, DESCRIBE, CREATE)                                       \
  extern "C" EphostStatus* ENTRY(EphostPluginNegotiation* negotiation) {                          \
    return ::ephost::sdk::detail::PluginGlue<DESCRIBE, CREATE>::negotiate(negotiation);           \
  }

// A loadable plugin library: exports ephost_plugin_negotiate.
#define EPHOST_DEFINE_PLUGIN(DESCRIBE, CREATE)                                                    \
  extern "C" EPHOST_EXPORT EphostStatus* ephost_plugin_negotiate(EphostPluginNegotiation* negotiation); \
  EPHOST_DEFINE_PLUGIN_ENTRY(ephost_plugin_negotiate, DESCRIBE, CREATE)
