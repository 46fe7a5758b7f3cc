// The node chain of a layer normalisation over the last axis, as exporters write it before opset 17:
//
//   m = ReduceMean(x, [-1]); d = x - m; v = ReduceMean(d^2, [-1]); y = d / Sqrt(v + eps) [* gamma] [+ beta]
//
// found from its first ReduceMean. One matcher for the float fusion (layernorm_fusion.cpp), where each
// step reads the one before it directly, and the int8 one (qdq_layernorm.cpp), where a static quantizer
// may put a QuantizeLinear -> DequantizeLinear pair after any step: what lies between two steps is the
// caller's LayerNormLinks.
#pragma once

#include <vector>

#include "graph_match.h"

namespace ephost::cpu::fusion {

// The steps, named by the value they produce.
enum class LayerNormStep { kMean, kDifference, kSquare, kVariance, kShifted, kStd, kNorm, kScaled, kCount };

// How one step reaches the next.
class LayerNormLinks {
 public:
  virtual ~LayerNormLinks() = default;
  // The node of type `op` that *v, the output of step `after`, feeds alone: directly, or through what
  // the links allow between steps (whose nodes go to *nodes, *v then being the value the node reads).
  // An invalid node otherwise. May record what it passed for `after`.
  virtual sdk::Node next(sdk::Value* v, const char* op, LayerNormStep after, const Available& ok,
                         std::vector<sdk::Node>* nodes) = 0;
  // d = x - m has one reader where two (the square and the division) were expected: whether the links
  // allow a step between (its nodes to *nodes, *d moved past it).
  virtual bool pass_difference(sdk::Value* d, const Available& ok, std::vector<sdk::Node>* nodes) = 0;
  // Forgets what next() recorded for `after` (an optional step that did not follow).
  virtual void forget(LayerNormStep after) = 0;
  // Whether v may be gamma or beta.
  virtual bool row_constant(const sdk::Value& v) const = 0;
};

struct LayerNormChain {
  float eps = 0.f;
  sdk::Value gamma, beta;  // invalid when absent
  sdk::Value out;          // the last step's output (y)
  std::vector<sdk::Node> nodes;  // from the first ReduceMean on, with the links' nodes
};

// ReduceMean over the last axis only, keeping it.
bool last_axis_mean(const sdk::Node& n, int64_t rank);

// The chain from `mean`, a last-axis ReduceMean of x, every node taken by `ok`. gamma and beta are each
// optional (beta may come without gamma).
bool match_layernorm_chain(const sdk::Value& x, const sdk::Node& mean, const Available& ok, LayerNormLinks& links,
                           LayerNormChain* chain);

}  // namespace ephost::cpu::fusion
