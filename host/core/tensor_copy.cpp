#include "core/tensor_copy.h"

#include <cstring>

#include "core/device.h"
#include "core/error.h"

namespace ephost {

const Device* copying_device(const Tensor& src, const Tensor& dst) {
  if (src.on_device()) return src.device();
  return dst.device();
}

void copy_tensor(const Tensor& src, const Tensor& dst, EphostStream* stream, const std::string& what) {
  if (src.elem_type() != dst.elem_type() || src.shape() != dst.shape())
    fail(EPHOST_INVALID_ARGUMENT, "cannot copy {} ({} {}) into a {} {} tensor", what,
         element_type_name(src.elem_type()), shape_to_string(src.shape()), element_type_name(dst.elem_type()),
         shape_to_string(dst.shape()));
  if ((src.on_device() || dst.on_device()) && src.elem_type() == EPHOST_ELEMENT_STRING)
    fail(EPHOST_INVALID_ARGUMENT, "{}: string tensors cannot be copied to or from a device", what);
  const uint64_t bytes = src.byte_size();
  const Device* from = src.device();
  const Device* to = dst.device();
  if (!from && !to) {
    if (src.elem_type() == EPHOST_ELEMENT_STRING) {
      auto* out = const_cast<Tensor&>(dst).data_as<const char*>();
      const auto* in = src.data_as<const char*>();
      for (int64_t i = 0; i < src.element_count(); ++i)
        out[i] = const_cast<Tensor&>(dst).intern_string(in[i], std::strlen(in[i]));
    } else if (bytes) {
      std::memcpy(const_cast<void*>(dst.data()), src.data(), bytes);
    }
    return;
  }
  if (!from) {
    to->copy_to_device(stream, src.data(), dst.device_buffer(), bytes, what);
    return;
  }
  if (!to) {
    from->copy_to_host(stream, src.device_buffer(), const_cast<void*>(dst.data()), bytes, what);
    return;
  }
  if (from->plugin_name() == to->plugin_name() && from->has_device_to_device_copy()) {
    {
      from->copy_to(*to, stream, src.device_buffer(), dst.device_buffer(), bytes, what);
      return;
    }
  }
  // Two plugins (or no device-to-device copy): through host memory, waiting for the source's stream.
  Tensor staging = Tensor::allocate(src.elem_type(), src.shape());
  from->copy_to_host(stream, src.device_buffer(), staging.data(), bytes, what);
  if (stream) from->synchronize(stream, "copy of " + what + " to another plugin's device");
  to->copy_to_device(nullptr, staging.data(), dst.device_buffer(), bytes, what);
}

}  // namespace ephost
