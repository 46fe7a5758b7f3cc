#if defined(EPHOST_WITH_DNNL)

#include "dnnl_util.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>

#include "isa.h"

namespace ephost::cpu::math {

namespace {
// EPHOST_CPU_ISA caps oneDNN's kernels too, so that a capped run exercises the narrower code all
// through. oneDNN takes the cap only before its first primitive; too late (or a oneDNN built without
// the feature) leaves its own choice, which is harmless.
void cap_dnnl_isa() {
  const std::optional<Isa> cap = isa_cap_from_environment();
  if (!cap || *cap == Isa::kAvx512) return;
  try {
    dnnl::set_max_cpu_isa(*cap == Isa::kAvx2 ? dnnl::cpu_isa::avx2 : dnnl::cpu_isa::sse41);
  } catch (const dnnl::error&) {
  }
}
}  // namespace

dnnl::engine& cpu_engine() {
  static dnnl::engine engine = [] {
    cap_dnnl_isa();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

dnnl::memory scratchpad(size_t bytes) {
  return dnnl::memory(dnnl::memory::desc({static_cast<dnnl::memory::dim>(bytes)}, dnnl::memory::data_type::u8,
                                         dnnl::memory::format_tag::a),
                      cpu_engine(), thread_buffer(2, bytes));
}

dnnl::memory::desc plain_desc(const Shape& dims, dnnl::memory::data_type dt) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dt, dnnl::memory::dims(strides_of(dims)));
}

dnnl::memory::desc strided_desc(const Shape& dims, const Shape& strides, dnnl::memory::data_type dt) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dt,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  const char* impl = pd.impl_info_str();
  return impl == nullptr || std::strncmp(impl, "ref", 3) == 0;
}

void Bf16Operand::prepare(const dnnl::memory::desc& f32_desc) {
  f32 = f32_desc;
  const dnnl::memory::dims dims = f32_desc.dims();
  bf16 = plain_desc(Shape(dims.begin(), dims.end()), dnnl::memory::data_type::bf16);
  reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), f32, cpu_engine(), bf16));
}

dnnl::memory Bf16Operand::convert(const float* data, int slot, dnnl::stream& s) const {
  dnnl::memory from(f32, cpu_engine(), const_cast<float*>(data));
  dnnl::memory to(bf16, cpu_engine(), thread_buffer(slot, bf16.get_size()));
  reorder.execute(s, from, to);
  return to;
}

namespace {
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
struct ThreadBuffer {
  std::unique_ptr<void, FreeDeleter> data;
  size_t size = 0;
};
}  // namespace

void* thread_buffer(int slot, size_t bytes) {
  thread_local ThreadBuffer buffers[kThreadBufferSlots];
  ThreadBuffer& b = buffers[slot];
  if (bytes == 0) bytes = 1;
  if (b.size < bytes) {
    b.data.reset();
    // 64-byte alignment suits AVX-512 loads in oneDNN kernels.
    size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) throw std::bad_alloc();
    b.data.reset(p);
    b.size = rounded;
  }
  return b.data.get();
}

void touch_thread_buffer(int slot, size_t bytes) {
  std::memset(thread_buffer(slot, bytes), 0, std::max<size_t>(bytes, 1));
}

WeightsMemory weights_memory(const dnnl::memory::desc& desc) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t bytes = desc.get_size();
  if (bytes < kHuge) return {dnnl::memory(desc, cpu_engine()), nullptr};
  const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, rounded);
  if (p == nullptr) throw std::bad_alloc();
  // Advice only: where the kernel has no huge pages to give, it faults in small pages as before. Only
  // the whole huge pages inside the weights are advised: a huge page over the tail would be resident
  // in full (2.4 MB weights took 4 MB, 39 MB over ViT-B/16's 24 of them), small pages only where
  // touched.
  (void)madvise(p, bytes / kHuge * kHuge, MADV_HUGEPAGE);
  std::shared_ptr<void> block(p, std::free);
  return {dnnl::memory(desc, cpu_engine(), p), std::move(block)};
}

}  // namespace ephost::cpu::math

#endif  // EPHOST_WITH_DNNL
