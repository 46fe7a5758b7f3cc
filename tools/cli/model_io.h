// A session's inputs and outputs as the C API declares them, the inputs a command runs with (from
// input_N.pb files or random), and a bound Run that can be repeated.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "host_value.h"
#include "tensor_io.h"

namespace ephost_cli {

struct InputArgs;

struct ValueInfo {
  std::string name;
  int32_t elem_type = 0;      // tensors only (0 for sequences and optionals: see declared)
  int64_t rank = -1;          // -1: unknown
  std::vector<int64_t> dims;  // -1: symbolic
  DeclaredKind declared;      // tensor, sequence or optional
};
std::vector<ValueInfo> session_inputs(const Ephost::Session& session);
std::vector<ValueInfo> session_outputs(const Ephost::Session& session);
// "float [1,3,?,?]" ("float [?]" ... "float (unknown rank)"); "sequence of float", "optional float".
std::string describe(const ValueInfo& info);

// The concrete shape of a random input: the declared dims, with --shape overriding them. Usage error
// naming the input and dim when a symbolic dim (or an unknown rank) has no --shape, or when --shape
// contradicts a fixed dim.
std::vector<int64_t> resolve_shape(const ValueInfo& input, const std::map<std::string, std::vector<int64_t>>& shapes);

// Reads value files in the ONNX test layout: file N is read as the N-th of `infos` declares (a
// tensor, a sequence or an optional). Sets `unsupported` (and returns nothing) for a file that cannot
// be used. Throws Ephost::Exception when there are more files than values.
std::vector<HostValue> load_value_files(const std::vector<std::string>& files, const std::vector<ValueInfo>& infos,
                                        const std::string& what, std::string& unsupported);

// Binds values read from files to the session's inputs: by the proto names when every one names
// a distinct session input, else by position (ONNX test layout: input_N.pb is the N-th graph input).
// Sets each value's name to the input it is bound to.
void bind_by_name_or_position(std::vector<HostValue>& values, const std::vector<ValueInfo>& infos,
                              const std::string& what);

// ONNX's test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): a uint16 tensor bound to
// a value the model declares bfloat16 is taken as bfloat16 (sequence elements too). Call after binding.
void adopt_declared_types(std::vector<HostValue>& values, const std::vector<ValueInfo>& infos);

// The inputs of a run: --inputs DIR, else random tensors of the resolved shapes (tensor inputs only).
std::vector<HostValue> prepare_inputs(const Ephost::Session& session, const InputArgs& args);

// Inputs bound once, run any number of times.
class BoundRun {
 public:
  // `session` and `inputs` must outlive this object. Requests every output of the session.
  BoundRun(const Ephost::Session& session, const std::vector<HostValue>& inputs);
  const std::vector<std::string>& output_names() const { return output_names_; }
  std::vector<Ephost::Tensor> run() const { return session_.run(input_names_, views_, output_names_); }

 private:
  const Ephost::Session& session_;
  std::vector<std::string> input_names_;
  std::vector<Ephost::Tensor> views_;  // the inputs as the C API sees them
  std::vector<std::string> output_names_;
};

}  // namespace ephost_cli
