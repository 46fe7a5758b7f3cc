#include "isa.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace ephost::cpu::math {
namespace {

Isa detect() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the wider registers (XGETBV).
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  if (avx512) return Isa::kAvx512;
  if (avx2) return Isa::kAvx2;
#endif
  return Isa::kScalar;
}

struct Bf16Hardware {
  bool avx512_bf16 = false;
  bool amx_bf16 = false;
};

#if defined(__x86_64__) && defined(__GNUC__)
// AMX-BF16 from CPUID (leaf 7: EDX bit 22) and the OS saving the tile state (XCR0 bits 17 and 18).
// Asked directly because __builtin_cpu_supports does not know "amx-bf16" on every compiler we build
// with (clang 14, the fuzz build, refuses the string).
bool amx_bf16_usable() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE: XGETBV usable
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 22))) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const unsigned tile_state = (1u << 17) | (1u << 18);
  return (xcr0_lo & tile_state) == tile_state;
}
#endif

Bf16Hardware detect_bf16() {
  Bf16Hardware hw;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  hw.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  hw.amx_bf16 = amx_bf16_usable();
#endif
  return hw;
}

const Bf16Hardware& bf16_hardware() {
  static const Bf16Hardware hw = detect_bf16();
  return hw;
}

std::atomic<int>& cap_slot() {
  static std::atomic<int> cap{static_cast<int>(isa_cap_from_environment().value_or(Isa::kAvx512))};
  return cap;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

std::optional<Isa> parse_isa(std::string_view text) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512})
    if (text == isa_name(isa)) return isa;
  return std::nullopt;
}

Isa hardware_isa() {
  static const Isa isa = detect();
  return isa;
}

Isa active_isa() {
  return std::min(hardware_isa(), static_cast<Isa>(cap_slot().load(std::memory_order_relaxed)));
}

bool bf16_available() {
  const Bf16Hardware& hw = bf16_hardware();
  return (hw.avx512_bf16 || hw.amx_bf16) && active_isa() == Isa::kAvx512;
}

const char* bf16_hardware_name() {
  const Bf16Hardware& hw = bf16_hardware();
  if (hw.avx512_bf16 && hw.amx_bf16) return "avx512_bf16 amx_bf16";
  if (hw.avx512_bf16) return "avx512_bf16";
  if (hw.amx_bf16) return "amx_bf16";
  return "none";
}

std::optional<Isa> isa_cap_from_environment() {
  const char* value = std::getenv(kCpuIsaEnv);
  if (value == nullptr || *value == '\0') return std::nullopt;
  if (std::optional<Isa> isa = parse_isa(value)) return isa;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true))
    std::fprintf(stderr, "ephost cpu plugin: %s is '%s'; expected scalar, avx2 or avx512 (ignored: using %s)\n",
                 kCpuIsaEnv, value, isa_name(hardware_isa()));
  return std::nullopt;
}

Isa set_isa_cap(Isa cap) {
  return static_cast<Isa>(cap_slot().exchange(static_cast<int>(std::min(cap, hardware_isa()))));
}

}  // namespace ephost::cpu::math
