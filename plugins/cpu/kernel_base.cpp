#include "kernel_base.h"

#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "math/parallel.h"

namespace ephost::cpu {

void fail_node(const sdk::Node& node, const std::string& what) {
  sdk::fail(EPHOST_INVALID_ARGUMENT, node.op_type() + " '" + node.name() + "': " + what);
}

const char* type_name(int32_t t) { return EphostElementTypeName(t); }

bool is_movable_type(int32_t t) {
  return t != EPHOST_ELEMENT_STRING && t != EPHOST_ELEMENT_UNDEFINED && sdk::element_size(t) != 0;
}

CpuKernel::CpuKernel(const sdk::Node& node, const KernelConfig& config)
    : op_(node.op_type()), name_(node.name()), opset_(node.opset()), default_threads_(config.default_threads), adaptive_(config.adaptive_threads) {
  const size_t n = node.num_outputs();
  outputs_.resize(n);
  for (size_t i = 0; i < n; ++i) outputs_[i] = node.has_output(i);
}

void CpuKernel::compute(sdk::KernelContext& ctx) {
  int threads = ctx.threads();
  if (threads <= 0) threads = default_threads_;
  threads = math::effective_threads(threads, adaptive_);
  math::set_num_threads(threads);
  struct TeamEnd {
    int threads;
    ~TeamEnd() { math::note_team_end(threads); }
  } team_end{threads};
  try {
    run(ctx, threads);
  } catch (const sdk::Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  } catch (const std::exception& e) {
    sdk::fail(EPHOST_EP_FAIL, op_ + " '" + name_ + "': " + e.what());
  }
}

void CpuKernel::fail(const std::string& what) const {
  sdk::fail(EPHOST_INVALID_ARGUMENT, op_ + " '" + name_ + "': " + what);
}

sdk::Tensor CpuKernel::required(sdk::KernelContext& ctx, size_t i, const char* what) const {
  sdk::Tensor t = ctx.input(i);
  if (!t.present()) fail(std::string("required input ") + std::to_string(i) + " (" + what + ") is missing");
  return t;
}

void CpuKernel::expect_type(const sdk::Tensor& t, std::initializer_list<int32_t> types, const char* what) const {
  for (int32_t x : types)
    if (t.elem_type() == x) return;
  std::string list;
  for (int32_t x : types) list += std::string(list.empty() ? "" : ", ") + type_name(x);
  fail(std::string(what) + " must be one of {" + list + "}, found " + type_name(t.elem_type()));
}

void CpuKernel::expect_same_type(const sdk::Tensor& a, const char* a_name, const sdk::Tensor& b,
                                 const char* b_name) const {
  if (a.elem_type() != b.elem_type())
    fail(std::string(a_name) + " and " + b_name + " must have the same type, found " + type_name(a.elem_type()) +
         " and " + type_name(b.elem_type()));
}

std::vector<int64_t> CpuKernel::ints_of(const sdk::Tensor& t, const char* what) const {
  const int64_t n = t.size();
  if (t.elem_type() == EPHOST_ELEMENT_INT64) return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + n);
  if (t.elem_type() == EPHOST_ELEMENT_INT32) return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + n);
  fail(std::string(what) + " must be int64 or int32, found " + type_name(t.elem_type()));
}

double CpuKernel::scalar_of(const sdk::Tensor& t, const char* what) const {
  if (t.size() != 1)
    fail(std::string(what) + " must have exactly one element, found shape " + math::to_string(t.shape()));
  double v = 0;
  if (!dispatch(NumericTypes{}, t.elem_type(), [&](auto tag) {
        using T = decltype(tag);
        v = static_cast<double>(t.data<T>()[0]);
      }))
    fail(std::string(what) + " has unsupported type " + type_name(t.elem_type()));
  return v;
}

int64_t CpuKernel::int_scalar_of(const sdk::Tensor& t, const char* what) const {
  if (t.size() != 1)
    fail(std::string(what) + " must have exactly one element, found shape " + math::to_string(t.shape()));
  int64_t v = 0;
  std::string beyond;  // the value, when int64 cannot hold it
  if (!dispatch(NumericTypes{}, t.elem_type(), [&](auto tag) {
        using T = decltype(tag);
        const T x = t.data<T>()[0];
        if constexpr (std::is_floating_point_v<T>) {
          if (x > -9.2e18 && x < 9.2e18) v = static_cast<int64_t>(x);
          else beyond = std::to_string(x);
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          if (x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) v = static_cast<int64_t>(x);
          else beyond = std::to_string(x);
        } else {
          v = static_cast<int64_t>(x);
        }
      }))
    fail(std::string(what) + " has unsupported type " + type_name(t.elem_type()));
  if (!beyond.empty()) fail(std::string(what) + " " + beyond + " is beyond int64's range");
  return v;
}

}  // namespace ephost::cpu
