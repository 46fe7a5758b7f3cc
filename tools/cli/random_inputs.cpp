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
    case EPHOST_ELEMENT_FLOAT8E4M3FN:
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ:
    case EPHOST_ELEMENT_FLOAT8E5M2:
    case EPHOST_ELEMENT_FLOAT8E5M2FNUZ:
    case EPHOST_ELEMENT_FLOAT8E8M0: {
      // Codes of finite values of moderate size in every float8 format (0x7A to 0x83 for e8m0: 2^-5 to 2^4).
      const uint8_t base = elem_type == EPHOST_ELEMENT_FLOAT8E8M0 ? 0x7A : 0x30;
      uint8_t* p = t.as<uint8_t>();
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(base + rng.small());
      break;
    }
    case EPHOST_ELEMENT_UINT4:
    case EPHOST_ELEMENT_INT4:
    case EPHOST_ELEMENT_FLOAT4E2M1:
    case EPHOST_ELEMENT_UINT2:
    case EPHOST_ELEMENT_INT2: {
      // Every code of these is a finite value: random packed bytes, the unused bits of the last one zero.
      uint8_t* p = t.as<uint8_t>();
      for (size_t i = 0; i < t.byte_size(); ++i) p[i] = static_cast<uint8_t>(rng.next() >> 56);
      const size_t used_bits = (n * EphostElementBits(elem_type)) % 8;
      if (used_bits) p[t.byte_size() - 1] &= static_cast<uint8_t>((1u << used_bits) - 1);
      break;
    }
    default:
      throw Ephost::Exception(EPHOST_NOT_IMPLEMENTED, "cannot make random values for input '" + name + "' of type " +
                                                          element_type_name(elem_type));
  }
  return t;
}

}  // namespace ephost_cli
