// Copying a tensor's elements between host memory and devices' memory, through the devices' plugins.
#pragma once

#include <string>

#include "core/tensor.h"

namespace ephost {

// Copies the elements of `src` into `dst`'s buffer: same element type (not string) and shape, any
// locations. `stream` belongs to the device that performs the copy (the destination's for host to
// device, the source's otherwise) or is null for a synchronous copy; with a stream the copy may only
// be enqueued (the caller synchronizes). Between devices of two different plugins the elements go
// through host memory, synchronously. `what` names the value in errors. Throws INVALID_ARGUMENT for
// mismatched tensors, EP_FAIL (naming the provider and call) when a plugin fails.
void copy_tensor(const Tensor& src, const Tensor& dst, EphostStream* stream, const std::string& what = "tensor");

// The device that performs a copy from `src` to `dst` (whose stream copy_tensor takes), or null when
// neither is on a device.
const Device* copying_device(const Tensor& src, const Tensor& dst);

}  // namespace ephost
