#pragma once

// The program of a convolutional region: its steps in run order (primitives with their fused post-ops,
// pools, affines, elementwise steps, Concat, Resize) over numbered values, built once per compiled group
// from its nodes. cnn_region_run.cpp plans and runs it per set of input shapes.

#if defined(EPHOST_WITH_DNNL)

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph_match.h"
#include "op_span_label.h"
#include "math/conv.h"
#include "math/dnnl_util.h"
#include "math/pool.h"
#include "math/resize.h"
#include "math/vec.h"

namespace ephost::cpu::fusion::region {

using dnnl::memory;

enum class Op { kConv, kDeconv, kMaxPool, kAvgPool, kGlobalAvg, kGlobalMax, kUnary, kAffine, kBinary, kConcat, kResize };

// A constant operand of a binary step: its dims left-padded to rank 4 (NCHW) and its values in NHWC
// order over those dims.
struct Constant4 {
  Shape dims;
  std::vector<float> nhwc;
};

struct Step {
  Op op;
  std::string node;               // the ONNX node it came from (errors)
  OpSpanLabel label;              // every ONNX node it covers, absorbed ones included (profile spans)
  std::vector<int> in;            // activation values read
  int out = -1;
  // Conv / ConvTranspose
  math::ConvParams conv;
  Shape w_shape;
  // The ONNX weights (the constant initializer): null once the region gave them back to the host
  // (plugin ABI 5) after packing; weights_of asks for them again.
  const float* w = nullptr;
  sdk::Value w_value;             // the weights' value, to say done with it or to ask again
  bool w_asked_again = false;     // asked for after they were given back: kept from then on
  int64_t w_count = 0;
  std::vector<float> w_mul;       // per output channel factor folded affines add (empty: none)
  std::vector<float> bias;        // per output channel, folded affines included
  std::vector<Activation> acts;   // post-ops after the op
  int residual = -1;              // value added after `acts` (a binary add post-op)
  std::vector<Activation> acts2;  // post-ops after the residual
  // pools
  math::PoolParams pool;
  bool count_include_pad = false;
  // per-channel affine: y = x * scale[c] + shift[c]
  std::vector<float> scale, shift;
  // binary
  math::BinOp bin = math::BinOp::kAdd;
  std::shared_ptr<Constant4> constant;  // one operand constant (then in has one value)
  bool constant_first = false;
  // resize
  math::ResizeParams resize;
  std::vector<float> scales;  // 4 values, or empty with sizes
  Shape sizes;
  // convolution weights in the primitive's layout, by layout (shared by the plans of every shape)
  std::mutex mu;
  std::vector<std::pair<memory::desc, math::WeightsMemory>> packed;
};

struct Value {
  std::string name;
  int producer = -1;      // step, or -1 for a region input
  int group_input = -1;   // for region inputs
  int group_output = -1;  // when the group hands it out
  int last_use = -1;      // last step reading it
  int consumers = 0;      // steps reading it
};

// The op a step runs, for logs and errors.
const char* op_name(Op op);

// A step's weights with the folded per-output-channel factors applied (ONNX layout), for packing.
std::vector<float> folded_weights(const Step& st);
// A conv step's ONNX weights, asked from the host again when the region gave them back (a layout the
// compile did not pack: a run on another thread count). Under st.mu.
const float* weights_of(Step& st);
// Says the region is done with a conv step's ONNX weights (every shape it runs with is packed), so
// that the host may free them (plugin ABI 5); nothing against an older host. Under st.mu.
void give_weights_back(Step& st);

// Built from a group of nodes find_cnn_regions could return; refuses (EPHOST_NOT_IMPLEMENTED) any other.
class Program {
 public:
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<Value> values;
  std::string name;

  int value(const std::string& n) const {
    auto it = index_.find(n);
    return it == index_.end() ? -1 : it->second;
  }
  int add_value(const std::string& n, int producer);

  void build(const sdk::Graph& group);

  std::string describe() const;

 private:
  std::unordered_map<std::string, int> index_;

  [[noreturn]] void unsupported(const std::string& what) const;

  int input_value(const sdk::Node& node, size_t i);

  Step& add_step(Op op, const sdk::Node& node);

  void add_node(const sdk::Node& node);

  void count_uses();

  // The step that alone reads `v`, when v is not handed out.
  int sole_reader(int v) const;

  // Moves step `from`'s output onto step `into` and retires `from`.
  void absorb(Step& into, Step& from);

  // Folds per-channel affines into convolution weights, and activations and residual adds into
  // convolution post-ops.
  void fuse();

  void liveness();
};

}  // namespace ephost::cpu::fusion::region

#endif  // EPHOST_WITH_DNNL
