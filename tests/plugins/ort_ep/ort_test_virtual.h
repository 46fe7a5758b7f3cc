/*
 * The virtual device of the ORT_TEST_VIRTUAL_DEVICE build of ort_test_ep.c ("ortvirt"), as ONNX Runtime's
 * virtual-GPU example EP makes one: a GPU the host never probed, described with OrtEpApi::CreateHardwareDevice
 * (vendor 0xB358 "Contoso", metadata IsVirtual=1 and a Description) in GetSupportedDevices, the one device
 * it offers (kernels on host memory); released in ReleaseEpFactory (ReleaseHardwareDevice). It passes over
 * the host's devices and says why for the CPU (GetHardwareDeviceIncompatibilityDetails: DEVICE_INCOMPATIBLE,
 * error 11, "ortvirt runs on its virtual GPU only").
 *
 * In CreateEp it asks the environment what an application would (virtual_check_env): CreateEnv,
 * GetNumHardwareDevices / GetHardwareDevices, and GetHardwareDeviceEpIncompatibilityDetails on the host's
 * CPU and on its virtual device under its own name, then ReleaseEnv; and the weightless source model its
 * session options carry (SessionOptionsGetWeightlessSourceModelBuffer). When option "env_log" names a file
 * it appends what it got, one line each:
 *   cpu reasons=<bitmask> error=<code> notes=<notes>
 *   virtual reasons=<bitmask> error=<code> notes=<notes or (none)>
 *   weightless bytes=<length>
 * Bad arguments must give ORT_INVALID_ARGUMENT (an EP name nobody serves, a NULL env, a device type 7, a
 * NULL vendor); CreateEp fails saying which did not.
 *
 * Included by ort_test_ep.c after `api`, `ep_api` and RETURN_IF are declared. Plain C.
 */
#ifndef ORT_TEST_VIRTUAL_H_
#define ORT_TEST_VIRTUAL_H_

#include <stdio.h>
#include <string.h>

static OrtHardwareDevice* virtual_device;

static int virtual_is_invalid_argument(OrtStatus* status) {
  int invalid = status && api->GetErrorCode(status) == ORT_INVALID_ARGUMENT;
  if (status) api->ReleaseStatus(status);
  return invalid;
}

/* Made once, on the first GetSupportedDevices; bad arguments checked first. */
static OrtStatus* virtual_make_device(void) {
  OrtKeyValuePairs* metadata = NULL;
  OrtHardwareDevice* bad = NULL;
  OrtStatus* status;
  if (virtual_device) return NULL;
  if (!virtual_is_invalid_argument(ep_api->CreateHardwareDevice((OrtHardwareDeviceType)7, 1, 1, "x", NULL, &bad)))
    return api->CreateStatus(ORT_EP_FAIL, "CreateHardwareDevice took device type 7");
  if (!virtual_is_invalid_argument(ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 1, 1, NULL, NULL, &bad)))
    return api->CreateStatus(ORT_EP_FAIL, "CreateHardwareDevice took a NULL vendor name");
  api->CreateKeyValuePairs(&metadata);
  api->AddKeyValuePair(metadata, "IsVirtual", "1");
  api->AddKeyValuePair(metadata, "Description", "ortvirt virtual GPU");
  status = ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, 0xB358, 0x51, "Contoso", metadata, &virtual_device);
  api->ReleaseKeyValuePairs(metadata);
  return status;
}

static void virtual_release_device(void) {
  if (virtual_device) ep_api->ReleaseHardwareDevice(virtual_device);
  virtual_device = NULL;
}

/* Why it cannot use a host device: the CPU is not its device; anything else it leaves "compatible". */
static OrtStatus* virtual_incompatibility(OrtEpFactory* f, const OrtHardwareDevice* hw,
                                          OrtDeviceEpIncompatibilityDetails* details) {
  (void)f;
  if (hw == virtual_device || api->HardwareDevice_Type(hw) != OrtHardwareDeviceType_CPU) return NULL;
  return ep_api->DeviceEpIncompatibilityDetails_SetDetails(details, OrtDeviceEpIncompatibility_DEVICE_INCOMPATIBLE,
                                                           11, "ortvirt runs on its virtual GPU only");
}

static void virtual_log(const char* path, const char* line) {
  FILE* f;
  if (!path || !*path) return;
  f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s\n", line);
  fclose(f);
}

/* "<label> reasons=.. error=.. notes=..": the environment's answer on `hw` for EP `name`. */
static OrtStatus* virtual_ask(const OrtEnv* env, const char* name, const OrtHardwareDevice* hw, const char* label,
                              const char* log) {
  OrtDeviceEpIncompatibilityDetails* details = NULL;
  uint32_t reasons = 0;
  int32_t code = 0;
  const char* notes = NULL;
  char line[256];
  OrtStatus* status = api->GetHardwareDeviceEpIncompatibilityDetails(env, name, hw, &details);
  if (!status) status = api->DeviceEpIncompatibilityDetails_GetReasonsBitmask(details, &reasons);
  if (!status) status = api->DeviceEpIncompatibilityDetails_GetErrorCode(details, &code);
  if (!status) status = api->DeviceEpIncompatibilityDetails_GetNotes(details, &notes);
  if (!status) {
    snprintf(line, sizeof line, "%s reasons=%u error=%d notes=%s", label, reasons, code, notes ? notes : "(none)");
    virtual_log(log, line);
  }
  if (details) api->ReleaseDeviceEpIncompatibilityDetails(details);
  return status;
}

static OrtStatus* virtual_check_env(const char* name, const OrtSessionOptions* options, const char* log) {
  OrtEnv* env = NULL;
  size_t n = 0, i;
  const OrtHardwareDevice* devices[16];
  OrtDeviceEpIncompatibilityDetails* details = NULL;
  const void* source = NULL;
  size_t source_size = 0;
  char line[64];
  OrtStatus* status;
  RETURN_IF(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ortvirt", &env));
  status = api->GetNumHardwareDevices(env, &n);
  if (!status && (n == 0 || n > 16)) status = api->CreateStatus(ORT_EP_FAIL, "GetNumHardwareDevices: not 1..16");
  if (!status) status = api->GetHardwareDevices(env, devices, n);
  for (i = 0; !status && i < n; ++i)
    if (api->HardwareDevice_Type(devices[i]) == OrtHardwareDeviceType_CPU)
      status = virtual_ask(env, name, devices[i], "cpu", log);
  if (!status) status = virtual_ask(env, name, virtual_device, "virtual", log);
  if (!status && !virtual_is_invalid_argument(
                     api->GetHardwareDeviceEpIncompatibilityDetails(env, "no such EP", devices[0], &details)))
    status = api->CreateStatus(ORT_EP_FAIL, "GetHardwareDeviceEpIncompatibilityDetails took an EP name nobody serves");
  if (!status && !virtual_is_invalid_argument(
                     api->GetHardwareDeviceEpIncompatibilityDetails(NULL, name, devices[0], &details)))
    status = api->CreateStatus(ORT_EP_FAIL, "GetHardwareDeviceEpIncompatibilityDetails took a NULL env");
  api->ReleaseEnv(env);
  if (!status) status = ep_api->SessionOptionsGetWeightlessSourceModelBuffer(options, &source, &source_size);
  if (!status && (source == NULL) != (source_size == 0))
    status = api->CreateStatus(ORT_EP_FAIL, "SessionOptionsGetWeightlessSourceModelBuffer: a buffer without a size");
  if (!status) {
    snprintf(line, sizeof line, "weightless bytes=%zu", source_size);
    virtual_log(log, line);
  }
  return status;
}

#endif /* ORT_TEST_VIRTUAL_H_ */
