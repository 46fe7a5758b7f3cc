// Fuzz harness: model bytes -> session creation (CPU plugin, every check the loader makes, shape
// inference, partitioning, compilation, planning) -> one run on random inputs. Anything but a clean
// Ephost::Exception is a finding: a crash, a hang (libFuzzer's -timeout), a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "fuzz_support.h"

namespace {

// Inputs larger than this are not made (the model may still ask for large intermediates: those are
// bounded by EPHOST_TENSOR_BYTES_LIMIT in the fuzz runs).
constexpr int64_t kMaxInputElements = 1 << 16;

const Ephost::Env& env() {
  static const Ephost::Env e(EPHOST_LOG_FATAL, std::vector<std::string>{});
  return e;
}

// A concrete shape for a declared one: symbolic dims become 2. Empty when it is too large.
bool concrete_shape(const Ephost::Session::TensorType& t, std::vector<int64_t>* shape) {
  if (t.rank < 0 || t.rank > 8) return false;
  int64_t count = 1;
  for (int64_t d : t.dims) {
    const int64_t v = d < 0 ? 2 : d;
    if (v > kMaxInputElements || (v > 0 && count > kMaxInputElements / v)) return false;
    count *= v;
    shape->push_back(v);
  }
  return true;
}

Ephost::Tensor random_tensor(EphostElementType type, const std::vector<int64_t>& shape, uint64_t seed) {
  Ephost::Tensor t = Ephost::Tensor::allocate(type, shape);
  if (type == EPHOST_ELEMENT_STRING) return t;  // empty strings
  auto* bytes = t.data<uint8_t>();
  const size_t n = t.size() * EphostElementSize(type);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    // Small values, so that indices and counts taken from inputs stay mostly in range.
    bytes[i] = static_cast<uint8_t>((seed >> 60) & 0x3);
  }
  if (type == EPHOST_ELEMENT_BOOL)
    for (size_t i = 0; i < n; ++i) bytes[i] &= 1;
  return t;
}

void run_once(const Ephost::Session& s) {
  std::vector<std::string> names = s.input_names();
  std::vector<Ephost::Tensor> inputs;
  for (size_t i = 0; i < names.size(); ++i) {
    const Ephost::Session::ValueType kind = s.input_type(i);
    if (kind.kind == EPHOST_VALUE_OPTIONAL) {
      inputs.push_back(Ephost::Tensor::none());
      continue;
    }
    const EphostElementType elem = static_cast<EphostElementType>(kind.elem_type ? kind.elem_type : EPHOST_ELEMENT_FLOAT);
    if (kind.kind == EPHOST_VALUE_SEQUENCE) {
      inputs.push_back(Ephost::Tensor::sequence(elem, {random_tensor(elem, {2}, i)}));
      continue;
    }
    std::vector<int64_t> shape;
    const Ephost::Session::TensorType t = s.input_tensor_type(i);
    if (!concrete_shape(t, &shape)) return;
    inputs.push_back(random_tensor(static_cast<EphostElementType>(t.elem_type), shape, i + 1));
  }
  s.run(names, inputs, s.output_names());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    Ephost::Session session(env(), data, size);
    session.partition_report_json();
    run_once(session);
  } catch (const Ephost::Exception&) {
    // A clean refusal: what a hostile model must get.
  }
  return 0;
}
