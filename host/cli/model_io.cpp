#include "model_io.h"

#include <set>

#include "options.h"
#include "random_inputs.h"

namespace ephost_cli {

namespace {

using GetName = EphostStatus* (*)(const EphostSession*, size_t, const char**);
using GetType = EphostStatus* (*)(const EphostSession*, size_t, int32_t*, int64_t*, const int64_t**);

std::vector<ValueInfo> value_infos(const EphostSession* session, size_t count, GetName get_name, GetType get_type,
                                   const char* what) {
  std::vector<ValueInfo> out;
  for (size_t i = 0; i < count; ++i) {
    ValueInfo info;
    const char* name = nullptr;
    check(get_name(session, i, &name), std::string(what) + " " + std::to_string(i));
    info.name = name ? name : "";
    const int64_t* dims = nullptr;
    check(get_type(session, i, &info.elem_type, &info.rank, &dims), std::string(what) + " '" + info.name + "'");
    if (info.rank > 0 && dims) info.dims.assign(dims, dims + info.rank);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

std::vector<ValueInfo> session_inputs(const EphostSession* session) {
  const EphostApi& a = api();
  return value_infos(session, a.SessionGetInputCount(session), a.SessionGetInputName, a.SessionGetInputType,
                     "input");
}

std::vector<ValueInfo> session_outputs(const EphostSession* session) {
  const EphostApi& a = api();
  return value_infos(session, a.SessionGetOutputCount(session), a.SessionGetOutputName, a.SessionGetOutputType,
                     "output");
}

std::string describe(const ValueInfo& info) {
  std::string s = element_type_name(info.elem_type);
  if (info.rank < 0) return s + " (unknown rank)";
  s += " [";
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (i) s += ",";
    s += info.dims[i] < 0 ? "?" : std::to_string(info.dims[i]);
  }
  return s + "]";
}

std::vector<int64_t> resolve_shape(const ValueInfo& input,
                                   const std::map<std::string, std::vector<int64_t>>& shapes) {
  auto it = shapes.find(input.name);
  if (it != shapes.end()) {
    const std::vector<int64_t>& given = it->second;
    if (input.rank >= 0 && static_cast<int64_t>(given.size()) != input.rank)
      usage_error("--shape " + input.name + "=" + shape_string(given).substr(1, shape_string(given).size() - 2) + " has rank " + std::to_string(given.size()) +
                  " but input '" + input.name + "' is declared " + describe(input));
    for (size_t d = 0; input.rank >= 0 && d < given.size(); ++d) {
      if (input.dims[d] >= 0 && input.dims[d] != given[d])
        usage_error("--shape for input '" + input.name + "' gives dim " + std::to_string(d) + " = " +
                    std::to_string(given[d]) + " but the model fixes it to " + std::to_string(input.dims[d]) +
                    " (declared " + describe(input) + ")");
    }
    return given;
  }
  if (input.rank < 0)
    usage_error("input '" + input.name + "' has an unknown rank: give its shape with --shape " + input.name +
                "=d0,d1,...");
  for (size_t d = 0; d < input.dims.size(); ++d) {
    if (input.dims[d] < 0)
      usage_error("input '" + input.name + "' has a symbolic dim " + std::to_string(d) + " (declared " +
                  describe(input) + "): give its shape with --shape " + input.name + "=d0,d1,...");
  }
  return input.dims;
}

void bind_by_name_or_position(std::vector<HostTensor>& tensors, const std::vector<ValueInfo>& infos,
                              const std::string& what) {
  if (tensors.size() > infos.size())
    throw CliError(EPHOST_INVALID_ARGUMENT, what + ": " + std::to_string(tensors.size()) + " files for " +
                                                std::to_string(infos.size()) + " model " +
                                                (infos.size() == 1 ? "value" : "values"));
  std::set<std::string> names, seen;
  for (const auto& info : infos) names.insert(info.name);
  bool by_name = true;
  for (const auto& t : tensors) {
    if (t.name().empty() || !names.count(t.name()) || !seen.insert(t.name()).second) {
      by_name = false;
      break;
    }
  }
  if (!by_name)
    for (size_t i = 0; i < tensors.size(); ++i) tensors[i].set_name(infos[i].name);
}

void adopt_declared_types(std::vector<HostTensor>& tensors, const std::vector<ValueInfo>& infos) {
  for (HostTensor& t : tensors) {
    for (const ValueInfo& info : infos) {
      if (info.name == t.name() && info.elem_type == EPHOST_ELEMENT_BFLOAT16 && t.elem_type() == EPHOST_ELEMENT_UINT16)
        t.reinterpret_as(EPHOST_ELEMENT_BFLOAT16);
    }
  }
}

std::vector<HostTensor> prepare_inputs(const EphostSession* session, const InputArgs& args) {
  const std::vector<ValueInfo> infos = session_inputs(session);
  std::vector<HostTensor> out;
  if (!args.inputs_dir.empty()) {
    if (!args.shapes.empty()) usage_error("--shape is for random inputs; it cannot be used with --inputs");
    for (const std::string& file : numbered_files(args.inputs_dir, "input_")) out.push_back(load_tensor_file(file));
    if (out.empty() && !infos.empty())
      throw CliError(EPHOST_NO_SUCHFILE, "no input_N.pb files in " + args.inputs_dir);
    bind_by_name_or_position(out, infos, args.inputs_dir);
    adopt_declared_types(out, infos);
    return out;
  }
  const auto shapes = parse_shapes(args.shapes);
  for (const auto& [name, shape] : shapes) {
    bool known = false;
    for (const auto& info : infos) known = known || info.name == name;
    if (!known) {
      std::string list;
      for (const auto& info : infos) list += (list.empty() ? "'" : ", '") + info.name + "'";
      usage_error("--shape names '" + name + "', which is not an input of the model (inputs: " +
                  (list.empty() ? "none" : list) + ")");
    }
  }
  for (size_t i = 0; i < infos.size(); ++i)
    out.push_back(random_tensor(infos[i].name, infos[i].elem_type, resolve_shape(infos[i], shapes), args.seed, i));
  return out;
}

BoundRun::BoundRun(EphostSession* session, const std::vector<HostTensor>& inputs) : session_(session) {
  for (const HostTensor& t : inputs) {
    views_.push_back(t.view());
    input_names_.push_back(t.name().c_str());
    input_ptrs_.push_back(views_.back().get());
  }
  for (const ValueInfo& info : session_outputs(session)) output_names_.push_back(info.name);
  for (const std::string& n : output_names_) output_name_ptrs_.push_back(n.c_str());
}

std::vector<TensorPtr> BoundRun::run() const {
  std::vector<EphostTensor*> raw(output_names_.size(), nullptr);
  EphostStatus* status = api().Run(session_, input_names_.data(), input_ptrs_.data(), input_ptrs_.size(),
                                   output_name_ptrs_.data(), output_name_ptrs_.size(), raw.data());
  std::vector<TensorPtr> out;
  for (EphostTensor* t : raw) out.emplace_back(t);  // released even when Run failed half-way
  check(status);
  return out;
}

}  // namespace ephost_cli
