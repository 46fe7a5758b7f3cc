#include "random_inputs.h"

#include "ephost/ephost_half.h"

namespace ephost_cli {

namespace {

// SplitMix64: small, fast, and the same everywhere.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), a multiple of 2^-23 (exact in float).
  float unit() { return static_cast<float>(static_cast<int64_t>(next() >> 40) - (int64_t{1} << 23)) / 8388608.0f; }
  int64_t small() { return static_cast<int64_t>(next() % 10); }
};

template <typename T>
void fill_ints(HostTensor& t, SplitMix64& rng) {
  T* p = t.as<T>();
  for (size_t i = 0; i < t.element_count(); ++i) p[i] = static_cast<T>(rng.small());
}

}  // namespace

HostTensor random_tensor(const std::string& name, int32_t elem_type, const std::vector<int64_t>& shape,
                         uint64_t seed, uint64_t stream) {
  HostTensor t(name, elem_type, shape);
  SplitMix64 rng{seed * 0x2545f4914f6cdd1dull + stream * 0x9e3779b97f4a7c15ull + 1};
  const size_t n = t.element_count();
  switch (elem_type) {
    case EPHOST_ELEMENT_FLOAT: {
      float* p = t.as<float>();
      for (size_t i = 0; i < n; ++i) p[i] = rng.unit();
      break;
    }
    case EPHOST_ELEMENT_COMPLEX64: {
      float* p = t.as<float>();
      for (size_t i = 0; i < 2 * n; ++i) p[i] = rng.unit();
      break;
    }
    case EPHOST_ELEMENT_DOUBLE: {
      double* p = t.as<double>();
      for (size_t i = 0; i < n; ++i) p[i] = rng.unit();
      break;
    }
    case EPHOST_ELEMENT_COMPLEX128: {
      double* p = t.as<double>();
      for (size_t i = 0; i < 2 * n; ++i) p[i] = rng.unit();
      break;
    }
    case EPHOST_ELEMENT_FLOAT16: {
      uint16_t* p = t.as<uint16_t>();
      for (size_t i = 0; i < n; ++i) p[i] = EphostFloatToFloat16(rng.unit());
      break;
    }
    case EPHOST_ELEMENT_BFLOAT16: {
      uint16_t* p = t.as<uint16_t>();
      for (size_t i = 0; i < n; ++i) p[i] = EphostFloatToBfloat16(rng.unit());
      break;
    }
    case EPHOST_ELEMENT_BOOL: {
      uint8_t* p = t.as<uint8_t>();
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng.next() >> 63);
      break;
    }
    case EPHOST_ELEMENT_INT8: fill_ints<int8_t>(t, rng); break;
    case EPHOST_ELEMENT_UINT8: fill_ints<uint8_t>(t, rng); break;
    case EPHOST_ELEMENT_INT16: fill_ints<int16_t>(t, rng); break;
    case EPHOST_ELEMENT_UINT16: fill_ints<uint16_t>(t, rng); break;
    case EPHOST_ELEMENT_INT32: fill_ints<int32_t>(t, rng); break;
    case EPHOST_ELEMENT_UINT32: fill_ints<uint32_t>(t, rng); break;
    case EPHOST_ELEMENT_INT64: fill_ints<int64_t>(t, rng); break;
    case EPHOST_ELEMENT_UINT64: fill_ints<uint64_t>(t, rng); break;
    case EPHOST_ELEMENT_STRING:
      for (size_t i = 0; i < n; ++i) t.strings()[i] = "s" + std::to_string(rng.small());
      break;
    default:
      throw Ephost::Exception(EPHOST_NOT_IMPLEMENTED, "cannot make random values for input '" + name + "' of type " +
                                                          element_type_name(elem_type));
  }
  return t;
}

}  // namespace ephost_cli
