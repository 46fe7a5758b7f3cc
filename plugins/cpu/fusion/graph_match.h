// Pattern fusion inside the CPU plugin: small helpers over the SDK's graph view, and the interface
// every fused pattern implements.
//
// get_capability asks each pattern, in priority order, whether a group starts at each node (its
// anchor); a match is claimed as one fused group, so the host hands the group to compile(). The
// provider remembers which pattern and anchor claimed which nodes; compile() re-runs that pattern's
// match from the anchor (a pure function of the graph) and builds the group from it. Every fused
// group computes what its nodes compute, up to float rounding (tests/integration/cpu_fusion_test.cpp
// compares each against the unfused graph).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel_base.h"

namespace ephost::cpu::fusion {

// Whether a node may still join a group (not claimed by an earlier match).
using Available = std::function<bool(const sdk::Node&)>;

// A default-domain node of this op type whose first output is present.
bool is_op(const sdk::Node& n, const char* op);
bool is_float(const sdk::Value& v);
// The only consumer of v, when it has exactly one and is not a graph output; else an invalid node.
sdk::Node sole_consumer(const sdk::Value& v);
// Whether `reader` is v's only consumer (and v no graph output). Asks sole_consumer's answer for its id only
// when it is a node: a value with several readers, or a graph output, has none.
bool read_only_by(const sdk::Value& v, const sdk::Node& reader);
// The consumers of v (empty when v is a graph output: it must then be produced as is).
std::vector<sdk::Node> inner_consumers(const sdk::Value& v);
// A float constant with exactly one element.
bool scalar_constant(const sdk::Value& v, float* out);
// Index (0 or 1) of the input of binary node n that is not named `name`, or -1 when both or neither are.
int other_input(const sdk::Node& n, const std::string& name);
// Axes of a reduction: the `axes` attribute, or (opset 18) its constant second input; `ok` false when
// they are given at run time.
std::vector<int64_t> reduce_axes(const sdk::Node& n, bool* ok);
// Static dims of a value (-1 for unknown), empty when the rank is unknown.
std::vector<int64_t> dims_of(const sdk::Value& v);
// Index of the group input / output named like v, or -1.
int group_input(const sdk::Graph& group, const std::string& name);
int group_output(const sdk::Graph& group, const std::string& name);

// An activation that oneDNN applies as a post-op and the plugin applies to a range.
struct Activation {
  enum Kind { kNone, kRelu, kLeakyRelu, kSigmoid, kTanh, kClip, kHardSigmoid, kHardSwish, kSwish, kGeluErf, kGeluTanh,
              kLinear };
  Kind kind = kNone;
  float alpha = 0.f, beta = 0.f;  // LeakyRelu slope; Clip bounds; HardSigmoid alpha/beta; Linear a*x+b
};

// The activation one node computes from its input 0 (the unary ops match_activation names), or false.
bool unary_activation(const sdk::Node& n, Activation* a);
// An activation that starts at v: a unary node (Relu, LeakyRelu, Sigmoid, Tanh, Clip with constant
// bounds, HardSigmoid, HardSwish, Gelu), or a decomposed form exporters write: SiLU as
// Mul(v, Sigmoid(v)), GELU as Div(v, sqrt 2) -> Erf -> Add 1 -> Mul v -> Mul 0.5 (in either order of the
// two Muls), HardSwish as v * Clip(v + 3, 0, 6) / 6. Appends its nodes and sets *out to its result.
bool match_activation(const sdk::Value& v, const Available& ok, Activation* act, std::vector<sdk::Node>* nodes,
                      sdk::Value* out);
// A scalar affine step on v (Mul/Div/Add/Sub by a scalar constant) as a Linear activation.
bool match_scalar_affine(const sdk::Value& v, const Available& ok, Activation* act, std::vector<sdk::Node>* nodes,
                         sdk::Value* out);
// Applies an activation in place (math/vec.h loops where there is one), or from x into y.
void apply_activation(const Activation& a, float* x, int64_t n);
void apply_activation(const Activation& a, const float* x, float* y, int64_t n);

class Fusion {
 public:
  virtual ~Fusion() = default;
  virtual const char* name() const = 0;
  // The nodes of the group anchored at `anchor`, or none.
  virtual std::vector<sdk::Node> match(const sdk::Node& anchor, const Available& ok) const = 0;
  // The compiled group for `group`, whose nodes are those match(anchor) returned.
  virtual std::unique_ptr<sdk::CompiledGroup> compile(const sdk::Node& anchor, const sdk::Graph& group,
                                                      const KernelConfig& config) const = 0;
};

// Every pattern, in the order get_capability tries them.
const std::vector<const Fusion*>& fusions();
// The quantized-weight patterns (int8 QDQ, and block-quantized int4 weights), tried before the
// convolutional regions and the float patterns (which would take their Conv / MatMul: the quantized
// weights fold to float constants).
const std::vector<const Fusion*>& int8_fusions();

// The patterns (defined in their own files).
const Fusion& matmul_fusion();
const Fusion& layernorm_fusion();
const Fusion& gelu_fusion();
const Fusion& attention_fusion();
const Fusion& qdq_matmul_fusion();  // qdq_matmul.cpp: DQ -> MatMul/Gemm -> Q in int8
const Fusion& qdq_activation_matmul_fusion();  // qdq_activation_matmul.cpp: DQ, DQ -> MatMul -> Q, both operands activations
const Fusion& qdq_conv_fusion();    // qdq_conv.cpp: DQ -> Conv -> Q in int8
const Fusion& qdq_unary_fusion();   // qdq_unary.cpp: DQ -> activation / elementwise steps -> Q as a table
const Fusion& qdq_binary_fusion();  // qdq_binary.cpp: DQ, DQ -> Add/Mul -> Q in one pass
const Fusion& qdq_max_pool_fusion();  // qdq_pool.cpp: DQ -> MaxPool -> Q on the bytes
const Fusion& qdq_softmax_fusion();   // qdq_softmax.cpp: DQ -> [scale] -> [+ mask] -> Softmax -> Q by rows
const Fusion& qdq_layernorm_fusion();  // qdq_layernorm.cpp: DQ -> LayerNorm steps (Q/DQ between) -> Q by rows
const Fusion& qdq_view_fusion();      // qdq_view.cpp: DQ -> Reshape/Transpose/Slices -> Q (same parameters) on the bytes
const Fusion& q4_matmul_fusion();   // q4_matmul.cpp: int4/uint4 block DQ -> MatMul/Gemm [-> Add]

}  // namespace ephost::cpu::fusion
