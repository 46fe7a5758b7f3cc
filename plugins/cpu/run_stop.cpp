// The CPU plugin's side of run control (plugin ABI 4): the math code's parallel_for and the kernels'
// own loops poll the run of the compute in progress through kernel_run_check, so that a long kernel
// stops within about a piece of its work once the application sets terminate or the run's deadline
// passes (math/parallel.h declares these).
#include "ephost/sdk/plugin.hpp"
#include "math/parallel.h"

namespace ephost::cpu::math {

const void* current_run_token() {
  if (!sdk::host_has_run_control()) return nullptr;
  return sdk::current_kernel_context();
}

bool run_should_stop(const void* token) noexcept {
  if (token == nullptr) return false;
  EphostStatus* status = sdk::host().kernel_run_check(static_cast<const EphostKernelContext*>(token));
  if (status == nullptr) return false;
  sdk::host().status_release(status);
  return true;
}

void throw_run_stopped(const void* token) {
  if (token != nullptr)
    sdk::check(sdk::host().kernel_run_check(static_cast<const EphostKernelContext*>(token)));
  // The stop was seen but has been lifted since (terminate cleared): the work is incomplete all the
  // same, so the compute must fail.
  sdk::fail(EPHOST_CANCELLED, "the run was stopped while this kernel ran (RunOptions.terminate)");
}

}  // namespace ephost::cpu::math
