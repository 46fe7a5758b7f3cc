/*
 * The "device" of the ORT_TEST_OWN_DEVICE build of ort_test_ep.c: memory of its own, as a GPU EP's is, so
 * that the host's handling of an ONNX Runtime EP's device memory can be checked without a GPU.
 *
 * Its memory is host memory the factory's allocator hands out and records (a table of live blocks): a
 * pointer is "on the device" when it lies inside one of them. The memory info ("OrtTestDevice", a GPU
 * memory device of vendor 0xE9) is added to each EP device with EpDevice_AddAllocatorInfo, so the host
 * must keep the EP's values there: Compute fails when an input or output is anywhere else, when the host
 * says a value lives elsewhere (Value_GetMemoryDevice, GetTensorMemoryInfo), or when the run's stream
 * (KernelContext_GetSyncStream) is not one of its streams. Built with ORT_TEST_NO_STREAMS, the factory is not
 * stream aware and Compute expects no stream.
 *
 * Data transfer copies with memcpy, checking that the device side of every copy is its memory. When the
 * environment variable ORT_TEST_COPY_LOG names a file, each copy appends "to_device" or "to_host" to it;
 * each stream flush appends "flush"; each Compute appends "sync <id> self <id>" (SyncStream_GetSyncId of the
 * run's stream, GetSyncIdForLastWaitOnSyncStream of the stream on itself).
 *
 * Included by ort_test_ep.c after `api` and `ep_api` are declared. Plain C.
 */
#ifndef ORT_TEST_DEVICE_H_
#define ORT_TEST_DEVICE_H_

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEVICE_MAX_BLOCKS 4096

typedef struct DeviceBlock {
  char* start;
  size_t size;
} DeviceBlock;

static DeviceBlock device_blocks[DEVICE_MAX_BLOCKS];
static pthread_mutex_t device_mutex = PTHREAD_MUTEX_INITIALIZER;
static OrtMemoryInfo* device_info;

/* The memory info of its memory, made once (CreateEpFactories) and kept for the process. */
static const OrtMemoryInfo* device_memory_info(void) {
  if (!device_info) {
    OrtStatus* status = api->CreateMemoryInfo_V2("OrtTestDevice", OrtMemoryInfoDeviceType_GPU, 0xE9, 0,
                                                 OrtDeviceMemoryType_DEFAULT, 64, OrtDeviceAllocator, &device_info);
    if (status) {
      api->ReleaseStatus(status);
      device_info = NULL;
    }
  }
  return device_info;
}

static void device_log(const char* what) {
  const char* path = getenv("ORT_TEST_COPY_LOG");
  FILE* f;
  if (!path || !*path) return;
  f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s\n", what);
  fclose(f);
}

/* Whether [p, p + size) lies inside a live block of its memory. */
static int device_owns(const void* p, size_t size) {
  int found = 0;
  size_t i;
  const char* c = (const char*)p;
  pthread_mutex_lock(&device_mutex);
  for (i = 0; i < DEVICE_MAX_BLOCKS && !found; ++i)
    found = device_blocks[i].start && c >= device_blocks[i].start &&
            c + size <= device_blocks[i].start + device_blocks[i].size;
  pthread_mutex_unlock(&device_mutex);
  return found;
}

/* ---- the allocator ---- */

static void* device_alloc(struct OrtAllocator* this_, size_t size) {
  char* p = (char*)malloc(size ? size : 1);
  size_t i;
  (void)this_;
  if (!p) return NULL;
  pthread_mutex_lock(&device_mutex);
  for (i = 0; i < DEVICE_MAX_BLOCKS && device_blocks[i].start; ++i) {
  }
  if (i < DEVICE_MAX_BLOCKS) {
    device_blocks[i].start = p;
    device_blocks[i].size = size;
  }
  pthread_mutex_unlock(&device_mutex);
  if (i == DEVICE_MAX_BLOCKS) {
    free(p);
    return NULL;
  }
  return p;
}

static void device_free(struct OrtAllocator* this_, void* p) {
  size_t i;
  (void)this_;
  if (!p) return;
  pthread_mutex_lock(&device_mutex);
  for (i = 0; i < DEVICE_MAX_BLOCKS; ++i)
    if (device_blocks[i].start == (char*)p) {
      device_blocks[i].start = NULL;
      device_blocks[i].size = 0;
      break;
    }
  pthread_mutex_unlock(&device_mutex);
  if (i < DEVICE_MAX_BLOCKS) free(p);
}

static const struct OrtMemoryInfo* device_allocator_info(const struct OrtAllocator* this_) {
  (void)this_;
  return device_info;
}

static OrtAllocator device_allocator = {1, device_alloc, device_free, device_allocator_info, NULL, NULL, NULL, NULL};

static OrtStatus* device_create_allocator(OrtEpFactory* f, const OrtMemoryInfo* info, const OrtKeyValuePairs* options,
                                          OrtAllocator** out) {
  const char* name = NULL;
  OrtStatus* status;
  (void)f, (void)options;
  status = api->MemoryInfoGetName(info, &name);
  if (status) return status;
  if (strcmp(name, "OrtTestDevice") != 0)
    return api->CreateStatus(ORT_INVALID_ARGUMENT, "ortdev: CreateAllocator for memory that is not its own");
  *out = &device_allocator;
  return NULL;
}

static void device_release_allocator(OrtEpFactory* f, OrtAllocator* allocator) { (void)f, (void)allocator; }

/* ---- data transfer ---- */

static int is_own_memory_device(const OrtMemoryDevice* d) {
  return d && ep_api->MemoryDevice_AreEqual(d, ep_api->MemoryInfo_GetMemoryDevice(device_info));
}

static bool device_can_copy(const OrtDataTransferImpl* this_ptr, const OrtMemoryDevice* src,
                            const OrtMemoryDevice* dst) {
  (void)this_ptr;
  return (is_own_memory_device(src) && ep_api->MemoryDevice_GetDeviceType(dst) == OrtMemoryInfoDeviceType_CPU) ||
         (is_own_memory_device(dst) && ep_api->MemoryDevice_GetDeviceType(src) == OrtMemoryInfoDeviceType_CPU);
}

static OrtStatus* device_copy_tensors(OrtDataTransferImpl* this_ptr, const OrtValue** src, OrtValue** dst,
                                      OrtSyncStream** streams, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    const void* from = NULL;
    void* to = NULL;
    size_t bytes = 0, dst_bytes = 0;
    const OrtMemoryDevice* src_device = ep_api->Value_GetMemoryDevice(src[i]);
    const OrtMemoryDevice* dst_device = ep_api->Value_GetMemoryDevice(dst[i]);
    int up;
    OrtStatus* status = api->GetTensorData(src[i], &from);
    if (!status) status = api->GetTensorMutableData(dst[i], &to);
    if (!status) status = api->GetTensorSizeInBytes(src[i], &bytes);
    if (!status) status = api->GetTensorSizeInBytes(dst[i], &dst_bytes);
    if (status) return status;
    if (!device_can_copy(this_ptr, src_device, dst_device))
      return api->CreateStatus(ORT_INVALID_ARGUMENT, "ortdev: CopyTensors between memories it cannot copy");
    if (bytes != dst_bytes) return api->CreateStatus(ORT_INVALID_ARGUMENT, "ortdev: CopyTensors of unequal sizes");
    up = is_own_memory_device(dst_device);
    if (!device_owns(up ? to : from, bytes))
      return api->CreateStatus(ORT_INVALID_ARGUMENT, "ortdev: CopyTensors: the device side is not its memory");
    if (streams && streams[i] && !ep_api->SyncStream_GetImpl(streams[i]))
      return api->CreateStatus(ORT_INVALID_ARGUMENT, "ortdev: CopyTensors on a stream without an implementation");
    if (bytes) memcpy(to, from, bytes);
    device_log(up ? "to_device" : "to_host");
  }
  return NULL;
}

static void device_release_transfer(OrtDataTransferImpl* this_ptr) { (void)this_ptr; }

static OrtDataTransferImpl device_transfer = {ORT_TEST_ASK_API, device_release_transfer, device_can_copy,
                                              device_copy_tensors};

static OrtStatus* device_create_data_transfer(OrtEpFactory* f, OrtDataTransferImpl** out) {
  (void)f;
  *out = &device_transfer;
  return NULL;
}

/* ---- streams ---- */

typedef struct DeviceStream {
  OrtSyncStreamImpl base;
  int tag; /* what GetHandle answers the address of: its "native queue" */
} DeviceStream;

static void stream_release(OrtSyncStreamImpl* this_ptr) { free(this_ptr); }
static void* stream_handle(OrtSyncStreamImpl* this_ptr) { return &((DeviceStream*)this_ptr)->tag; }
static OrtStatus* stream_notification(OrtSyncStreamImpl* this_ptr, OrtSyncNotificationImpl** out) {
  (void)this_ptr, (void)out;
  return api->CreateStatus(ORT_NOT_IMPLEMENTED, "ortdev: no notifications");
}
static OrtStatus* stream_flush(OrtSyncStreamImpl* this_ptr) {
  (void)this_ptr;
  device_log("flush");
  return NULL;
}
static OrtStatus* stream_run_end(OrtSyncStreamImpl* this_ptr) {
  (void)this_ptr;
  return NULL;
}

/* ORT_TEST_NO_STREAMS: a device whose work the host cannot wait for through streams (OrtEp::Sync must do). */
static bool device_is_stream_aware(const OrtEpFactory* f) {
  (void)f;
#ifdef ORT_TEST_NO_STREAMS
  return false;
#else
  return true;
#endif
}

static OrtStatus* device_create_stream(OrtEpFactory* f, const OrtMemoryDevice* memory_device,
                                       const OrtKeyValuePairs* options, OrtSyncStreamImpl** out) {
  DeviceStream* s;
  (void)f, (void)options;
  if (!is_own_memory_device(memory_device))
    return api->CreateStatus(ORT_INVALID_ARGUMENT, "ortdev: a stream asked for memory that is not its own");
  s = (DeviceStream*)calloc(1, sizeof *s);
  if (!s) return api->CreateStatus(ORT_FAIL, "out of memory");
  s->base.ort_version_supported = ORT_TEST_ASK_API;
  s->base.Release = stream_release;
  s->base.GetHandle = stream_handle;
  s->base.CreateNotification = stream_notification;
  s->base.Flush = stream_flush;
  s->base.OnSessionRunEnd = stream_run_end;
  *out = &s->base;
  return NULL;
}

/* ---- Compute's checks ---- */

/* `value` (an input or output of Compute) must be in its memory, and the host must say so. */
static OrtStatus* device_check_value(const OrtValue* value, const char* what) {
  const void* data = NULL;
  size_t bytes = 0;
  const OrtMemoryInfo* info = NULL;
  const char* name = NULL;
  char message[160];
  OrtStatus* status = api->GetTensorData(value, &data);
  if (!status) status = api->GetTensorSizeInBytes(value, &bytes);
  if (!status) status = api->GetTensorMemoryInfo(value, &info);
  if (!status) status = api->MemoryInfoGetName(info, &name);
  if (status) return status;
  if (!device_owns(data, bytes) || !is_own_memory_device(ep_api->Value_GetMemoryDevice(value)) ||
      strcmp(name, "OrtTestDevice") != 0) {
    snprintf(message, sizeof message, "ortdev: Compute: an %s is not in its device memory (memory info '%s')", what,
             name);
    return api->CreateStatus(ORT_EP_FAIL, message);
  }
  return NULL;
}

/* The run's stream must be one of its own, its handle what GetGPUComputeStream answers. */
static OrtStatus* device_check_stream(const OrtKernelContext* context) {
  OrtSyncStream* stream = NULL;
  void* handle = NULL;
  const OrtSyncStreamImpl* impl;
  OrtStatus* status = api->KernelContext_GetSyncStream(context, &stream);
  if (!status) status = api->KernelContext_GetGPUComputeStream(context, &handle);
  if (status) return status;
#ifdef ORT_TEST_NO_STREAMS
  if (stream || handle) return api->CreateStatus(ORT_EP_FAIL, "ortdev: Compute: a stream, and it is not stream aware");
  return NULL;
#endif
  impl = stream ? ep_api->SyncStream_GetImpl(stream) : NULL;
  if (!impl || impl->GetHandle != stream_handle || api->SyncStream_GetHandle(stream) != handle ||
      handle != &((const DeviceStream*)impl)->tag)
    return api->CreateStatus(ORT_EP_FAIL, "ortdev: Compute: the run's stream is not one of its streams");
  {
    /* How many times the host synchronized this stream so far, and what the stream waited for on itself. */
    char line[64];
    snprintf(line, sizeof line, "sync %llu self %llu", (unsigned long long)ep_api->SyncStream_GetSyncId(stream),
             (unsigned long long)ep_api->GetSyncIdForLastWaitOnSyncStream(stream, stream));
    device_log(line);
  }
  return NULL;
}

#endif /* ORT_TEST_DEVICE_H_ */
