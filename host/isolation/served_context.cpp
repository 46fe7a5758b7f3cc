#include "isolation/served_context.h"

#include <cstring>

#include "core/error.h"
#include "core/tensor.h"
#include "isolation/served_device_memory.h"

namespace ephost::isolation {

namespace {

void write_type_and_shape(MessageWriter& out, const Tensor& tensor) {
  out.i64(tensor.elem_type()).u64(tensor.shape().size());
  for (int64_t d : tensor.shape()) out.i64(d);
}

}  // namespace

void write_tensor_slot(MessageWriter& out, const Tensor* tensor, size_t offset) {
  out.u32(static_cast<uint32_t>(tensor ? SlotPlace::kArena : SlotPlace::kAbsent));
  if (!tensor) return;
  write_type_and_shape(out, *tensor);
  out.u64(offset);
}

void write_device_slot(MessageWriter& out, const Tensor& tensor, uint64_t id, uint64_t offset) {
  out.u32(static_cast<uint32_t>(SlotPlace::kDevice));
  write_type_and_shape(out, tensor);
  out.u64(id).u64(offset);
}

void write_region_slot(MessageWriter& out, const Tensor& tensor, uint64_t region, uint64_t offset) {
  out.u32(static_cast<uint32_t>(SlotPlace::kRegion));
  write_type_and_shape(out, tensor);
  out.u64(region).u64(offset);
}

void ServedContext::read_inputs(MessageReader& in) {
  for (uint64_t n = in.u64(); n > 0; --n) {
    const auto place = static_cast<SlotPlace>(in.u32());
    if (place == SlotPlace::kAbsent) {
      inputs_.emplace_back();
      continue;
    }
    const auto elem_type = static_cast<int32_t>(in.i64());
    std::vector<int64_t> shape(in.u64());
    for (int64_t& d : shape) d = in.i64();
    if (place == SlotPlace::kDevice) {
      const uint64_t id = in.u64();
      const uint64_t offset = in.u64();
      if (!memory_) fail(EPHOST_EP_FAIL, "provider host: a device input sent to a compute without a device");
      inputs_.emplace_back(memory_->tensor(id, offset, elem_type, std::move(shape)));
      continue;
    }
    if (place == SlotPlace::kRegion) {
      const uint64_t region = in.u64(), offset = in.u64();
      char* data = regions_.span(region, offset, byte_count(elem_type, shape));
      inputs_.emplace_back(Tensor::borrow(elem_type, std::move(shape), data));
      continue;
    }
    const uint64_t offset = in.u64();
    const size_t bytes = byte_count(elem_type, shape);
    if (offset > arena_.size() || bytes > arena_.size() - offset)
      fail(EPHOST_EP_FAIL, "provider host: an input lies outside the shared memory");
    inputs_.emplace_back(Tensor::borrow(elem_type, std::move(shape), arena_.base() + offset));
    cursor_ = std::max(cursor_, SharedArena::align(offset + bytes));
  }
  outputs_.resize(in.u64());
  for (uint64_t n = in.u64(); n > 0; --n) {
    Place p;
    const uint64_t index = in.u64();
    p.region = in.u64();
    p.offset = in.u64();
    p.elem_type = static_cast<int32_t>(in.i64());
    p.shape.resize(in.u64());
    for (int64_t& d : p.shape) d = in.i64();
    p.capacity = in.u64();
    if (index >= outputs_.size()) fail(EPHOST_EP_FAIL, "provider host: a place for output {} of {}", index, outputs_.size());
    if (p.elem_type != EPHOST_ELEMENT_UNDEFINED && p.capacity != byte_count(p.elem_type, p.shape))
      fail(EPHOST_EP_FAIL, "provider host: the place for output {} holds {} bytes, not its shape's", index, p.capacity);
    regions_.span(p.region, p.offset, p.capacity);  // checked now: it lies in the region
    outputs_[index].place = std::move(p);
  }
}

void ServedContext::write_outputs(MessageWriter& out) {
  // Outputs made outside the arena (it was full) are copied in now: the compute is over, so growing and
  // mapping the arena again moves no tensor a kernel still writes. Uploads still queued from the arena
  // are finished before it is written or mapped again.
  bool writes_arena = false;
  for (const Output& o : outputs_)
    writes_arena = writes_arena || (o.value.is_set() && !o.in_arena && !o.in_place && !o.value.tensor("output").on_device());
  if (writes_arena && memory_) memory_->settle_uploads();
  for (Output& o : outputs_) {
    if (!o.value.is_set() || o.in_arena || o.in_place || o.value.tensor("output").on_device()) continue;
    const Tensor& t = o.value.tensor("output");
    o.offset = cursor_;
    cursor_ = SharedArena::align(cursor_ + t.byte_size());
  }
  arena_.reserve(cursor_);
  for (Output& o : outputs_)
    if (o.value.is_set() && !o.in_arena && !o.in_place && !o.value.tensor("output").on_device()) {
      const Tensor& t = o.value.tensor("output");
      if (t.byte_size()) std::memcpy(arena_.base() + o.offset, t.data(), t.byte_size());
    }
  out.u64(arena_.size()).u64(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const Output& o = outputs_[i];
    const Tensor* t = o.value.is_set() ? &o.value.tensor("output") : nullptr;
    if (t && o.in_place) {
      write_region_slot(out, *t, o.place->region, o.place->offset);
      continue;
    }
    if (!t || !t->on_device()) {
      write_tensor_slot(out, t, o.offset);
      continue;
    }
    // Kept here under the id the host reserved for output i: the host holds it by that id.
    if (!memory_ || t->device() != device_)
      fail(EPHOST_EP_FAIL, "provider host: output {} is in another device's memory than the step's", i);
    memory_->adopt(first_output_id_ + i, *t);
    write_device_slot(out, *t, first_output_id_ + i, 0);
  }
}

const RuntimeValue* ServedContext::input(size_t index) const {
  if (index >= inputs_.size()) fail(EPHOST_INVALID_ARGUMENT, "input index {} out of range ({} inputs)", index, inputs_.size());
  return inputs_[index].is_set() ? &inputs_[index] : nullptr;
}

void ServedContext::check_output(size_t index) const {
  if (index >= outputs_.size())
    fail(EPHOST_INVALID_ARGUMENT, "output index {} out of range ({} outputs)", index, outputs_.size());
  if (outputs_[index].value.is_set()) fail(EPHOST_INVALID_ARGUMENT, "output {} is already set", index);
}

Tensor& ServedContext::allocate_output(size_t index, int32_t elem_type, std::vector<int64_t> shape) {
  check_output(index);
  if (elem_type == EPHOST_ELEMENT_STRING)
    fail(EPHOST_NOT_IMPLEMENTED, "string tensors do not cross to an isolated provider (run it in process)");
  Output& o = outputs_[index];
  if (device_) {
    // As in process: a step on a device that works on its own memory has its outputs there.
    o.value = Tensor::allocate_on_device(*device_, elem_type, std::move(shape), "output " + std::to_string(index));
    return o.value.tensor("output");
  }
  const size_t bytes = byte_count(elem_type, shape);
  const bool fits_place = o.place && (o.place->elem_type == EPHOST_ELEMENT_UNDEFINED
                                          ? bytes <= o.place->capacity
                                          : o.place->elem_type == elem_type && o.place->shape == shape);
  if (fits_place) {
    // Where the host wants it: the kernel writes the application's shared tensor, or the shared memory
    // the host allocated for this output, in place.
    o.value = Tensor::borrow(elem_type, std::move(shape), regions_.span(o.place->region, o.place->offset, bytes));
    o.in_place = true;
    return o.value.tensor("output");
  }
  if (cursor_ <= arena_.size() && bytes <= arena_.size() - cursor_) {
    o.value = Tensor::borrow(elem_type, std::move(shape), arena_.base() + cursor_);
    o.in_arena = true;
    o.offset = cursor_;
    cursor_ = SharedArena::align(cursor_ + bytes);
  } else {
    o.value = Tensor::allocate(elem_type, std::move(shape));
  }
  return o.value.tensor("output");
}

Tensor* ServedContext::allocated_output(size_t index) {
  if (index >= outputs_.size() || !outputs_[index].value.is_tensor()) return nullptr;
  return &outputs_[index].value.tensor("output");
}

void ServedContext::set_output(size_t index, RuntimeValue value) {
  check_output(index);
  if (!value.is_tensor() || value.tensor().elem_type() == EPHOST_ELEMENT_STRING)
    fail(EPHOST_NOT_IMPLEMENTED, "only numeric tensors cross from an isolated provider (run it in process)");
  outputs_[index].value = std::move(value);
}

void ServedContext::begin_sequence_output(size_t, int32_t, size_t) {
  fail(EPHOST_NOT_IMPLEMENTED, "sequence outputs do not cross from an isolated provider (run it in process)");
}

TensorSequence& ServedContext::sequence_output(size_t) {
  fail(EPHOST_NOT_IMPLEMENTED, "sequence outputs do not cross from an isolated provider (run it in process)");
}

std::vector<RuntimeValue> ServedContext::run_subgraph(const std::string&, std::vector<RuntimeValue>) {
  fail(EPHOST_NOT_IMPLEMENTED, "subgraphs cannot be run from an isolated provider (run it in process)");
}

}  // namespace ephost::isolation
