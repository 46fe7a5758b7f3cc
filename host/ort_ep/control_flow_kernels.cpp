// The control-flow kernels the host makes for a kernel-registry EP (OrtEpApi::CreateIfKernel,
// CreateLoopKernel, CreateScanKernel, API 24). In ONNX Runtime an EP registers If / Loop / Scan in its
// registry with a create function that asks ORT for the kernel, because only the session can run a
// subgraph. Here the kernel runs its subgraphs through the executor's kernel context (run_subgraph: the
// subgraph's own plan, its nodes partitioned among the providers like any graph's), and calls the EP's
// helpers where ONNX Runtime calls them: OrtLoopKernelHelper::ConcatOutput to stack a Loop's scan
// outputs into the output the host allocated, OrtScanKernelHelper::Transpose for a scan input or output
// whose axis is not 0. Values stay in host memory: a Loop or Scan kernel for a device with memory of
// its own is refused when created.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "ort_ep/api_impl.h"
#include "ort_ep/kernel_context.h"
#include "ort_ep/kernel_registry.h"

namespace ephost::ort_ep::api::ep {
namespace {

enum class Flow { kIf, kLoop, kScan };

const char* entry_name(Flow flow) {
  return flow == Flow::kIf ? "CreateIfKernel" : flow == Flow::kLoop ? "CreateLoopKernel" : "CreateScanKernel";
}

// One host-made If, Loop or Scan kernel. Owns the EP's helper (released with the kernel, as ONNX Runtime
// releases it). The node outlives the kernel (the session's graph).
struct ControlFlowKernel : OrtKernelImpl {
  Flow flow = Flow::kIf;
  const Node* node = nullptr;
  OrtLoopKernelHelper* loop_helper = nullptr;
  OrtScanKernelHelper* scan_helper = nullptr;
  // Scan (opset 9+): how many of the inputs are scanned (the last ones), and per scan input / output its
  // axis and direction (1: last position first).
  size_t scan_inputs = 0;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

std::vector<int64_t> ints_attribute(const Node& node, const char* name) {
  const onnx::AttributeProto* a = node.attribute(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

// `values` per scan input or output: the attribute's, or `count` zeros when the node has none.
std::vector<int64_t> per_scan_value(const Node& node, const char* name, size_t count) {
  std::vector<int64_t> v = ints_attribute(node, name);
  if (v.empty()) v.assign(count, 0);
  if (v.size() != count)
    fail(EPHOST_INVALID_GRAPH, "Scan node '{}': {} has {} entries for {} values", node.name, name, v.size(), count);
  return v;
}

int64_t normalized_axis(int64_t axis, size_t rank, const Node& node, const char* what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    fail(EPHOST_INVALID_ARGUMENT, "Scan node '{}': {} axis {} does not fit rank {}", node.name, what, axis, rank);
  return axis < 0 ? axis + r : axis;
}

bool bool_scalar(const RuntimeValue* v, const Node& node, const char* what) {
  if (!v || !v->is_tensor() || v->tensor().elem_type() != EPHOST_ELEMENT_BOOL || v->tensor().element_count() != 1)
    fail(EPHOST_INVALID_ARGUMENT, "{} node '{}': {} must be one bool", node.op_type, node.name, what);
  if (v->tensor().on_device())
    fail(EPHOST_INVALID_ARGUMENT, "{} node '{}': {} must be in CPU memory", node.op_type, node.name, what);
  return *v->tensor().data_as<uint8_t>() != 0;
}

// A tensor the executor may keep: an input handed on unchanged (no iteration ran) is copied, since the
// executor's output must own its buffer.
RuntimeValue owned(const RuntimeValue& v) {
  if (v.is_tensor() && !v.tensor().holder()) return v.tensor().clone();
  return v;
}

// Throws the EP helper's failure as the kernel's.
void check_helper(OrtStatus* status, const Node& node, const char* helper) {
  if (!status) return;
  const StatusReading r = take_status(status);
  fail(EPHOST_EP_FAIL, "{} node '{}': the EP's {} failed: {}", node.op_type, node.name, helper, r.message);
}

// An OrtValue the EP's helper reads or writes, viewing `tensor` (borrowed for the call).
OrtValue& view_of(std::deque<OrtValue>& values, const Tensor& tensor) {
  OrtValue& v = values.emplace_back();
  v.tensor = const_cast<Tensor*>(&tensor);
  return v;
}

void check_run(EphostKernelContext& c) {
  if (const RunLimits* limits = c.run_limits()) limits->check();
}

void compute_if(const ControlFlowKernel& k, EphostKernelContext& c) {
  const bool cond = bool_scalar(c.input(0), *k.node, "cond");
  std::vector<RuntimeValue> out = c.run_subgraph(cond ? "then_branch" : "else_branch", {});
  if (out.size() < c.num_outputs())
    fail(EPHOST_INVALID_GRAPH, "If node '{}': its branch gives {} outputs for the node's {}", k.node->name,
         out.size(), c.num_outputs());
  for (size_t i = 0; i < c.num_outputs(); ++i)
    if (k.node->outputs[i]) c.set_output(i, std::move(out[i]));
}

// The stacked shape of `count` per-iteration values of shape `part`, stacked along a new first axis.
std::vector<int64_t> stacked(int64_t count, const std::vector<int64_t>& part) {
  std::vector<int64_t> shape{count};
  shape.insert(shape.end(), part.begin(), part.end());
  return shape;
}

// The shape of a scan output no iteration wrote: 0 along the stacking axis, the body output's declared
// dims elsewhere (just {0} when they are not all known), as the CPU plugin makes it.
std::vector<int64_t> empty_stacked(const Value* body_output, int64_t axis) {
  if (!body_output || !body_output->type.has_shape) return {0};
  std::vector<int64_t> dims = body_output->type.dims;
  for (int64_t d : dims)
    if (d < 0) return {0};
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(dims.size()) + 1 : axis;
  if (a < 0 || a > static_cast<int64_t>(dims.size())) return {0};
  dims.insert(dims.begin() + a, 0);
  return dims;
}

// The per-iteration tensors of one scan output, all of one element type and shape.
void check_alike(const std::vector<RuntimeValue>& parts, const Node& node, size_t output) {
  for (const RuntimeValue& p : parts) {
    if (!p.is_tensor())
      fail(EPHOST_INVALID_ARGUMENT, "{} node '{}': scan output {} is a {}, not a tensor", node.op_type, node.name,
           output, p.describe());
    if (p.tensor().elem_type() == EPHOST_ELEMENT_STRING)
      fail(EPHOST_NOT_IMPLEMENTED, "{} node '{}': scan output {} holds strings, which ephost's host-made {} kernel "
           "does not stack", node.op_type, node.name, output, node.op_type);
    if (p.tensor().elem_type() != parts[0].tensor().elem_type() || p.tensor().shape() != parts[0].tensor().shape())
      fail(EPHOST_INVALID_ARGUMENT, "{} node '{}': scan output {} changes type or shape between iterations ({} and {})",
           node.op_type, node.name, output, parts[0].describe(), p.describe());
  }
}

void compute_loop(const ControlFlowKernel& k, EphostKernelContext& c) {
  const Node& node = *k.node;
  const Graph* body = node.subgraph("body");
  const size_t carried = c.num_inputs() - 2;
  const size_t scans = body->outputs.size() - 1 - carried;
  int64_t trips = INT64_MAX;
  if (const RuntimeValue* m = c.input(0); m && m->is_tensor()) {
    if (m->tensor().element_count() != 1 || m->tensor().elem_type() != EPHOST_ELEMENT_INT64 || m->tensor().on_device())
      fail(EPHOST_INVALID_ARGUMENT, "Loop node '{}': M must be one int64 in CPU memory", node.name);
    trips = *m->tensor().data_as<int64_t>();
  }
  const RuntimeValue* c_in = c.input(1);
  const bool has_cond = c_in && c_in->is_tensor();
  bool cond = has_cond ? bool_scalar(c_in, node, "cond") : true;

  std::vector<RuntimeValue> values;
  for (size_t j = 0; j < carried; ++j) {
    const RuntimeValue* v = c.input(2 + j);
    if (!v || !v->is_set()) fail(EPHOST_INVALID_ARGUMENT, "Loop node '{}': loop-carried input {} is missing", node.name, j);
    values.push_back(*v);
  }
  std::vector<std::vector<RuntimeValue>> per_iteration(scans);
  int64_t iterations = 0;
  for (; iterations < trips && cond; ++iterations) {
    check_run(c);  // a huge trip count ends when the run is stopped
    Tensor i = Tensor::allocate(EPHOST_ELEMENT_INT64, {});
    *i.data_as<int64_t>() = iterations;
    Tensor b = Tensor::allocate(EPHOST_ELEMENT_BOOL, {});
    *b.data_as<uint8_t>() = cond ? 1 : 0;
    std::vector<RuntimeValue> feeds{RuntimeValue(i), RuntimeValue(b)};
    feeds.insert(feeds.end(), values.begin(), values.end());
    std::vector<RuntimeValue> out = c.run_subgraph("body", std::move(feeds));
    if (has_cond) cond = bool_scalar(&out[0], node, "the body's condition output");
    for (size_t j = 0; j < carried; ++j) values[j] = std::move(out[1 + j]);
    for (size_t s = 0; s < scans; ++s) per_iteration[s].push_back(std::move(out[1 + carried + s]));
  }

  for (size_t j = 0; j < carried && j < c.num_outputs(); ++j)
    if (node.outputs[j]) c.set_output(j, iterations == 0 ? owned(values[j]) : values[j]);
  for (size_t s = 0; s < scans && carried + s < c.num_outputs(); ++s) {
    const size_t index = carried + s;
    if (!node.outputs[index]) continue;
    const std::vector<RuntimeValue>& parts = per_iteration[s];
    if (parts.empty()) {
      const Value* declared = body->outputs[1 + carried + s];
      const int32_t elem = declared && declared->type.elem_type ? declared->type.elem_type : EPHOST_ELEMENT_FLOAT;
      c.allocate_output(index, elem, empty_stacked(declared, 0));
      continue;
    }
    check_alike(parts, node, index);
    const Tensor& first = parts[0].tensor();
    Tensor& out = c.allocate_output(index, first.elem_type(), stacked(static_cast<int64_t>(parts.size()), first.shape()));
    std::deque<OrtValue> views;
    std::vector<const OrtValue*> handles;
    for (const RuntimeValue& p : parts) handles.push_back(&view_of(views, p.tensor()));
    check_helper(k.loop_helper->ConcatOutput(k.loop_helper, /*stream_handle=*/nullptr, handles.data(), handles.size(),
                                             out.data(), out.byte_size()),
                 node, "OrtLoopKernelHelper::ConcatOutput");
  }
}

// The permutation that moves axis `axis` of a rank-`rank` tensor to the front (a scan input's), or from the
// front to `axis` (a scan output's): output axis i is input axis permutation[i].
std::vector<size_t> to_front(size_t axis, size_t rank) {
  std::vector<size_t> p{axis};
  for (size_t i = 0; i < rank; ++i)
    if (i != axis) p.push_back(i);
  return p;
}
std::vector<size_t> from_front(size_t axis, size_t rank) {
  std::vector<size_t> p;
  for (size_t i = 0; i < rank; ++i) p.push_back(i < axis ? i + 1 : i == axis ? 0 : i);
  return p;
}

// `input` transposed by `permutation` through the EP's helper, into `output` (made with the permuted shape).
void transpose(const ControlFlowKernel& k, const std::vector<size_t>& permutation, const Tensor& input, Tensor& output) {
  std::deque<OrtValue> views;
  const OrtValue& in = view_of(views, input);
  OrtValue& out = view_of(views, output);
  check_helper(k.scan_helper->Transpose(k.scan_helper, permutation.data(), permutation.size(), &in,
                                        /*stream=*/nullptr, &out),
               *k.node, "OrtScanKernelHelper::Transpose");
}

std::vector<int64_t> permuted(const std::vector<int64_t>& shape, const std::vector<size_t>& permutation) {
  std::vector<int64_t> out;
  for (size_t p : permutation) out.push_back(shape[p]);
  return out;
}

// A scan input with its scanned axis first (transposed by the EP when the axis is not 0).
Tensor scanned_first(const ControlFlowKernel& k, const Tensor& x, size_t m) {
  if (x.on_device()) fail(EPHOST_INVALID_ARGUMENT, "Scan node '{}': scan input {} is not in CPU memory", k.node->name, m);
  if (x.elem_type() == EPHOST_ELEMENT_STRING)
    fail(EPHOST_NOT_IMPLEMENTED, "Scan node '{}': scan input {} holds strings, which ephost's host-made Scan kernel "
         "does not slice", k.node->name, m);
  if (x.shape().empty()) fail(EPHOST_INVALID_ARGUMENT, "Scan node '{}': scan input {} is a scalar", k.node->name, m);
  const int64_t axis = normalized_axis(k.input_axes[m], x.shape().size(), *k.node, "scan input");
  if (axis == 0) return x;
  const std::vector<size_t> p = to_front(static_cast<size_t>(axis), x.shape().size());
  Tensor t = Tensor::allocate(x.elem_type(), permuted(x.shape(), p));
  transpose(k, p, x, t);
  return t;
}

// Position `pos` of `x` along its first axis, a view (the input lives through the compute call).
Tensor slice(const Tensor& x, int64_t pos) {
  std::vector<int64_t> part(x.shape().begin() + 1, x.shape().end());
  const size_t bytes = x.byte_size() / static_cast<size_t>(x.shape()[0]);
  return Tensor::borrow(x.elem_type(), std::move(part),
                        static_cast<char*>(const_cast<void*>(x.data())) + static_cast<size_t>(pos) * bytes);
}

void compute_scan(const ControlFlowKernel& k, EphostKernelContext& c) {
  const Node& node = *k.node;
  const Graph* body = node.subgraph("body");
  const size_t states = c.num_inputs() - k.scan_inputs;
  const size_t scan_outputs = body->outputs.size() - states;
  std::vector<Tensor> inputs;
  int64_t length = -1;
  for (size_t m = 0; m < k.scan_inputs; ++m) {
    const RuntimeValue* v = c.input(states + m);
    if (!v || !v->is_tensor()) fail(EPHOST_INVALID_ARGUMENT, "Scan node '{}': scan input {} is not a tensor", node.name, m);
    inputs.push_back(scanned_first(k, v->tensor(), m));
    const int64_t n = inputs.back().shape()[0];
    if (length >= 0 && n != length)
      fail(EPHOST_INVALID_ARGUMENT, "Scan node '{}': scan input {} has {} positions, an earlier one {}", node.name, m, n,
           length);
    length = n;
  }
  std::vector<RuntimeValue> values;
  for (size_t j = 0; j < states; ++j) {
    const RuntimeValue* v = c.input(j);
    if (!v || !v->is_set()) fail(EPHOST_INVALID_ARGUMENT, "Scan node '{}': state input {} is missing", node.name, j);
    values.push_back(*v);
  }
  std::vector<std::vector<RuntimeValue>> per_iteration(scan_outputs);
  for (int64_t i = 0; i < length; ++i) {
    check_run(c);
    std::vector<RuntimeValue> feeds = values;
    for (size_t m = 0; m < k.scan_inputs; ++m)
      feeds.emplace_back(slice(inputs[m], k.input_directions[m] == 1 ? length - 1 - i : i));
    std::vector<RuntimeValue> out = c.run_subgraph("body", std::move(feeds));
    for (size_t j = 0; j < states; ++j) values[j] = std::move(out[j]);
    for (size_t s = 0; s < scan_outputs; ++s) per_iteration[s].push_back(std::move(out[states + s]));
  }

  for (size_t j = 0; j < states && j < c.num_outputs(); ++j)
    if (node.outputs[j]) c.set_output(j, length == 0 ? owned(values[j]) : values[j]);
  for (size_t s = 0; s < scan_outputs && states + s < c.num_outputs(); ++s) {
    const size_t index = states + s;
    if (!node.outputs[index]) continue;
    const std::vector<RuntimeValue>& parts = per_iteration[s];
    if (parts.empty()) {
      const Value* declared = body->outputs[states + s];
      const int32_t elem = declared && declared->type.elem_type ? declared->type.elem_type : EPHOST_ELEMENT_FLOAT;
      c.allocate_output(index, elem, empty_stacked(declared, k.output_axes[s]));
      continue;
    }
    check_alike(parts, node, index);
    const Tensor& first = parts[0].tensor();
    const std::vector<int64_t> shape = stacked(static_cast<int64_t>(parts.size()), first.shape());
    const int64_t axis = normalized_axis(k.output_axes[s], shape.size(), node, "scan output");
    const std::vector<size_t> p = from_front(static_cast<size_t>(axis), shape.size());
    Tensor& out = c.allocate_output(index, first.elem_type(), axis == 0 ? shape : permuted(shape, p));
    Tensor stacked_values = axis == 0 ? out : Tensor::allocate(first.elem_type(), shape);
    const size_t bytes = first.byte_size();
    for (size_t i = 0; i < parts.size(); ++i) {
      const size_t position = k.output_directions[s] == 1 ? parts.size() - 1 - i : i;
      if (bytes) std::memcpy(static_cast<char*>(stacked_values.data()) + position * bytes, parts[i].tensor().data(), bytes);
    }
    if (axis != 0) transpose(k, p, stacked_values, out);
  }
}

OrtStatus* control_flow_compute(OrtKernelImpl* this_ptr, OrtKernelContext* context) {
  auto* k = static_cast<ControlFlowKernel*>(this_ptr);
  if (!context || context->magic != OrtKernelContext::kMagic)
    return make_status(ORT_INVALID_ARGUMENT, "a host-made control-flow kernel was given no kernel context of the host");
  try {
    switch (k->flow) {
      case Flow::kIf: compute_if(*k, *context->context); break;
      case Flow::kLoop: compute_loop(*k, *context->context); break;
      case Flow::kScan: compute_scan(*k, *context->context); break;
    }
  } catch (const Error& e) {
    // ephost's codes 0..11 are ONNX Runtime's; a stopped run (terminate, deadline) reads as ORT_FAIL.
    const int code = static_cast<int>(e.code());
    return make_status(code > ORT_OK && code <= ORT_EP_FAIL ? static_cast<OrtErrorCode>(code) : ORT_FAIL, e.what());
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, e.what());
  }
  return nullptr;
}

void control_flow_release(OrtKernelImpl* this_ptr) {
  auto* k = static_cast<ControlFlowKernel*>(this_ptr);
  if (k->loop_helper && k->loop_helper->Release) k->loop_helper->Release(k->loop_helper);
  if (k->scan_helper && k->scan_helper->Release) k->scan_helper->Release(k->scan_helper);
  delete k;
}

OrtStatus* invalid(Flow flow, const std::string& what) {
  return make_status(ORT_INVALID_ARGUMENT, fmt::format("OrtEpApi::{}: {}", entry_name(flow), what));
}

// The kernel for the node of `info`, checked as ONNX Runtime checks it: the operator, a subgraph where its
// body is, Scan from opset 9. A Loop or Scan for a device with memory of its own is refused (values stay
// in host memory).
OrtStatus* create(Flow flow, const OrtKernelInfo* info, OrtKernelImpl** out, OrtLoopKernelHelper* loop_helper,
                  OrtScanKernelHelper* scan_helper) {
  const OrtKernelInfo* ki = checked<OrtKernelInfo>(info, Magic::kKernelInfo);
  if (!ki || !ki->node) return invalid(flow, "kernel_info is not an OrtKernelInfo the host made");
  if (!out) return invalid(flow, "kernel_out is NULL");
  const Node& node = *ki->node;
  const char* op = flow == Flow::kIf ? "If" : flow == Flow::kLoop ? "Loop" : "Scan";
  if (node.op_type != op || !(node.domain.empty() || node.domain == "ai.onnx"))
    return invalid(flow, fmt::format("node '{}' is a {} of domain '{}', not an ai.onnx {}", node.name, node.op_type,
                                     node.domain, op));
  try {
    auto k = std::make_unique<ControlFlowKernel>();
    k->ort_version_supported = EPHOST_ORT_API_VERSION_MAX;
    k->flags = 0;
    k->Compute = &control_flow_compute;
    k->Release = &control_flow_release;
    k->flow = flow;
    k->node = &node;
    if (flow == Flow::kIf) {
      if (!node.subgraph("then_branch") || !node.subgraph("else_branch"))
        return invalid(flow, fmt::format("If node '{}' lacks then_branch or else_branch", node.name));
    } else {
      const Graph* body = node.subgraph("body");
      if (!body) return invalid(flow, fmt::format("node '{}' has no body graph", node.name));
      if (ki->default_allocator)
        return make_status(ORT_NOT_IMPLEMENTED,
                           fmt::format("OrtEpApi::{}: node '{}': ephost's host-made {} kernel keeps its values in host "
                                       "memory and does not run on a device with memory of its own yet",
                                       entry_name(flow), node.name, op));
      if (flow == Flow::kLoop) {
        const size_t inputs = node.inputs.size();
        if (inputs < 2 || body->inputs.size() != inputs || body->outputs.size() < inputs - 1)
          return invalid(flow, fmt::format("Loop node '{}': its body's inputs and outputs do not fit the node's {} "
                                           "inputs", node.name, inputs));
      } else {
        if (ki->since_version < 9)
          return make_status(ORT_FAIL, fmt::format("OrtEpApi::CreateScanKernel: node '{}' is Scan-{}; Scan older than "
                                                   "opset 9 is not supported", node.name, ki->since_version));
        const onnx::AttributeProto* m = node.attribute("num_scan_inputs");
        const int64_t scan_inputs = m ? m->i() : 0;
        if (scan_inputs < 1 || static_cast<size_t>(scan_inputs) > node.inputs.size() ||
            body->inputs.size() != node.inputs.size() || body->outputs.size() < node.inputs.size() - scan_inputs)
          return invalid(flow, fmt::format("Scan node '{}': num_scan_inputs {} does not fit its {} inputs and body",
                                           node.name, scan_inputs, node.inputs.size()));
        k->scan_inputs = static_cast<size_t>(scan_inputs);
        const size_t scan_outputs = body->outputs.size() - (node.inputs.size() - k->scan_inputs);
        k->input_axes = per_scan_value(node, "scan_input_axes", k->scan_inputs);
        k->input_directions = per_scan_value(node, "scan_input_directions", k->scan_inputs);
        k->output_axes = per_scan_value(node, "scan_output_axes", scan_outputs);
        k->output_directions = per_scan_value(node, "scan_output_directions", scan_outputs);
      }
    }
    // The helper is the host's from here on: released with the kernel.
    k->loop_helper = loop_helper;
    k->scan_helper = scan_helper;
    *out = k.release();
  } catch (const std::exception& e) {
    return make_status(ORT_FAIL, fmt::format("OrtEpApi::{}: {}", entry_name(flow), e.what()));
  }
  return nullptr;
}

}  // namespace

OrtStatus* CreateIfKernel(const OrtKernelInfo* kernel_info, OrtKernelImpl** kernel_out) noexcept {
  return create(Flow::kIf, kernel_info, kernel_out, nullptr, nullptr);
}

OrtStatus* CreateLoopKernel(const OrtKernelInfo* kernel_info, OrtLoopKernelHelper* helper,
                            OrtKernelImpl** kernel_out) noexcept {
  if (!helper || !helper->Release || !helper->ConcatOutput)
    return invalid(Flow::kLoop, "helper must be an OrtLoopKernelHelper with Release and ConcatOutput");
  return create(Flow::kLoop, kernel_info, kernel_out, helper, nullptr);
}

OrtStatus* CreateScanKernel(const OrtKernelInfo* kernel_info, OrtScanKernelHelper* helper,
                            OrtKernelImpl** kernel_out) noexcept {
  if (!helper || !helper->Release || !helper->Transpose)
    return invalid(Flow::kScan, "helper must be an OrtScanKernelHelper with Release and Transpose");
  return create(Flow::kScan, kernel_info, kernel_out, nullptr, helper);
}

}  // namespace ephost::ort_ep::api::ep
