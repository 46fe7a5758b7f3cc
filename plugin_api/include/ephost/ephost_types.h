/*
 * ephost_types.h — types shared by the application ABI (ephost_c_api.h) and the plugin ABI
 * (ephost_plugin.h).
 *
 * Pure C, no dependencies. Every enum value here is frozen: values are only ever added, never
 * renumbered or removed.
 */
#ifndef EPHOST_TYPES_H_
#define EPHOST_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define EPHOST_EXPORT __declspec(dllexport)
#else
#define EPHOST_EXPORT __attribute__((visibility("default")))
#endif

/* Every enum of the ABI has a fixed underlying type in C++, int32_t: the size and calling convention
 * are those of the C enum (an int), so the ABI is unchanged, but any int32_t value is then a valid
 * value of the enum type in C++. A C caller may pass any int; a C++ host that received an enum whose
 * range were only its enumerators would have undefined behaviour before it could refuse the value
 * (UBSan's -fsanitize=enum found this with GetElementSize(0xFFFFFFFF)). Added in ABI 3; compatible
 * with every earlier version. */
#ifdef __cplusplus
#define EPHOST_ENUM_BASE : int32_t
#else
#define EPHOST_ENUM_BASE
#endif

/* The size of `type` up to and including `member`: the struct_size of a version of a growing struct
 * whose last member is `member`. */
#define EPHOST_STRUCT_SIZE_THROUGH(type, member) (offsetof(type, member) + sizeof(((type*)0)->member))

/* True when a struct whose first member is `struct_size` is large enough to contain `member`: how a
 * reader checks for a member added after the first version of that struct. */
#define EPHOST_STRUCT_HAS(ptr, type, member) ((ptr)->struct_size >= EPHOST_STRUCT_SIZE_THROUGH(type, member))

/*
 * Status codes. The numbering is ONNX Runtime's (OrtErrorCode) so that users recognise them.
 * Added in ABI 1. ephost's own codes start at 100, clear of the codes ONNX Runtime keeps adding.
 */
typedef enum EphostStatusCode EPHOST_ENUM_BASE {
  EPHOST_OK = 0,
  EPHOST_FAIL = 1,
  EPHOST_INVALID_ARGUMENT = 2,
  EPHOST_NO_SUCHFILE = 3,
  EPHOST_NO_MODEL = 4,
  EPHOST_ENGINE_ERROR = 5,
  EPHOST_RUNTIME_EXCEPTION = 6,
  EPHOST_INVALID_PROTOBUF = 7,
  EPHOST_MODEL_LOADED = 8,
  EPHOST_NOT_IMPLEMENTED = 9,
  EPHOST_INVALID_GRAPH = 10,
  EPHOST_EP_FAIL = 11,
  /* since API 4 and plugin ABI 4: a run stopped early, and why. */
  EPHOST_CANCELLED = 100,        /* the run's RunOptions terminate was set */
  EPHOST_DEADLINE_EXCEEDED = 101 /* the run's timeout, or session.compile_timeout_ms, passed */
} EphostStatusCode;

/*
 * An error: a code and a message. NULL always means success (EPHOST_OK).
 * Created by the host (plugins create them through EphostHostApi::status_create). Whoever receives a
 * non-NULL status owns it and must release it exactly once (EphostApi::ReleaseStatus for
 * applications, EphostHostApi::status_release for plugins), or pass it on as its own return value.
 */
typedef struct EphostStatus EphostStatus;

/*
 * Tensor element types. The numbering is ONNX's TensorProto.DataType, so a value read from a model
 * can be used as is. Added in ABI 1.
 */
typedef enum EphostElementType EPHOST_ENUM_BASE {
  EPHOST_ELEMENT_UNDEFINED = 0,
  EPHOST_ELEMENT_FLOAT = 1,
  EPHOST_ELEMENT_UINT8 = 2,
  EPHOST_ELEMENT_INT8 = 3,
  EPHOST_ELEMENT_UINT16 = 4,
  EPHOST_ELEMENT_INT16 = 5,
  EPHOST_ELEMENT_INT32 = 6,
  EPHOST_ELEMENT_INT64 = 7,
  EPHOST_ELEMENT_STRING = 8, /* data is an array of `const char*`, NUL-terminated UTF-8 */
  EPHOST_ELEMENT_BOOL = 9,   /* one byte per element, 0 or 1 */
  EPHOST_ELEMENT_FLOAT16 = 10,
  EPHOST_ELEMENT_DOUBLE = 11,
  EPHOST_ELEMENT_UINT32 = 12,
  EPHOST_ELEMENT_UINT64 = 13,
  EPHOST_ELEMENT_COMPLEX64 = 14,
  EPHOST_ELEMENT_COMPLEX128 = 15,
  EPHOST_ELEMENT_BFLOAT16 = 16,
  /* --- since ABI 4 and API 4: the element types of ONNX opsets 19 to 25 ---
   * Same numbers as ONNX's TensorProto.DataType. The float8 types take one byte per element. The
   * 4-bit and 2-bit types are PACKED: two (4-bit) or four (2-bit) elements per byte, the first element
   * in the least significant bits, as ONNX stores them; a tensor of n elements takes
   * EphostTensorDataSize(type, n) bytes, and EphostElementSize answers 0 for them (not a whole number
   * of bytes). A plugin that does not know a type never claims a node that uses it. */
  EPHOST_ELEMENT_FLOAT8E4M3FN = 17,   /* 1 sign, 4 exponent, 3 mantissa bits; NaN only (no Inf), -0 */
  EPHOST_ELEMENT_FLOAT8E4M3FNUZ = 18, /* as E4M3FN with bias 8; one NaN (0x80), no Inf, no -0 */
  EPHOST_ELEMENT_FLOAT8E5M2 = 19,     /* 1 sign, 5 exponent, 2 mantissa bits; IEEE-like, with Inf and NaN */
  EPHOST_ELEMENT_FLOAT8E5M2FNUZ = 20, /* as E5M2 with bias 16; one NaN (0x80), no Inf, no -0 */
  EPHOST_ELEMENT_UINT4 = 21,          /* 0..15, two per byte */
  EPHOST_ELEMENT_INT4 = 22,           /* -8..7 (two's complement), two per byte */
  EPHOST_ELEMENT_FLOAT4E2M1 = 23,     /* 1 sign, 2 exponent, 1 mantissa bits; no Inf, no NaN; two per byte */
  EPHOST_ELEMENT_FLOAT8E8M0 = 24,     /* an exponent only: 2^(bits-127); 0xFF is NaN (MX scales) */
  EPHOST_ELEMENT_UINT2 = 25,          /* 0..3, four per byte */
  EPHOST_ELEMENT_INT2 = 26            /* -2..1 (two's complement), four per byte */
} EphostElementType;

/* ONNX's lowercase name of an element type ("float", "int64", "bfloat16"...), "undefined" when unknown.
 * Header-only (no symbol), so applications, plugins and the host name types the same way. */
static inline const char* EphostElementTypeName(int32_t elem_type) {
  switch (elem_type) {
    case EPHOST_ELEMENT_FLOAT: return "float";
    case EPHOST_ELEMENT_UINT8: return "uint8";
    case EPHOST_ELEMENT_INT8: return "int8";
    case EPHOST_ELEMENT_UINT16: return "uint16";
    case EPHOST_ELEMENT_INT16: return "int16";
    case EPHOST_ELEMENT_INT32: return "int32";
    case EPHOST_ELEMENT_INT64: return "int64";
    case EPHOST_ELEMENT_STRING: return "string";
    case EPHOST_ELEMENT_BOOL: return "bool";
    case EPHOST_ELEMENT_FLOAT16: return "float16";
    case EPHOST_ELEMENT_DOUBLE: return "double";
    case EPHOST_ELEMENT_UINT32: return "uint32";
    case EPHOST_ELEMENT_UINT64: return "uint64";
    case EPHOST_ELEMENT_COMPLEX64: return "complex64";
    case EPHOST_ELEMENT_COMPLEX128: return "complex128";
    case EPHOST_ELEMENT_BFLOAT16: return "bfloat16";
    case EPHOST_ELEMENT_FLOAT8E4M3FN: return "float8e4m3fn";
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
    case EPHOST_ELEMENT_FLOAT8E5M2: return "float8e5m2";
    case EPHOST_ELEMENT_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
    case EPHOST_ELEMENT_UINT4: return "uint4";
    case EPHOST_ELEMENT_INT4: return "int4";
    case EPHOST_ELEMENT_FLOAT4E2M1: return "float4e2m1";
    case EPHOST_ELEMENT_FLOAT8E8M0: return "float8e8m0";
    case EPHOST_ELEMENT_UINT2: return "uint2";
    case EPHOST_ELEMENT_INT2: return "int2";
    default: return "undefined";
  }
}

/* Bytes per element of an element type: sizeof(const char*) for strings (their data is an array of
 * pointers), 0 for EPHOST_ELEMENT_UNDEFINED and unknown values, and (since ABI 4 and API 4) 0 for the
 * packed sub-byte types (int4, uint4, float4e2m1, int2, uint2): size those with EphostTensorDataSize. Header-only, like
 * EphostElementTypeName, so that it works before (and without) a library is loaded; the application
 * API's GetElementSize answers the same. Added with application API 2 and plugin ABI 2. */
static inline size_t EphostElementSize(int32_t elem_type) {
  switch (elem_type) {
    case EPHOST_ELEMENT_UINT8:
    case EPHOST_ELEMENT_INT8:
    case EPHOST_ELEMENT_BOOL:
    case EPHOST_ELEMENT_FLOAT8E4M3FN:
    case EPHOST_ELEMENT_FLOAT8E4M3FNUZ:
    case EPHOST_ELEMENT_FLOAT8E5M2:
    case EPHOST_ELEMENT_FLOAT8E5M2FNUZ:
    case EPHOST_ELEMENT_FLOAT8E8M0: return 1;
    case EPHOST_ELEMENT_UINT16:
    case EPHOST_ELEMENT_INT16:
    case EPHOST_ELEMENT_FLOAT16:
    case EPHOST_ELEMENT_BFLOAT16: return 2;
    case EPHOST_ELEMENT_FLOAT:
    case EPHOST_ELEMENT_INT32:
    case EPHOST_ELEMENT_UINT32: return 4;
    case EPHOST_ELEMENT_INT64:
    case EPHOST_ELEMENT_UINT64:
    case EPHOST_ELEMENT_DOUBLE:
    case EPHOST_ELEMENT_COMPLEX64: return 8;
    case EPHOST_ELEMENT_COMPLEX128: return 16;
    case EPHOST_ELEMENT_STRING: return sizeof(const char*);
    default: return 0;
  }
}

/* Bits per element: 8 times EphostElementSize for whole-byte types, 4 for int4, uint4 and
 * float4e2m1, 2 for int2 and uint2, 0 for EPHOST_ELEMENT_UNDEFINED and unknown values. A type is known
 * exactly when this is not 0. Header-only. Added in ABI 4 and API 4. */
static inline size_t EphostElementBits(int32_t elem_type) {
  switch (elem_type) {
    case EPHOST_ELEMENT_UINT4:
    case EPHOST_ELEMENT_INT4:
    case EPHOST_ELEMENT_FLOAT4E2M1: return 4;
    case EPHOST_ELEMENT_UINT2:
    case EPHOST_ELEMENT_INT2: return 2;
    default: return 8 * EphostElementSize(elem_type);
  }
}

/* Bytes that `count` elements of `elem_type` take, packed as ONNX packs them: count times
 * EphostElementSize for whole-byte types; count/2 (4-bit) or count/4 (2-bit) rounded up for the packed
 * types (the unused high bits of the last byte are zero). 0 for unknown types; SIZE_MAX when the
 * byte count does not fit in size_t. Header-only. Added in ABI 4 and API 4. */
static inline size_t EphostTensorDataSize(int32_t elem_type, size_t count) {
  const size_t bits = EphostElementBits(elem_type);
  if (bits == 0) return 0;
  if (bits < 8) return count / (8 / bits) + (count % (8 / bits) != 0 ? 1 : 0);
  if (count > (size_t)-1 / (bits / 8)) return (size_t)-1;
  return count * (bits / 8);
}

/* Severity of a log message. Added in ABI 1. */
typedef enum EphostLogLevel EPHOST_ENUM_BASE {
  EPHOST_LOG_VERBOSE = 0,
  EPHOST_LOG_INFO = 1,
  EPHOST_LOG_WARNING = 2,
  EPHOST_LOG_ERROR = 3,
  EPHOST_LOG_FATAL = 4
} EphostLogLevel;

/* The kind of device a plugin drives. Added in ABI 1; ACCELERATOR (a DSP, an FPGA, any other
 * accelerator) added in plugin ABI 3 and application API 3. */
typedef enum EphostDeviceType EPHOST_ENUM_BASE {
  EPHOST_DEVICE_CPU = 0,
  EPHOST_DEVICE_GPU = 1,
  EPHOST_DEVICE_NPU = 2,
  EPHOST_DEVICE_ACCELERATOR = 3
} EphostDeviceType;

/* Kinds of memory a device's allocator offers (EphostDeviceInfo::memory_kinds is a bitmask of
 * EPHOST_MEMORY_KIND_BIT(kind)). Added in plugin ABI 3 and application API 3.
 *   DEVICE           memory of the device: opaque to the host, reached only through the plugin.
 *   HOST_ACCESSIBLE  host memory the device reads and writes fast (pinned, page-locked): the host may
 *                    use it as ordinary host memory (handle + offset is a host pointer). */
typedef enum EphostMemoryKind EPHOST_ENUM_BASE {
  EPHOST_MEMORY_DEVICE = 0,
  EPHOST_MEMORY_HOST_ACCESSIBLE = 1
} EphostMemoryKind;
#define EPHOST_MEMORY_KIND_BIT(kind) (1u << (unsigned)(kind))

/* Where a tensor's elements are. Added in plugin ABI 3 and application API 3. */
typedef enum EphostMemoryLocation EPHOST_ENUM_BASE {
  EPHOST_LOCATION_HOST = 0,
  EPHOST_LOCATION_DEVICE = 1
} EphostMemoryLocation;

/*
 * What a value is, in ONNX's type system: a tensor, a sequence of tensors, or an optional (a tensor
 * or a sequence that may be absent). Added in plugin ABI 2 and application API 2.
 *
 * Declared (static) types use TENSOR, SEQUENCE and OPTIONAL. Values at run time are TENSOR,
 * SEQUENCE or NONE: an optional that holds something is simply that tensor or sequence, and an
 * empty one is NONE (as in ONNX Runtime). UNDEFINED means unknown, or an absent optional input.
 */
typedef enum EphostValueKind EPHOST_ENUM_BASE {
  EPHOST_VALUE_UNDEFINED = 0,
  EPHOST_VALUE_TENSOR = 1,
  EPHOST_VALUE_SEQUENCE = 2, /* a sequence of tensors, all of one element type */
  EPHOST_VALUE_OPTIONAL = 3, /* declared types only */
  EPHOST_VALUE_NONE = 4      /* run-time values only: an empty optional */
} EphostValueKind;

/* "tensor", "sequence", "optional", "none", "undefined". Header-only, like EphostElementTypeName. */
static inline const char* EphostValueKindName(int32_t kind) {
  switch (kind) {
    case EPHOST_VALUE_TENSOR: return "tensor";
    case EPHOST_VALUE_SEQUENCE: return "sequence";
    case EPHOST_VALUE_OPTIONAL: return "optional";
    case EPHOST_VALUE_NONE: return "none";
    default: return "undefined";
  }
}

#ifdef __cplusplus
}
#endif

#endif /* EPHOST_TYPES_H_ */
