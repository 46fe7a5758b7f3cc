#include "cnn_region.h"
#include "cnn_region_select.h"

#include <set>
#include <unordered_map>

#include "constant_lookup.h"
#include "convex_groups.h"
#include "graph_match.h"
#include "kernels/conv_attributes.h"

namespace ephost::cpu::fusion {

namespace region {

bool rank4(const sdk::Value& v) { return is_float(v) && v.rank() == 4; }

namespace {
bool activation_input(const sdk::Node& n, size_t i) {
  return n.has_input(i) && rank4(n.input(i)) && !is_constant(n.input(i));
}
bool float_constant(const sdk::Value& v) { return is_float(v) && is_constant(v); }

bool all_ones(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != 1) return false;
  return true;
}

// Resize that the region runs: nearest, on H and W only, scales or sizes constant.
bool region_resize(const sdk::Node& n) {
  if (n.opset() < 11 || n.attr_string("mode", "nearest") != "nearest") return false;
  const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  if (coord == "tf_crop_and_resize" || coord == "half_pixel_symmetric") return false;
  const std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  if (nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" && nearest != "ceil")
    return false;
  if (n.attr_int("antialias", 0) != 0 || n.has_attr("axes") ||
      n.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    return false;
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" && coord != "asymmetric" &&
      coord != "tf_half_pixel_for_nn")
    return false;
  const bool has_scales = n.has_input(2) && is_constant(n.input(2)) && constant_of(n.input(2)).size() > 0;
  const bool has_sizes = n.has_input(3) && is_constant(n.input(3)) && constant_of(n.input(3)).size() > 0;
  if (has_scales == has_sizes) return false;
  if (has_scales) {
    const sdk::Tensor s = constant_of(n.input(2));
    if (s.elem_type() != EPHOST_ELEMENT_FLOAT || s.size() != 4) return false;
    const float* p = s.data<float>();
    return p[0] == 1.f && p[1] == 1.f && p[2] > 0.f && p[3] > 0.f;
  }
  const sdk::Tensor s = constant_of(n.input(3));
  return s.elem_type() == EPHOST_ELEMENT_INT64 && s.size() == 4;
}

}  // namespace

bool cnn_eligible(const sdk::Node& n) {
  if (!n.valid()) return false;
  const std::string d = n.domain();
  if (!d.empty() && d != "ai.onnx") return false;
  if (n.num_outputs() < 1 || !n.has_output(0) || !rank4(n.output(0))) return false;
  for (size_t i = 1; i < n.num_outputs(); ++i)
    if (n.has_output(i)) return false;
  const std::string op = n.op_type();
  if (op == "Conv" || op == "ConvTranspose") {
    if (!activation_input(n, 0) || !n.has_input(1) || !float_constant(n.input(1))) return false;
    const sdk::Tensor w = constant_of(n.input(1));
    if (w.rank() != 4) return false;
    const int64_t group = n.attr_int("group", 1);
    if (group < 1) return false;
    const int64_t m = op == "Conv" ? w.dim(0) : w.dim(1) * group;
    if (n.has_input(2) && (!float_constant(n.input(2)) || constant_of(n.input(2)).size() != m)) return false;
    if (n.num_inputs() > 3) return false;
    if (op == "ConvTranspose") {
      if (n.has_attr("output_shape") || n.attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
      for (int64_t v : n.attr_ints("output_padding"))
        if (v != 0) return false;
    }
    return true;
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (!activation_input(n, 0) || n.attr_int("storage_order", 0) != 0) return false;
    if (!all_ones(n.attr_ints("dilations"))) return false;
    if (n.attr_ints("kernel_shape").size() != 2) return false;
    if (op == "AveragePool" && n.attr_int("ceil_mode", 0) != 0 && n.attr_int("count_include_pad", 0) != 0)
      return false;
    return true;
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return activation_input(n, 0);
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish" || op == "LeakyRelu" ||
      op == "HardSigmoid")
    return activation_input(n, 0) && n.num_inputs() == 1;
  if (op == "Clip") {
    if (!activation_input(n, 0) || n.num_inputs() > 3) return false;
    if (n.opset() >= 11)
      for (size_t i = 1; i < n.num_inputs(); ++i)
        if (n.has_input(i) && !(float_constant(n.input(i)) && constant_of(n.input(i)).size() == 1)) return false;
    return true;
  }
  if (op == "BatchNormalization") {
    if (!activation_input(n, 0) || n.num_inputs() != 5 || n.attr_int("training_mode", 0) != 0) return false;
    if (n.opset() < 7) return false;  // is_test / spatial of old opsets
    for (size_t i = 1; i < 5; ++i)
      if (!float_constant(n.input(i)) || constant_of(n.input(i)).rank() != 1) return false;
    return true;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (n.opset() < 7 || n.num_inputs() != 2 || !n.has_input(0) || !n.has_input(1)) return false;
    int computed = 0;
    for (size_t i = 0; i < 2; ++i) {
      const sdk::Value v = n.input(i);
      if (!is_float(v)) return false;
      if (is_constant(v)) {
        if (constant_of(v).rank() > 4) return false;
      } else {
        if (v.rank() != 4) return false;
        ++computed;
      }
    }
    return computed >= 1;
  }
  if (op == "Concat") {
    const int64_t axis = n.attr_int("axis", 0);
    if (axis != 1 && axis != -3) return false;
    for (size_t i = 0; i < n.num_inputs(); ++i)
      if (!activation_input(n, i)) return false;
    return n.num_inputs() >= 1;
  }
  if (op == "Resize") return activation_input(n, 0) && region_resize(n);
  return false;
}

namespace {
bool is_conv(const sdk::Node& n) {
  const std::string op = n.op_type();
  return op == "Conv" || op == "ConvTranspose";
}
}  // namespace

}  // namespace region

std::vector<std::vector<sdk::Node>> find_cnn_regions(const sdk::Graph& graph,
                                                     const std::function<bool(const sdk::Node&)>& skip) {
#if !defined(EPHOST_WITH_DNNL)
  (void)graph;
  (void)skip;
  return {};
#else
  const std::vector<sdk::Node> nodes = graph.nodes();
  const size_t n = nodes.size();
  std::unordered_map<const EphostNode*, size_t> position;
  for (size_t i = 0; i < n; ++i) position[nodes[i].get()] = i;
  std::vector<int> region(n, -1);
  std::vector<std::set<int>> ancestors(n);  // regions every node depends on, through any path
  int regions = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> producers;
    for (size_t k = 0; k < nodes[i].num_inputs(); ++k) {
      if (!nodes[i].has_input(k)) continue;
      const sdk::Node p = nodes[i].input(k).producer();
      if (!p.valid()) continue;
      auto it = position.find(p.get());
      if (it != position.end()) producers.push_back(it->second);
    }
    for (size_t p : producers) {
      ancestors[i].insert(ancestors[p].begin(), ancestors[p].end());
      if (region[p] >= 0) ancestors[i].insert(region[p]);
    }
    bool eligible = false;
    try {
      eligible = !(skip && skip(nodes[i])) && region::cnn_eligible(nodes[i]);
    } catch (const std::exception&) {
      eligible = false;
    }
    if (!eligible) continue;
    // Join a producer's region when no path from that region reaches this node outside it.
    int chosen = -1;
    for (size_t p : producers) {
      const int r = region[p];
      if (r < 0) continue;
      bool convex = true;
      for (size_t q : producers)
        if (region[q] != r && ancestors[q].count(r)) convex = false;
      if (convex) {
        chosen = r;
        break;
      }
    }
    region[i] = chosen >= 0 ? chosen : regions++;
  }
  // Merge regions joined by an edge when the union stays convex (a branch that started at a graph
  // input, then meets the main region at an Add or a Concat).
  merge_convex_neighbours(nodes, region);
  std::vector<std::vector<sdk::Node>> out(static_cast<size_t>(regions));
  std::vector<bool> has_conv(static_cast<size_t>(regions), false);
  for (size_t i = 0; i < n; ++i)
    if (region[i] >= 0) {
      out[static_cast<size_t>(region[i])].push_back(nodes[i]);
      if (region::is_conv(nodes[i])) has_conv[static_cast<size_t>(region[i])] = true;
    }
  std::vector<std::vector<sdk::Node>> kept;
  for (size_t r = 0; r < out.size(); ++r)
    if (has_conv[r]) kept.push_back(std::move(out[r]));
  return kept;
#endif
}

}  // namespace ephost::cpu::fusion
