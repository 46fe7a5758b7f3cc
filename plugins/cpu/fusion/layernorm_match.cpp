#include "layernorm_match.h"

#include "constant_lookup.h"

namespace ephost::cpu::fusion {

namespace {

// An optional step of type `op` after `v` (the output of step `after`) reading the row constant next to
// it: appends its nodes and moves *v on, or leaves everything as it was.
sdk::Node optional_row_step(sdk::Value* v, const char* op, LayerNormStep after, const Available& ok,
                            LayerNormLinks& links, std::vector<sdk::Node>* nodes, sdk::Value* constant) {
  std::vector<sdk::Node> between;
  sdk::Value at = *v;
  const sdk::Node n = links.next(&at, op, after, ok, &between);
  const int k = n.valid() ? other_input(n, at.name()) : -1;
  if (k < 0 || !links.row_constant(n.input(static_cast<size_t>(k))) || !is_float(n.output(0))) {
    links.forget(after);
    return sdk::Node();
  }
  *constant = n.input(static_cast<size_t>(k));
  nodes->insert(nodes->end(), between.begin(), between.end());
  nodes->push_back(n);
  *v = n.output(0);
  return n;
}

}  // namespace

bool last_axis_mean(const sdk::Node& n, int64_t rank) {
  if (!is_op(n, "ReduceMean") || n.attr_int("keepdims", 1) != 1 || !is_float(n.output(0))) return false;
  bool ok = false;
  const std::vector<int64_t> axes = reduce_axes(n, &ok);
  return ok && axes.size() == 1 && (axes[0] == -1 || (rank > 0 && axes[0] == rank - 1));
}

bool match_layernorm_chain(const sdk::Value& x, const sdk::Node& mean, const Available& ok, LayerNormLinks& links,
                           LayerNormChain* chain) {
  using Step = LayerNormStep;
  const int64_t rank = x.rank();
  if (!last_axis_mean(mean, rank) || !ok(mean)) return false;
  std::vector<sdk::Node>& nodes = chain->nodes;
  nodes = {mean};
  sdk::Value m = mean.output(0);
  const sdk::Node sub = links.next(&m, "Sub", Step::kMean, ok, &nodes);
  if (!sub.valid() || sub.input(0).name() != x.name() || sub.input(1).name() != m.name() || !is_float(sub.output(0)))
    return false;
  nodes.push_back(sub);
  // d feeds the square and the division.
  sdk::Value d = sub.output(0);
  std::vector<sdk::Node> dc = inner_consumers(d);
  if (dc.size() == 1) {
    if (!links.pass_difference(&d, ok, &nodes)) return false;
    dc = inner_consumers(d);
  }
  if (dc.size() != 2) return false;
  const size_t sq_at = is_op(dc[0], "Div") ? 1 : 0;
  const sdk::Node sq = dc[sq_at], div = dc[1 - sq_at];
  float two = 0.f;
  const bool pow2 = is_op(sq, "Pow") && sq.input(0).name() == d.name() && scalar_constant(sq.input(1), &two) && two == 2.f;
  const bool mul2 = is_op(sq, "Mul") && sq.input(0).name() == d.name() && sq.input(1).name() == d.name();
  if ((!pow2 && !mul2) || !ok(sq) || !is_float(sq.output(0))) return false;
  nodes.push_back(sq);
  sdk::Value v = sq.output(0);
  const sdk::Node rm2 = links.next(&v, "ReduceMean", Step::kSquare, ok, &nodes);
  if (!rm2.valid() || !last_axis_mean(rm2, rank)) return false;
  nodes.push_back(rm2);
  v = rm2.output(0);
  const sdk::Node add = links.next(&v, "Add", Step::kVariance, ok, &nodes);
  const int k = add.valid() ? other_input(add, v.name()) : -1;
  if (k < 0 || !scalar_constant(add.input(static_cast<size_t>(k)), &chain->eps) || !is_float(add.output(0))) return false;
  if (add.input(static_cast<size_t>(k)).rank() > 1) return false;  // a [1, 1] constant would widen the variance
  nodes.push_back(add);
  v = add.output(0);
  const sdk::Node sqrt = links.next(&v, "Sqrt", Step::kShifted, ok, &nodes);
  if (!sqrt.valid() || !is_float(sqrt.output(0))) return false;
  nodes.push_back(sqrt);
  v = sqrt.output(0);
  const sdk::Node div_found = links.next(&v, "Div", Step::kStd, ok, &nodes);
  if (!div_found.valid() || div_found.id() != div.id() || div.input(0).name() != d.name() ||
      div.input(1).name() != v.name() || !is_float(div.output(0)))
    return false;
  nodes.push_back(div);
  v = div.output(0);
  const bool scaled = optional_row_step(&v, "Mul", Step::kNorm, ok, links, &nodes, &chain->gamma).valid();
  optional_row_step(&v, "Add", scaled ? Step::kScaled : Step::kNorm, ok, links, &nodes, &chain->beta);
  chain->out = v;
  return true;
}

}  // namespace ephost::cpu::fusion
