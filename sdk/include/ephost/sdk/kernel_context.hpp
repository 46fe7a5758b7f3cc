// ephost plugin SDK — what a kernel or a compiled group computes with: KernelContext (inputs, outputs,
// threads, subgraphs), SequenceInput, and OwnedValue, a host value the plugin holds.
// Part of the plugin SDK; include "ephost/sdk/plugin.hpp", which brings every part.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ephost/ephost_plugin.h"
#include "ephost/sdk/host.hpp"
#include "ephost/sdk/status.hpp"
#include "ephost/sdk/tensor.hpp"

namespace ephost::sdk {

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

// The kernel context of the compute running on the calling thread, or null outside compute.
// EPHOST_DEFINE_PLUGIN's compute entries set it for their duration (a nested compute, such as a
// subgraph's step run from a Loop kernel on the same thread, restores the outer one when it returns),
// so that code deep inside a kernel, with no KernelContext at hand (a math library's loops), can
// poll run control (kernel_run_check) from the calling thread, or hand it to its worker threads.
inline EphostKernelContext*& current_kernel_context_slot() {
  static thread_local EphostKernelContext* context = nullptr;
  return context;
}
inline EphostKernelContext* current_kernel_context() { return current_kernel_context_slot(); }
class CurrentKernelContextScope {
 public:
  explicit CurrentKernelContextScope(EphostKernelContext* context) : outer_(current_kernel_context_slot()) {
    current_kernel_context_slot() = context;
  }
  ~CurrentKernelContextScope() { current_kernel_context_slot() = outer_; }
  CurrentKernelContextScope(const CurrentKernelContextScope&) = delete;
  CurrentKernelContextScope& operator=(const CurrentKernelContextScope&) = delete;

 private:
  EphostKernelContext* outer_;
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
  // --- plugin ABI 3: tensors in device memory and the run's stream ---
  // Input i and where it lives (a device provider's inputs are in its device's memory). For an
  // absent optional input elem_type is UNDEFINED.
  EphostTensorMemory input_memory(size_t i) const {
    require_devices("KernelContext::input_memory");
    EphostTensorMemory m{};
    check(host().kernel_input_memory(c_, i, &m));
    return m;
  }
  // Allocates output i in the device provider's device memory.
  EphostTensorMemory output_device(size_t i, int32_t elem_type, const std::vector<int64_t>& shape) {
    require_devices("KernelContext::output_device");
    EphostTensorMemory m{};
    check(host().kernel_output_device(c_, i, elem_type, shape.data(), shape.size(), &m));
    return m;
  }
  // The run's stream on the provider's device: work enqueued on it may finish after compute returns.
  // Null for host providers and plugins without streams.
  EphostStream* stream() const { return host_has_devices() ? host().kernel_stream(c_) : nullptr; }

  // Throws the host's status (EPHOST_CANCELLED, EPHOST_DEADLINE_EXCEEDED) once the run this compute
  // belongs to should stop (its terminate was set, or its deadline passed): call it between chunks of
  // long work and between the iterations of loops the kernel runs itself. Cheap, and callable from
  // any thread working for this compute. Never throws against a host older than plugin ABI 4.
  void check_run() const {
    if (host_has_run_control()) check(host().kernel_run_check(c_));
  }
  // The same question without throwing: true once the run should stop.
  bool run_should_stop() const {
    if (!host_has_run_control()) return false;
    EphostStatus* status = host().kernel_run_check(c_);
    if (status == nullptr) return false;
    host().status_release(status);
    return true;
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
  // --- plugin ABI 4: profile spans inside the step (see ProfileSpans, profile_spans.hpp) ---
  // True when the session records a profile; always false against an older host. Ask once per
  // compute: it reads no clock.
  bool profiling() const { return host_has_profile_spans() && host().kernel_profiling(c_) != 0; }
  // Nanoseconds since the step's span began, on the host's clock; 0 when not profiling.
  int64_t profile_clock_ns() const { return host_has_profile_spans() ? host().kernel_profile_clock_ns(c_) : 0; }
  // Records one span inside the step's span (nothing when not profiling).
  void report_span(const EphostProfileSpan& span) {
    if (host_has_profile_spans()) check(host().kernel_profile_span(c_, &span));
  }
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

}  // namespace ephost::sdk
