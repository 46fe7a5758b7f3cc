// The x86-64 instruction-set tiers the CPU plugin's hand-written loops are compiled for (math/vec.cpp,
// small_gemm.cpp, int_gemm.cpp) and the one place that decides which of them runs. The plugin is built
// for the baseline ISA; the wider loops carry target attributes and are picked at run time, never at
// build time.
//
// The active tier is the widest the processor has, capped by EPHOST_CPU_ISA (scalar | avx2 | avx512),
// read once per process. A cap lets an AVX-512 machine run, test and benchmark the AVX2 and scalar
// paths; a cap above what the processor has is clamped to it (the wider code would fault). The cap
// also limits oneDNN (math/dnnl_util.cpp) when it is set before the first oneDNN primitive.
//
// Thread-safety: every function may be called from any thread; the cap is an atomic.
#pragma once

#include <optional>
#include <string_view>

namespace ephost::cpu::math {

enum class Isa : int {
  kScalar = 0,  // the baseline build (SSE2 auto-vectorised loops)
  kAvx2 = 1,    // AVX2 and FMA
  kAvx512 = 2,  // AVX-512 F, DQ, VL and BW, with AVX2 and FMA
};

// Environment variable that caps the active tier.
inline constexpr const char* kCpuIsaEnv = "EPHOST_CPU_ISA";

// "scalar", "avx2", "avx512".
const char* isa_name(Isa isa);
// The inverse of isa_name; nullopt for any other text.
std::optional<Isa> parse_isa(std::string_view text);

// The widest tier this processor (and its OS, for the wider registers) supports.
Isa hardware_isa();

// The tier the loops run: min(hardware_isa(), the cap).
Isa active_isa();

// Whether bfloat16 products (AVX512_BF16 or AMX-BF16) may run: the processor has one of them and the
// active tier is avx512 (a cap below it, from EPHOST_CPU_ISA or set_isa_cap, turns them off too).
bool bf16_available();
// The processor's bfloat16 instructions as text ("avx512_bf16", "avx512_bf16 amx_bf16", or "none").
const char* bf16_hardware_name();

// The cap from EPHOST_CPU_ISA, or nullopt when it is unset. An unknown value is reported once on
// stderr and ignored (no cap): the plugin must load whatever the environment says.
std::optional<Isa> isa_cap_from_environment();

// Caps the active tier for the whole process (clamped to hardware_isa()); returns the previous cap.
// Tests use it (through ScopedIsaCap) to run every path the machine has in one process.
Isa set_isa_cap(Isa cap);

// Sets a cap for its lifetime and restores the previous one.
class ScopedIsaCap {
 public:
  explicit ScopedIsaCap(Isa cap) : previous_(set_isa_cap(cap)) {}
  ~ScopedIsaCap() { set_isa_cap(previous_); }
  ScopedIsaCap(const ScopedIsaCap&) = delete;
  ScopedIsaCap& operator=(const ScopedIsaCap&) = delete;

 private:
  Isa previous_;
};

}  // namespace ephost::cpu::math
