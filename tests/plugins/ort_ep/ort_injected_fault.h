/*
 * Faults an ORT-ABI test plugin injects on demand, so that the isolation tests can crash, abort or hang a
 * real ONNX Runtime plugin EP library inside one chosen call, as tests/plugins/injected_fault.hpp does for
 * native plugins. Read in CreateEp from the EP's options (session config entries, as ONNX Runtime passes
 * them):
 *   ep.<name>.fault        "<kind>:<call>", kind one of segfault, abort, hang; call one of create_ep
 *                          (OrtEpFactory::CreateEp), get_capability (OrtEp::GetCapability), compile
 *                          (OrtEp::Compile) and compute (OrtNodeComputeInfo::Compute, or a registry
 *                          kernel's OrtKernelImpl::Compute)
 *   ep.<name>.fault_while  a file path: the fault happens only while that file exists (a test makes it,
 *                          sees the run fail, removes it and sees the next runs succeed)
 * Without `fault`, nothing happens. A value that is not one of the above makes CreateEp fail saying so.
 */
#pragma once

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ort_ep/ort_abi.h"

typedef struct OrtInjectedFault {
  char kind[16];        /* "" when no fault was asked for */
  char call[32];
  char while_file[512]; /* "" when the fault is unconditional */
} OrtInjectedFault;

/* The session config entry "ep.<ep_name>.<key>" into `out` (of `room` bytes), "" when absent. */
static OrtStatus* injected_fault_option(const OrtApi* ort, const OrtSessionOptions* options, const char* ep_name,
                                        const char* key, char* out, size_t room) {
  char full[128];
  int has = 0;
  size_t size = room;
  OrtStatus* status;
  out[0] = '\0';
  snprintf(full, sizeof full, "ep.%s.%s", ep_name, key);
  status = ort->HasSessionConfigEntry(options, full, &has);
  if (!status && has) status = ort->GetSessionConfigEntry(options, full, out, &size);
  return status;
}

/* Reads the fault options of EP `ep_name` into `fault`. */
static OrtStatus* read_injected_fault(const OrtApi* ort, const OrtSessionOptions* options, const char* ep_name,
                                      OrtInjectedFault* fault) {
  char value[64];
  const char* colon;
  OrtStatus* status;
  memset(fault, 0, sizeof *fault);
  status = injected_fault_option(ort, options, ep_name, "fault", value, sizeof value);
  if (!status) status = injected_fault_option(ort, options, ep_name, "fault_while", fault->while_file,
                                              sizeof fault->while_file);
  if (status || !value[0]) return status;
  colon = strchr(value, ':');
  if (colon && (size_t)(colon - value) < sizeof fault->kind) {
    memcpy(fault->kind, value, (size_t)(colon - value));
    snprintf(fault->call, sizeof fault->call, "%s", colon + 1);
  }
  if ((strcmp(fault->kind, "segfault") != 0 && strcmp(fault->kind, "abort") != 0 &&
       strcmp(fault->kind, "hang") != 0) ||
      (strcmp(fault->call, "create_ep") != 0 && strcmp(fault->call, "get_capability") != 0 &&
       strcmp(fault->call, "compile") != 0 && strcmp(fault->call, "compute") != 0))
    return ort->CreateStatus(ORT_INVALID_ARGUMENT, "option fault must be <segfault|abort|hang>:<create_ep|"
                                                   "get_capability|compile|compute>");
  return NULL;
}

/* Misbehaves when `call` is the call the fault names (and its file, if any, exists). */
static void injected_fault_at(const OrtInjectedFault* fault, const char* call) {
  volatile int* nowhere = NULL;
  if (!fault->kind[0] || strcmp(fault->call, call) != 0) return;
  if (fault->while_file[0] && access(fault->while_file, F_OK) != 0) return;
  if (strcmp(fault->kind, "abort") == 0) abort();
  if (strcmp(fault->kind, "hang") == 0)
    for (;;) sleep(1);
  *nowhere = 1;
}
