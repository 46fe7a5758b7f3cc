// OpenCL status codes as errors: every failing OpenCL call becomes an ephost::sdk::Error naming the call,
// what it was doing (a kernel, a copy, a device) and the CL error name, so a user can act on it.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>

namespace ephost_opencl {

// "CL_OUT_OF_RESOURCES", "CL_BUILD_PROGRAM_FAILURE", ... or "CL error <code>" for a code we do not know.
std::string cl_error_name(cl_int code);

// Throws ephost::sdk::Error (EPHOST_EP_FAIL) when `code` is not CL_SUCCESS: "<call> failed (<what>): <name>".
void check_cl(cl_int code, const char* call, const std::string& what);

// Like check_cl, with out-of-memory codes reported as EPHOST_FAIL (the ABI's code for exhausted memory).
void check_cl_alloc(cl_int code, const char* call, const std::string& what);

}  // namespace ephost_opencl
