#include "device_program.h"

#include <algorithm>
#include <cstring>

#include "cl_runtime.h"
#include "codegen.h"
#include "fusion.h"
#include "launch.h"
#include "shapes.h"

namespace ephost_opencl {
namespace {

using ephost::sdk::fail;

// Owns one OpenCL object.
template <typename T, cl_int (*Release)(T)>
class Owned {
 public:
  explicit Owned(T t = nullptr) : t_(t) {}
  ~Owned() {
    if (t_) Release(t_);
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  T get() const { return t_; }
  T release() {
    T t = t_;
    t_ = nullptr;
    return t;
  }

 private:
  T t_;
};
using OwnedProgram = Owned<cl_program, clReleaseProgram>;
using OwnedKernel = Owned<cl_kernel, clReleaseKernel>;
using OwnedMem = Owned<cl_mem, clReleaseMemObject>;

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr) != CL_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log.size() > 4000 ? log.substr(0, 4000) + " ..." : log;
}

void build(cl_program program, const ClDevice& device, const std::string& what) {
  cl_device_id id = device.id();
  const cl_int err = clBuildProgram(program, 1, &id, build_options(device.identity()).c_str(), nullptr, nullptr);
  if (err == CL_SUCCESS) return;
  const std::string log = build_log(program, id);
  fail(EPHOST_EP_FAIL, "opencl: clBuildProgram failed (" + what + " on " + device.label() + "): " + cl_error_name(err) +
                           (log.empty() ? "" : "; build log:\n" + log));
}

void set_arg(cl_kernel kernel, cl_uint index, size_t size, const void* value, const std::string& what) {
  check_cl(clSetKernelArg(kernel, index, size, value), "clSetKernelArg", what + ", argument " + std::to_string(index));
}

size_t round_up(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

}  // namespace

std::vector<uint8_t> build_binary(uint32_t device, const Program& program, const std::string& source, const std::string& what) {
  ClDevice& d = ClRuntime::instance().device(device);
  cl_context context = d.context();
  cl_int err = CL_SUCCESS;
  const char* text = source.c_str();
  const size_t length = source.size();
  OwnedProgram built(clCreateProgramWithSource(context, 1, &text, &length, &err));
  check_cl(err, "clCreateProgramWithSource", what + " on " + d.label());
  build(built.get(), d, what);

  // Warm every kernel: an empty grid (all of P zero) in the small-grid and the large-grid variant.
  OwnedMem dummy(clCreateBuffer(context, CL_MEM_READ_WRITE, 64, nullptr, &err));
  check_cl_alloc(err, "clCreateBuffer", "warming " + what);
  cl_command_queue queue = d.default_queue();
  std::vector<OwnedKernel> kernels;
  const size_t wg = program.work_group_size;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const std::string label = "kernel " + kernel_name(k) + " of " + what;
    kernels.emplace_back(clCreateKernel(built.get(), kernel_name(k).c_str(), &err));
    check_cl(err, "clCreateKernel", label);
    cl_kernel kernel = kernels.back().get();
    const cl_uint buffers = static_cast<cl_uint>(kernel_params(program, program.kernels[k]).size());
    const cl_mem mem = dummy.get();
    const cl_ulong zero = 0;
    for (cl_uint i = 0; i < buffers; ++i) {
      set_arg(kernel, 2 * i, sizeof(cl_mem), &mem, label);
      set_arg(kernel, 2 * i + 1, sizeof(cl_ulong), &zero, label);
    }
    const cl_int16 P{};
    const cl_float4 F{};
    set_arg(kernel, 2 * buffers, sizeof(cl_mem), &mem, label);
    set_arg(kernel, 2 * buffers + 1, sizeof(P), &P, label);
    set_arg(kernel, 2 * buffers + 2, sizeof(F), &F, label);
    const cl_uint dims = kernel_work_dims(program, program.kernels[k]);
    const size_t local[3] = {wg, 1, 1};
    for (size_t global0 : {wg, round_up(65536, wg)}) {
      const size_t global[3] = {global0, 1, 1};
      check_cl(clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, global, local, 0, nullptr, nullptr),
               "clEnqueueNDRangeKernel", "warming " + label);
    }
  }
  check_cl(clFinish(queue), "clFinish", "warming the kernels of " + what);
  size_t size = 0;
  check_cl(clGetProgramInfo(built.get(), CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr), "clGetProgramInfo",
           "CL_PROGRAM_BINARY_SIZES of " + what);
  if (size == 0) fail(EPHOST_EP_FAIL, "opencl: " + d.label() + " gives no program binary for " + what);
  std::vector<uint8_t> binary(size);
  unsigned char* out = binary.data();
  check_cl(clGetProgramInfo(built.get(), CL_PROGRAM_BINARIES, sizeof(out), &out, nullptr), "clGetProgramInfo",
           "CL_PROGRAM_BINARIES of " + what);
  return binary;
}

DeviceProgram::DeviceProgram(uint32_t device, std::shared_ptr<const Program> program, const std::vector<uint8_t>& binary,
                             std::string what)
    : device_(device), program_(std::move(program)), what_(std::move(what)) {
  ClDevice& d = ClRuntime::instance().device(device);
  cl_context context = d.context();
  cl_device_id id = d.id();
  cl_int err = CL_SUCCESS, status = CL_SUCCESS;
  const unsigned char* bytes = binary.data();
  const size_t size = binary.size();
  OwnedProgram created(clCreateProgramWithBinary(context, 1, &id, &size, &bytes, &status, &err));
  check_cl(err, "clCreateProgramWithBinary", what_ + " on " + d.label());
  check_cl(status, "clCreateProgramWithBinary (binary status)", what_ + " on " + d.label());
  build(created.get(), d, what_);
  std::vector<OwnedKernel> kernels;
  for (size_t k = 0; k < program_->kernels.size(); ++k) {
    kernels.emplace_back(clCreateKernel(created.get(), kernel_name(k).c_str(), &err));
    check_cl(err, "clCreateKernel", kernel_label(k));
  }
  uint64_t total = 0;
  const std::vector<uint64_t> offsets = weight_offsets(*program_, &total);
  std::vector<float> staging(std::max<uint64_t>(total, 16), 0.0f);
  for (size_t w = 0; w < program_->weights.size(); ++w)
    std::copy(program_->weights[w].begin(), program_->weights[w].end(), staging.begin() + static_cast<ptrdiff_t>(offsets[w]));
  OwnedMem weights(clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, staging.size() * sizeof(float),
                                  staging.data(), &err));
  check_cl_alloc(err, "clCreateBuffer", "the weights of " + what_ + " (" + std::to_string(staging.size() * sizeof(float)) + " bytes)");
  plan_temporaries();
  cl_program_ = created.release();
  for (auto& k : kernels) kernels_.push_back(k.release());
  weights_ = weights.release();
}

DeviceProgram::~DeviceProgram() {
  for (cl_kernel k : kernels_) clReleaseKernel(k);
  if (cl_program_) clReleaseProgram(cl_program_);
  if (weights_) clReleaseMemObject(weights_);
}

std::string DeviceProgram::kernel_label(size_t k) const {
  const KernelPlan& plan = program_->kernels[k];
  const int32_t op = plan.anchor >= 0 ? plan.anchor : plan.epilogue.front();
  return "kernel " + kernel_name(k) + " (node '" + program_->ops[static_cast<size_t>(op)].name + "'" +
         (plan.epilogue.empty() ? "" : " + " + std::to_string(plan.epilogue.size()) + " fused") + ") of " + what_;
}

void DeviceProgram::plan_temporaries() {
  const Program& p = *program_;
  const size_t n = p.values.size();
  root_.resize(n);
  for (size_t v = 0; v < n; ++v) root_[v] = static_cast<int32_t>(v);
  for (const Op& op : p.ops)
    if (op.kind == OpKind::kView) root_[op.outputs[0]] = root_[op.inputs[0]];
  stored_.assign(n, false);
  std::vector<bool> output(n, false);
  for (int32_t v : p.outputs) output[v] = true;
  std::vector<int64_t> index(n, -1);
  for (size_t k = 0; k < p.kernels.size(); ++k)
    for (int32_t v : p.kernels[k].stores) {
      stored_[v] = true;
      if (!output[v]) {
        index[v] = static_cast<int64_t>(temporaries_.size());
        temporaries_.push_back({v, k, k});
      }
    }
  for (size_t k = 0; k < p.kernels.size(); ++k)
    for (const KernelParam& param : kernel_params(p, p.kernels[k])) {
      const int32_t r = root_[param.value];
      if (param.kind != KernelParam::Kind::kStore && index[r] >= 0)
        temporaries_[static_cast<size_t>(index[r])].last = std::max(temporaries_[static_cast<size_t>(index[r])].last, k);
    }
  for (int32_t v : p.outputs)  // a view of a temporary is copied to its output after the last kernel
    if (index[root_[v]] >= 0 && root_[v] != v) temporaries_[static_cast<size_t>(index[root_[v]])].last = p.kernels.size();
}

void DeviceProgram::bind_inputs(ephost::sdk::KernelContext& ctx, const std::vector<size_t>& bindings, cl_command_queue queue,
                                RunShapes& shapes, std::vector<Memory>& mem) {
  const Program& p = *program_;
  if (bindings.size() != p.inputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "opencl: " + what_ + " expects " + std::to_string(p.inputs.size()) + " inputs");
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const int32_t v = p.inputs[i];
    const ValueDesc& d = p.values[static_cast<size_t>(v)];
    const EphostTensorMemory m = ctx.input_memory(bindings[i]);
    if (m.elem_type == EPHOST_ELEMENT_UNDEFINED) fail(EPHOST_INVALID_ARGUMENT, "opencl: input '" + d.name + "' is missing");
    const std::vector<int64_t> shape(m.shape, m.shape + m.rank);
    if (d.placement == Placement::kDevice) {
      if (m.elem_type != EPHOST_ELEMENT_FLOAT)
        fail(EPHOST_INVALID_ARGUMENT, "opencl: input '" + d.name + "' is " + EphostElementTypeName(m.elem_type) + ", not float");
      if (m.location != EPHOST_LOCATION_DEVICE || m.device != device_)
        fail(EPHOST_INVALID_ARGUMENT, "opencl: input '" + d.name + "' is not in the memory of device " + std::to_string(device_));
      if (shape.size() != d.dims.size())
        fail(EPHOST_INVALID_ARGUMENT, "opencl: input '" + d.name + "' has rank " + std::to_string(shape.size()) + ", the program " +
                                          std::to_string(d.dims.size()));
      mem[static_cast<size_t>(v)] = {static_cast<cl_mem>(m.buffer.handle), m.buffer.offset};
    } else {
      if (m.elem_type != EPHOST_ELEMENT_INT64 && m.elem_type != EPHOST_ELEMENT_INT32)
        fail(EPHOST_INVALID_ARGUMENT, "opencl: input '" + d.name + "' is " + EphostElementTypeName(m.elem_type) + ", not an integer tensor");
      const size_t count = static_cast<size_t>(element_count(shape));
      const size_t width = EphostElementSize(m.elem_type);
      std::vector<uint8_t> bytes(count * width);
      if (m.location == EPHOST_LOCATION_HOST) {
        std::copy_n(static_cast<const uint8_t*>(m.host_data), bytes.size(), bytes.begin());
      } else if (!bytes.empty()) {
        check_cl(clEnqueueReadBuffer(queue, static_cast<cl_mem>(m.buffer.handle), CL_TRUE, m.buffer.offset, bytes.size(),
                                     bytes.data(), 0, nullptr, nullptr),
                 "clEnqueueReadBuffer", "integer input '" + d.name + "' of " + what_);
      }
      std::vector<int64_t>& data = shapes.data[static_cast<size_t>(v)];
      data.resize(count);
      for (size_t e = 0; e < count; ++e) {
        if (width == 8) {
          std::memcpy(&data[e], bytes.data() + 8 * e, 8);
        } else {
          int32_t x;
          std::memcpy(&x, bytes.data() + 4 * e, 4);
          data[e] = x;
        }
      }
    }
    shapes.shape[static_cast<size_t>(v)] = shape;
    shapes.known[static_cast<size_t>(v)] = true;
  }
}

void DeviceProgram::run(ephost::sdk::KernelContext& ctx, const std::vector<size_t>& bindings) {
  const Program& p = *program_;
  ClDevice& d = ClRuntime::instance().device(device_);
  EphostStream* stream = ctx.stream();
  cl_command_queue queue = stream ? reinterpret_cast<ClStream*>(stream)->queue : d.default_queue();
  RunShapes shapes = start_shapes(p);
  std::vector<Memory> mem(p.values.size());
  bind_inputs(ctx, bindings, queue, shapes, mem);
  infer_shapes(p, shapes);
  check_kernel_shapes(p, shapes);

  // Outputs: kernels write straight into those they store; the others are copied or written.
  if (ctx.num_outputs() != p.outputs.size())
    fail(EPHOST_INVALID_ARGUMENT, "opencl: the host expects " + std::to_string(ctx.num_outputs()) + " outputs of " + what_ +
                                      ", the program makes " + std::to_string(p.outputs.size()));
  struct Copy {
    int32_t value;
    Memory to;
    size_t bytes;
  };
  std::vector<Copy> copies;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const int32_t v = p.outputs[o];
    const ValueDesc& desc = p.values[static_cast<size_t>(v)];
    const std::vector<int64_t>& shape = shapes.shape[static_cast<size_t>(v)];
    const EphostTensorMemory out = ctx.output_device(o, desc.elem_type, shape);
    const Memory target{static_cast<cl_mem>(out.buffer.handle), out.buffer.offset};
    const size_t bytes = static_cast<size_t>(element_count(shape)) * EphostElementSize(desc.elem_type);
    if (desc.placement == Placement::kDevice && stored_[static_cast<size_t>(v)]) {
      mem[static_cast<size_t>(v)] = target;
    } else if (bytes == 0) {
      continue;
    } else if (desc.placement == Placement::kDevice || desc.elem_type == EPHOST_ELEMENT_FLOAT) {
      copies.push_back({v, target, bytes});
    } else {
      const std::vector<int64_t>& data = shapes.data[static_cast<size_t>(v)];
      std::vector<int32_t> narrow(data.begin(), data.end());
      const void* src = desc.elem_type == EPHOST_ELEMENT_INT64 ? static_cast<const void*>(data.data()) : narrow.data();
      check_cl(clEnqueueWriteBuffer(queue, target.mem, CL_TRUE, target.offset, bytes, src, 0, nullptr, nullptr),
               "clEnqueueWriteBuffer", "output '" + desc.name + "' of " + what_);
    }
  }

  // Temporaries: one block per run, values placed by lifetime (first fit).
  std::vector<std::pair<size_t, size_t>> placed;  // offset, bytes, per temporary
  size_t arena_bytes = 0;
  for (size_t t = 0; t < temporaries_.size(); ++t) {
    const Temporary& tmp = temporaries_[t];
    const size_t bytes = round_up(std::max<size_t>(static_cast<size_t>(element_count(shapes.shape[tmp.value])) * 4, 1), 256);
    size_t at = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t u = 0; u < t; ++u) {
        const Temporary& other = temporaries_[u];
        const bool alive_together = other.first <= tmp.last && tmp.first <= other.last;
        if (alive_together && placed[u].first < at + bytes && at < placed[u].first + placed[u].second) {
          at = placed[u].first + placed[u].second;
          moved = true;
        }
      }
    }
    placed.emplace_back(at, bytes);
    arena_bytes = std::max(arena_bytes, at + bytes);
  }
  cl_int err = CL_SUCCESS;
  OwnedMem arena(arena_bytes ? clCreateBuffer(d.context(), CL_MEM_READ_WRITE, arena_bytes, nullptr, &err) : nullptr);
  check_cl_alloc(err, "clCreateBuffer", "the temporaries of " + what_ + " (" + std::to_string(arena_bytes) + " bytes)");
  for (size_t t = 0; t < temporaries_.size(); ++t) mem[static_cast<size_t>(temporaries_[t].value)] = {arena.get(), placed[t].first};
  for (const Op& op : p.ops)
    if (op.kind == OpKind::kView) mem[static_cast<size_t>(op.outputs[0])] = mem[static_cast<size_t>(op.inputs[0])];
  uint64_t weight_floats = 0;
  const std::vector<uint64_t> offsets = weight_offsets(p, &weight_floats);

  std::lock_guard<std::mutex> lock(enqueue_mutex_);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const KernelPlan& plan = p.kernels[k];
    const Launch launch = launch_of(p, plan, shapes);
    if (launch.empty) continue;
    cl_kernel kernel = kernels_[k];
    const std::vector<KernelParam> params = kernel_params(p, plan);
    cl_uint arg = 0;
    for (const KernelParam& param : params) {
      const Memory& m = mem[static_cast<size_t>(param.value)];
      if (m.mem == nullptr && element_count(shapes.shape[static_cast<size_t>(param.value)]) != 0)
        fail(EPHOST_EP_FAIL, "opencl: " + kernel_label(k) + ": value '" + p.values[static_cast<size_t>(param.value)].name +
                                 "' has no memory (a program that does not fit this plugin)");
      const cl_ulong offset = m.offset / sizeof(float);
      set_arg(kernel, arg++, sizeof(cl_mem), &m.mem, kernel_label(k));
      set_arg(kernel, arg++, sizeof(cl_ulong), &offset, kernel_label(k));
    }
    set_arg(kernel, arg++, sizeof(cl_mem), &weights_, kernel_label(k));
    set_arg(kernel, arg++, sizeof(launch.P), &launch.P, kernel_label(k));
    set_arg(kernel, arg++, sizeof(launch.F), &launch.F, kernel_label(k));
    const size_t local[3] = {p.work_group_size, 1, 1};
    check_cl(clEnqueueNDRangeKernel(queue, kernel, launch.work_dims, nullptr, launch.global, local, 0, nullptr, nullptr),
             "clEnqueueNDRangeKernel", kernel_label(k));
  }
  for (const Copy& c : copies) {
    const ValueDesc& desc = p.values[static_cast<size_t>(c.value)];
    Memory from = mem[static_cast<size_t>(c.value)];
    if (desc.placement == Placement::kConstant) from = {weights_, offsets[static_cast<size_t>(desc.constant)] * sizeof(float)};
    if (from.mem == nullptr) fail(EPHOST_EP_FAIL, "opencl: output '" + desc.name + "' of " + what_ + " has no memory");
    check_cl(clEnqueueCopyBuffer(queue, from.mem, c.to.mem, from.offset, c.to.offset, c.bytes, 0, nullptr, nullptr),
             "clEnqueueCopyBuffer", "output '" + desc.name + "' of " + what_);
  }
  // The arena is released now; OpenCL frees it once the commands using it have finished.
  if (!stream) check_cl(clFinish(queue), "clFinish", what_);
}

}  // namespace ephost_opencl
