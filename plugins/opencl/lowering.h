// ONNX nodes → the program's values and operations (program.h). One node at a time, in a topological
// order: constants (initializers and Constant nodes) are resolved, attributes checked and normalized,
// BatchNormalization folded into the convolution before it where it is that convolution's only reader.
//
// Everything the plugin cannot run is refused with ephost::sdk::Error(EPHOST_NOT_IMPLEMENTED, reason):
// get_capability lowers each node on its own (a probe) to decide what it claims, so claims and compiles
// apply the same rules.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "ephost/sdk/plugin.hpp"
#include "program.h"

namespace ephost_opencl {

class Lowering {
 public:
  explicit Lowering(Program& program) : p_(program) {}

  // A value the nodes read that is not a constant: a device tensor (float) or a host integer tensor.
  // Returns its index. Throws when its type or rank is not one the plugin runs.
  int32_t add_input(const ephost::sdk::Value& value);
  // Lowers `node`. Its inputs are inputs added before, results of nodes lowered before, or constants.
  void lower(const ephost::sdk::Node& node);
  // Values whose names are listed here are read outside the group: never folded away.
  void keep(const std::string& name) { kept_.insert(name); }
  // The index of the value named `name`; throws when there is none.
  int32_t find(const std::string& name) const;
  // Packs the convolution weights for the kernels. Call once, after the last node.
  void finish();

 private:
  using Node = ephost::sdk::Node;
  using Value = ephost::sdk::Value;

  int32_t value(const Value& v);
  int32_t input(const Node& node, size_t i);
  bool has_input(const Node& node, size_t i) const { return node.has_input(i); }
  int32_t constant_of(const Value& v);
  // The data of a constant operand (an initializer or a Constant node's value), read without making it a
  // value of the program; throws when `v` is not constant.
  ephost::sdk::Tensor constant_tensor(const Value& v) const;
  int32_t add_value(ValueDesc desc);
  // The value of output `i`: its static dims are the graph's, with what the graph does not know taken from
  // `inferred` (the lowering's own inference; its rank is used when the graph does not know the rank).
  int32_t output(const Node& node, size_t i, Placement placement, std::vector<int64_t> inferred, bool rank_inferred = true);
  int32_t add_op(OpKind kind, const Node& node, std::vector<int32_t> inputs, int32_t output, std::vector<int64_t> ints = {},
                 std::vector<float> floats = {});
  // A float constant value (a weight with a name and exact dims), and a weight only a kernel reads.
  int32_t add_weight(std::vector<float> data, std::vector<int64_t> dims, const std::string& name);
  int64_t new_weight(std::vector<float> data);
  int32_t add_host_constant(std::vector<int64_t> data, const std::string& name);
  const ValueDesc& desc(int32_t v) const { return p_.values[static_cast<size_t>(v)]; }
  bool is_device(int32_t v) const { return desc(v).placement == Placement::kDevice; }
  bool is_integer(int32_t v) const;
  bool is_float_constant(int32_t v) const;
  const std::vector<float>& float_data(int32_t v) const;
  const HostTensor& int_data(int32_t v) const;
  void require_device(const Node& node, int32_t v, size_t min_rank, size_t max_rank) const;
  void require_host_integer(const Node& node, int32_t v) const;
  void require_no_extra_outputs(const Node& node, size_t used) const;

  void conv(const Node& node, bool transpose);
  void batch_norm(const Node& node);
  void binary(const Node& node, BinaryOp op);
  void unary(const Node& node, UnaryOp op, std::vector<float> params = {});
  void clip(const Node& node);
  void pool(const Node& node, bool max);
  void global_pool(const Node& node, bool max);
  void resize(const Node& node);
  void concat(const Node& node);
  void view(const Node& node, ViewKind kind);
  void squeeze(const Node& node, bool unsqueeze);
  void transpose(const Node& node);
  void matmul(const Node& node);
  void gemm(const Node& node);
  void softmax(const Node& node);
  void shape(const Node& node);
  void cast(const Node& node);
  void slice(const Node& node);
  std::vector<int64_t> slice_dims(const std::vector<int32_t>& inputs) const;
  void gather(const Node& node);
  void constant(const Node& node);

  Program& p_;
  std::map<std::string, int32_t> names_;
  std::set<std::string> kept_;
  std::map<int32_t, int32_t> conv_of_;  // value -> the kConv op making it
};

// Output channels per work item of a convolution with `per_group` output channels per group.
int64_t conv_channel_block(int64_t per_group);

}  // namespace ephost_opencl
