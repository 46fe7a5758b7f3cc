#include "math/narrow_types.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "ephost/ephost_narrow.h"

namespace ephost::cpu::math {

namespace {

// A small binary float: 1 sign bit (the top one), exp_bits of exponent, mant_bits of mantissa.
struct Minifloat {
  enum Specials {
    kIeee,        // e5m2: the top exponent holds Inf (mantissa 0) and NaN
    kNanAllOnes,  // e4m3fn: no Inf; S.1111.111 is NaN, so the top exponent holds finite values too
    kUnsignedZero,  // the fnuz types: 0x80 (negative zero's code) is the only NaN; no Inf, no -0
    kFinite,      // float4e2m1: no Inf, no NaN
  };
  int exp_bits, mant_bits, bias;
  Specials specials;
  uint8_t max_code;  // the largest finite value ...
  double max_value;  // ... and what it stands for
  int bits() const { return 1 + exp_bits + mant_bits; }
  uint8_t sign_bit() const { return static_cast<uint8_t>(1u << (exp_bits + mant_bits)); }
};

constexpr Minifloat kE4m3fn{4, 3, 7, Minifloat::kNanAllOnes, 0x7E, 448.0};
constexpr Minifloat kE4m3fnuz{4, 3, 8, Minifloat::kUnsignedZero, 0x7F, 240.0};
constexpr Minifloat kE5m2{5, 2, 15, Minifloat::kIeee, 0x7B, 57344.0};
constexpr Minifloat kE5m2fnuz{5, 2, 16, Minifloat::kUnsignedZero, 0x7F, 57344.0};
constexpr Minifloat kE2m1{2, 1, 1, Minifloat::kFinite, 0x7, 6.0};

const Minifloat* minifloat_of(int32_t t) {
  switch (t) {
    case EPHOST_ELEMENT_FLOAT8E4M3FN: return &kE4m3fn;
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ: return &kE4m3fnuz;
    case EPHOST_ELEMENT_FLOAT8E5M2: return &kE5m2;
    case EPHOST_ELEMENT_FLOAT8E5M2FNUZ: return &kE5m2fnuz;
    case EPHOST_ELEMENT_FLOAT4E2M1: return &kE2m1;
    default: return nullptr;
  }
}

uint8_t nan_code(const Minifloat& f, bool negative) {
  const uint8_t sign = negative ? f.sign_bit() : 0;
  switch (f.specials) {
    case Minifloat::kUnsignedZero: return f.sign_bit();
    case Minifloat::kFinite: return f.max_code;  // no NaN: the largest value, positive (ONNX's reference)
    default: return static_cast<uint8_t>((f.sign_bit() - 1) | sign);  // all ones below the sign
  }
}

// What a value beyond the largest finite one (an infinity, or a value that rounds past it) becomes.
uint8_t overflow_code(const Minifloat& f, bool negative, bool saturate) {
  const uint8_t sign = negative ? f.sign_bit() : 0;
  if (saturate || f.specials == Minifloat::kFinite) return f.max_code | sign;
  if (f.specials == Minifloat::kIeee) return static_cast<uint8_t>((((1 << f.exp_bits) - 1) << f.mant_bits) | sign);
  return nan_code(f, negative);
}

uint8_t encode_minifloat(const Minifloat& f, double x, bool saturate) {
  const bool negative = std::signbit(x);
  if (std::isnan(x)) return nan_code(f, negative);
  if (std::isinf(x)) return overflow_code(f, negative, saturate);
  const double a = std::fabs(x);
  const double min_normal = std::ldexp(1.0, 1 - f.bias);
  // The spacing of representable values around a: fixed below the smallest normal, else 2^(e - M).
  int e = 0;
  std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1)
  const double quantum = a < min_normal ? std::ldexp(1.0, 1 - f.bias - f.mant_bits) : std::ldexp(1.0, e - 1 - f.mant_bits);
  const double steps = std::nearbyint(a / quantum);  // round half to even (the default rounding mode)
  const double r = steps * quantum;
  if (r > f.max_value) return overflow_code(f, negative, saturate);
  const uint8_t sign = negative ? f.sign_bit() : 0;
  if (r == 0) return f.specials == Minifloat::kUnsignedZero ? 0 : sign;  // fnuz: no negative zero (0x80 is NaN)
  if (r < min_normal) return static_cast<uint8_t>(static_cast<int>(steps) | sign);  // subnormal: mantissa only
  std::frexp(r, &e);  // again: rounding may have carried into the next power of 2
  const int exponent = e - 1;
  const int mantissa = static_cast<int>(std::ldexp(r, f.mant_bits - exponent)) - (1 << f.mant_bits);
  return static_cast<uint8_t>((((exponent + f.bias) << f.mant_bits) | mantissa) | sign);
}

// float8e8m0: an exponent only, 2^(code - 127); 0xFF is NaN. No sign and no zero: a zero, and a value
// below 2^-127, become 2^-127 when saturating; NaN otherwise (Cast-24's table). Negative values are
// unspecified by ONNX: they become NaN here.
uint8_t encode_e8m0(double x, const NarrowEncoding& how) {
  constexpr uint8_t kNan = 0xFF, kMax = 0xFE, kMin = 0x00;
  if (std::isnan(x) || x < 0) return kNan;
  if (std::isinf(x)) return how.saturate ? kMax : kNan;
  if (x == 0) return how.saturate ? kMin : kNan;  // Cast-24's table
  // Below 2^-127: rounding up lands on 2^-127; otherwise it is out of range.
  if (x < std::ldexp(1.0, -127)) return how.saturate || how.e8m0_rounding == E8m0Rounding::kUp ? kMin : kNan;
  int e = 0;
  const double frac = 2 * std::frexp(x, &e);  // x = frac * 2^(e - 1), frac in [1, 2)
  int exponent = e - 1;
  if (frac != 1.0) {
    switch (how.e8m0_rounding) {
      case E8m0Rounding::kUp: ++exponent; break;
      case E8m0Rounding::kDown: break;
      case E8m0Rounding::kNearest:
        if (frac >= 1.5) ++exponent;  // ties up
        break;
    }
  }
  // Past 2^127: rounding down lands on 2^127; otherwise it is out of range.
  if (exponent + 127 > kMax) return how.saturate || how.e8m0_rounding == E8m0Rounding::kDown ? kMax : kNan;
  return static_cast<uint8_t>(exponent + 127);
}

struct IntRange {
  int lo, hi;
};
IntRange range_of(int32_t t) {
  switch (t) {
    case EPHOST_ELEMENT_INT4: return {-8, 7};
    case EPHOST_ELEMENT_UINT4: return {0, 15};
    case EPHOST_ELEMENT_INT2: return {-2, 1};
    default: return {0, 3};  // uint2
  }
}

// ONNX's reference: clamp to the range, then round half to even; NaN (left unspecified) gives 0.
uint8_t encode_integer(int32_t t, double x) {
  if (std::isnan(x)) return 0;
  const IntRange r = range_of(t);
  const int v = static_cast<int>(std::nearbyint(std::fmin(std::fmax(x, r.lo), r.hi)));
  return static_cast<uint8_t>(v & ((1 << (8 / elements_per_byte(t))) - 1));
}

// Every code's value, once per type (256 entries cover the widest).
using DecodeTable = std::array<double, 256>;
const DecodeTable& decode_table(int32_t t) {
  static const auto tables = [] {
    std::array<DecodeTable, 27> all{};
    for (int32_t type = EPHOST_ELEMENT_FLOAT8E4M3FN; type <= EPHOST_ELEMENT_INT2; ++type)
      for (int code = 0; code < 256; ++code) {
        const uint32_t c = static_cast<uint32_t>(code) & ((1u << (8 / elements_per_byte(type))) - 1u);
        all[static_cast<size_t>(type)][static_cast<size_t>(code)] = EphostNarrowCodeToDouble(type, c);
      }
    return all;
  }();
  return tables[static_cast<size_t>(t)];
}

}  // namespace

bool is_narrow_type(int32_t t) { return t >= EPHOST_ELEMENT_FLOAT8E4M3FN && t <= EPHOST_ELEMENT_INT2; }

bool is_narrow_integer(int32_t t) {
  return t == EPHOST_ELEMENT_INT4 || t == EPHOST_ELEMENT_UINT4 || t == EPHOST_ELEMENT_INT2 || t == EPHOST_ELEMENT_UINT2;
}

int elements_per_byte(int32_t t) {
  switch (t) {
    case EPHOST_ELEMENT_INT4:
    case EPHOST_ELEMENT_UINT4:
    case EPHOST_ELEMENT_FLOAT4E2M1: return 2;
    case EPHOST_ELEMENT_INT2:
    case EPHOST_ELEMENT_UINT2: return 4;
    default: return 1;
  }
}

bool parse_e8m0_rounding(const char* text, E8m0Rounding* out) {
  if (std::strcmp(text, "up") == 0) *out = E8m0Rounding::kUp;
  else if (std::strcmp(text, "down") == 0) *out = E8m0Rounding::kDown;
  else if (std::strcmp(text, "nearest") == 0) *out = E8m0Rounding::kNearest;
  else return false;
  return true;
}

double narrow_decode_one(int32_t t, uint8_t code) { return decode_table(t)[code]; }

uint8_t narrow_encode_one(int32_t t, double value, const NarrowEncoding& how) {
  if (const Minifloat* f = minifloat_of(t)) return encode_minifloat(*f, value, how.saturate);
  if (t == EPHOST_ELEMENT_FLOAT8E8M0) return encode_e8m0(value, how);
  return encode_integer(t, value);
}

void narrow_decode(int32_t t, const void* data, int64_t begin, int64_t n, double* out) {
  const DecodeTable& table = decode_table(t);
  const auto* bytes = static_cast<const uint8_t*>(data);
  const int per_byte = elements_per_byte(t);
  if (per_byte == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = table[bytes[begin + i]];
    return;
  }
  const int bits = 8 / per_byte;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = begin + i;
    out[i] = table[(bytes[at / per_byte] >> (bits * (at % per_byte))) & ((1 << bits) - 1)];
  }
}

void narrow_encode(int32_t t, const double* values, int64_t n, void* data, int64_t begin, const NarrowEncoding& how) {
  auto* bytes = static_cast<uint8_t*>(data);
  const int per_byte = elements_per_byte(t);
  if (per_byte == 1) {
    for (int64_t i = 0; i < n; ++i) bytes[begin + i] = narrow_encode_one(t, values[i], how);
    return;
  }
  const int bits = 8 / per_byte;
  uint8_t* out = bytes + begin / per_byte;
  for (int64_t i = 0; i < n; i += per_byte) {
    uint8_t packed = 0;
    for (int k = 0; k < per_byte && i + k < n; ++k)
      packed = static_cast<uint8_t>(packed | (narrow_encode_one(t, values[i + k], how) << (bits * k)));
    out[i / per_byte] = packed;
  }
}

void narrow_unpack_codes(int32_t t, const void* data, int64_t n, uint8_t* codes) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  const int per_byte = elements_per_byte(t);
  if (per_byte == 1) {
    std::copy(bytes, bytes + n, codes);
    return;
  }
  const int bits = 8 / per_byte;
  const unsigned mask = (1u << bits) - 1u;
  for (int64_t i = 0; i < n; ++i)
    codes[i] = static_cast<uint8_t>((bytes[i / per_byte] >> (bits * (i % per_byte))) & mask);
}

void narrow_pack_codes(int32_t t, const uint8_t* codes, int64_t n, void* data) {
  auto* bytes = static_cast<uint8_t*>(data);
  const int per_byte = elements_per_byte(t);
  if (per_byte == 1) {
    std::copy(codes, codes + n, bytes);
    return;
  }
  const int bits = 8 / per_byte;
  const unsigned mask = (1u << bits) - 1u;
  for (int64_t i = 0; i < n; i += per_byte) {
    unsigned packed = 0;
    for (int k = 0; k < per_byte && i + k < n; ++k) packed |= (codes[i + k] & mask) << (bits * k);
    bytes[i / per_byte] = static_cast<uint8_t>(packed);
  }
}

}  // namespace ephost::cpu::math
