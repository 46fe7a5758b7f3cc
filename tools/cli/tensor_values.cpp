#include "tensor_values.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ephost/ephost_half.h"
#include "ephost/ephost_narrow.h"

namespace ephost_cli {

bool is_floating(int32_t t) {
  return t == EPHOST_ELEMENT_FLOAT || t == EPHOST_ELEMENT_DOUBLE || t == EPHOST_ELEMENT_FLOAT16 ||
         t == EPHOST_ELEMENT_BFLOAT16 || is_complex(t);
}

bool is_complex(int32_t t) { return t == EPHOST_ELEMENT_COMPLEX64 || t == EPHOST_ELEMENT_COMPLEX128; }

size_t components(int32_t t) { return is_complex(t) ? 2 : 1; }

double scalar_as_double(const HostTensor& t, size_t i) {
  switch (t.elem_type()) {
    case EPHOST_ELEMENT_FLOAT:
    case EPHOST_ELEMENT_COMPLEX64: return t.as<float>()[i];
    case EPHOST_ELEMENT_DOUBLE:
    case EPHOST_ELEMENT_COMPLEX128: return t.as<double>()[i];
    case EPHOST_ELEMENT_FLOAT16: return EphostFloat16ToFloat(t.as<uint16_t>()[i]);
    case EPHOST_ELEMENT_BFLOAT16: return EphostBfloat16ToFloat(t.as<uint16_t>()[i]);
    case EPHOST_ELEMENT_INT8: return t.as<int8_t>()[i];
    case EPHOST_ELEMENT_UINT8: return t.as<uint8_t>()[i];
    case EPHOST_ELEMENT_BOOL: return t.as<uint8_t>()[i] ? 1 : 0;
    case EPHOST_ELEMENT_INT16: return t.as<int16_t>()[i];
    case EPHOST_ELEMENT_UINT16: return t.as<uint16_t>()[i];
    case EPHOST_ELEMENT_INT32: return t.as<int32_t>()[i];
    case EPHOST_ELEMENT_UINT32: return t.as<uint32_t>()[i];
    case EPHOST_ELEMENT_INT64: return static_cast<double>(t.as<int64_t>()[i]);
    case EPHOST_ELEMENT_UINT64: return static_cast<double>(t.as<uint64_t>()[i]);
    default:  // the float8 family, float4e2m1 and the packed integers (NaN for other types)
      return EphostNarrowElementToDouble(t.elem_type(), t.data(), i);
  }
}

std::string number_to_string(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string ms_to_string(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", ms);
  return buf;
}

std::string element_to_string(const HostTensor& t, size_t i) {
  switch (t.elem_type()) {
    case EPHOST_ELEMENT_STRING: {
      const std::string& s = t.strings()[i];
      return "\"" + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + "\"";
    }
    case EPHOST_ELEMENT_BOOL: return t.as<uint8_t>()[i] ? "true" : "false";
    case EPHOST_ELEMENT_INT64: return std::to_string(t.as<int64_t>()[i]);
    case EPHOST_ELEMENT_UINT64: return std::to_string(t.as<uint64_t>()[i]);
    case EPHOST_ELEMENT_COMPLEX64:
    case EPHOST_ELEMENT_COMPLEX128: {
      double re = scalar_as_double(t, 2 * i), im = scalar_as_double(t, 2 * i + 1);
      return "(" + number_to_string(re) + (im < 0 || std::signbit(im) ? "" : "+") + number_to_string(im) + "i)";
    }
    default: return number_to_string(scalar_as_double(t, i));
  }
}

std::optional<TensorStats> compute_stats(const HostTensor& t) {
  if (t.elem_type() == EPHOST_ELEMENT_STRING) return std::nullopt;
  TensorStats s;
  const size_t n = t.element_count() * components(t.elem_type());
  bool first = true;
  for (size_t i = 0; i < n; ++i) {
    double v = scalar_as_double(t, i);
    if (std::isnan(v)) {
      ++s.nan;
      continue;
    }
    if (std::isinf(v)) {
      ++s.inf;
      continue;
    }
    ++s.count;
    s.sum += v;
    s.abs_sum += std::fabs(v);
    if (first || v < s.min) s.min = v;
    if (first || v > s.max) s.max = v;
    first = false;
  }
  if (s.count) s.mean = s.sum / static_cast<double>(s.count);
  return s;
}

namespace {

std::string index_string(const HostTensor& t, size_t scalar_index) {
  if (!is_complex(t.elem_type())) return std::to_string(scalar_index);
  return std::to_string(scalar_index / 2) + (scalar_index % 2 ? " (imaginary part)" : " (real part)");
}

std::optional<std::string> compare_floating(const HostTensor& e, const HostTensor& g, const Tolerance& tol) {
  const size_t n = e.element_count() * components(e.elem_type());
  size_t bad = 0;
  double worst = -1;  // largest |diff| among the elements out of tolerance (inf for nan/inf mismatches)
  size_t worst_index = 0;
  double max_diff = 0;  // over all elements, for the message
  for (size_t i = 0; i < n; ++i) {
    double ev = scalar_as_double(e, i), gv = scalar_as_double(g, i);
    bool ok;
    double diff;
    if (std::isnan(ev) || std::isnan(gv)) {
      ok = std::isnan(ev) && std::isnan(gv);
      diff = ok ? 0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(ev) || std::isinf(gv)) {
      ok = ev == gv;
      diff = ok ? 0 : std::numeric_limits<double>::infinity();
    } else {
      diff = std::fabs(ev - gv);
      ok = diff <= tol.atol + tol.rtol * std::fabs(ev);
    }
    if (diff > max_diff) max_diff = diff;
    if (!ok) {
      ++bad;
      if (diff > worst) {
        worst = diff;
        worst_index = i;
      }
    }
  }
  if (!bad) return std::nullopt;
  const std::string what = std::isinf(worst) ? "mismatch" : "max abs diff " + number_to_string(worst);
  return what + " at index " + index_string(e, worst_index) + " (expected " +
         number_to_string(scalar_as_double(e, worst_index)) + ", got " +
         number_to_string(scalar_as_double(g, worst_index)) + "); " + std::to_string(bad) + " of " +
         std::to_string(n) + " values out of tolerance (rtol " + number_to_string(tol.rtol) + ", atol " +
         number_to_string(tol.atol) + ")";
}

std::optional<std::string> compare_exact(const HostTensor& e, const HostTensor& g) {
  const size_t n = e.element_count();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    bool same;
    if (e.elem_type() == EPHOST_ELEMENT_STRING) {
      same = e.strings()[i] == g.strings()[i];
    } else if (e.elem_type() == EPHOST_ELEMENT_BOOL) {
      same = (e.as<uint8_t>()[i] != 0) == (g.as<uint8_t>()[i] != 0);
    } else if (e.elem_type() >= EPHOST_ELEMENT_FLOAT8E4M3FN) {
      // The narrow types (float8, float4, packed integers) compare exactly, code by code: a cast to them
      // is exact by definition. Packed bytes hold several codes; any two NaN codes are the same NaN.
      const uint32_t a = EphostNarrowCode(e.elem_type(), e.data(), i), b = EphostNarrowCode(g.elem_type(), g.data(), i);
      same = a == b || (std::isnan(EphostNarrowCodeToDouble(e.elem_type(), a)) &&
                        std::isnan(EphostNarrowCodeToDouble(g.elem_type(), b)));
    } else {
      const size_t es = EphostElementSize(e.elem_type());
      const unsigned char* a = static_cast<const unsigned char*>(e.data()) + i * es;
      const unsigned char* b = static_cast<const unsigned char*>(g.data()) + i * es;
      same = std::equal(a, a + es, b);
    }
    if (!same && bad++ == 0) first = i;
  }
  if (!bad) return std::nullopt;
  return std::to_string(bad) + " of " + std::to_string(n) + " elements differ, first at index " +
         std::to_string(first) + " (expected " + element_to_string(e, first) + ", got " + element_to_string(g, first) +
         ")";
}

}  // namespace

std::optional<std::string> compare_type_and_shape(const HostTensor& expected, const HostTensor& got) {
  if (expected.elem_type() != got.elem_type())
    return "type: expected " + element_type_name(expected.elem_type()) + ", got " + element_type_name(got.elem_type());
  if (expected.shape() != got.shape())
    return "shape: expected " + shape_string(expected.shape()) + ", got " + shape_string(got.shape());
  return std::nullopt;
}

std::optional<std::string> compare_tensors(const HostTensor& expected, const HostTensor& got, const Tolerance& tol) {
  if (auto diff = compare_type_and_shape(expected, got)) return diff;
  if (is_floating(expected.elem_type())) return compare_floating(expected, got, tol);
  return compare_exact(expected, got);
}

}  // namespace ephost_cli
