#include "model_io.h"

#include <set>

#include "options.h"
#include "random_inputs.h"

namespace ephost_cli {

namespace {

// The session's inputs or outputs: `names`, and per index the declared tensor type and value kind.
template <typename TensorTypeOf, typename KindOf>
std::vector<ValueInfo> value_infos(const std::vector<std::string>& names, TensorTypeOf tensor_type_of, KindOf kind_of,
                                   const char* what) {
  std::vector<ValueInfo> out;
  for (size_t i = 0; i < names.size(); ++i) {
    ValueInfo info;
    info.name = names[i];
    const std::string context = std::string(what) + " '" + info.name + "'";
    const Ephost::Session::TensorType type = with_context(context, [&] { return tensor_type_of(i); });
    info.elem_type = type.elem_type;
    info.rank = type.rank;
    info.dims = type.dims;
    const Ephost::Session::ValueType kind = with_context(context, [&] { return kind_of(i); });
    info.declared.kind = kind.kind;
    info.declared.optional_kind = kind.optional_kind;
    info.declared.tensor_elem_type = kind.elem_type;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

std::vector<ValueInfo> session_inputs(const Ephost::Session& session) {
  return value_infos(with_context("inputs", [&] { return session.input_names(); }),
                     [&](size_t i) { return session.input_tensor_type(i); },
                     [&](size_t i) { return session.input_type(i); }, "input");
}

std::vector<ValueInfo> session_outputs(const Ephost::Session& session) {
  return value_infos(with_context("outputs", [&] { return session.output_names(); }),
                     [&](size_t i) { return session.output_tensor_type(i); },
                     [&](size_t i) { return session.output_type(i); }, "output");
}

std::string describe(const ValueInfo& info) {
  const DeclaredKind& d = info.declared;
  if (d.kind == EPHOST_VALUE_SEQUENCE) return "sequence of " + element_type_name(d.tensor_elem_type);
  if (d.kind == EPHOST_VALUE_OPTIONAL)
    return std::string("optional ") + (d.optional_kind == EPHOST_VALUE_SEQUENCE ? "sequence of " : "") +
           element_type_name(d.tensor_elem_type);
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

std::vector<HostValue> load_value_files(const std::vector<std::string>& files, const std::vector<ValueInfo>& infos,
                                        const std::string& what, std::string& unsupported) {
  if (files.size() > infos.size())
    throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, what + ": " + std::to_string(files.size()) + " files for " +
                                                         std::to_string(infos.size()) + " model " +
                                                         (infos.size() == 1 ? "value" : "values"));
  std::vector<HostValue> out;
  for (size_t i = 0; i < files.size(); ++i) {
    LoadedHostValue v = load_declared_value(files[i], infos[i].declared);
    if (!v.value) {
      unsupported = v.unsupported;
      return {};
    }
    out.push_back(std::move(*v.value));
  }
  return out;
}

void bind_by_name_or_position(std::vector<HostValue>& values, const std::vector<ValueInfo>& infos,
                              const std::string& what) {
  if (values.size() > infos.size())
    throw Ephost::Exception(EPHOST_INVALID_ARGUMENT, what + ": " + std::to_string(values.size()) + " files for " +
                                                         std::to_string(infos.size()) + " model " +
                                                         (infos.size() == 1 ? "value" : "values"));
  std::set<std::string> names, seen;
  for (const auto& info : infos) names.insert(info.name);
  bool by_name = true;
  for (const auto& v : values) {
    if (v.name().empty() || !names.count(v.name()) || !seen.insert(v.name()).second) {
      by_name = false;
      break;
    }
  }
  if (!by_name)
    for (size_t i = 0; i < values.size(); ++i) values[i].set_name(infos[i].name);
}

void adopt_declared_types(std::vector<HostValue>& values, const std::vector<ValueInfo>& infos) {
  for (HostValue& v : values) {
    for (const ValueInfo& info : infos) {
      if (info.name != v.name() || info.declared.tensor_elem_type != EPHOST_ELEMENT_BFLOAT16) continue;
      if (v.kind() == HostValue::Kind::kTensor && v.tensor().elem_type() == EPHOST_ELEMENT_UINT16)
        v.tensor().reinterpret_as(EPHOST_ELEMENT_BFLOAT16);
      if (v.kind() != HostValue::Kind::kSequence || v.sequence_elem_type() != EPHOST_ELEMENT_UINT16) continue;
      for (HostTensor& e : v.elements()) e.reinterpret_as(EPHOST_ELEMENT_BFLOAT16);
      v = HostValue::sequence(v.name(), EPHOST_ELEMENT_BFLOAT16, std::move(v.elements()));
    }
  }
}

std::vector<HostValue> prepare_inputs(const Ephost::Session& session, const InputArgs& args) {
  const std::vector<ValueInfo> infos = session_inputs(session);
  std::vector<HostValue> out;
  if (!args.inputs_dir.empty()) {
    if (!args.shapes.empty()) usage_error("--shape is for random inputs; it cannot be used with --inputs");
    std::string unsupported;
    out = load_value_files(numbered_files(args.inputs_dir, "input_"), infos, args.inputs_dir, unsupported);
    if (!unsupported.empty()) throw Ephost::Exception(EPHOST_INVALID_PROTOBUF, unsupported);
    if (out.empty() && !infos.empty())
      throw Ephost::Exception(EPHOST_NO_SUCHFILE, "no input_N.pb files in " + args.inputs_dir);
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
  for (size_t i = 0; i < infos.size(); ++i) {
    const int32_t kind = infos[i].declared.kind;
    if (kind == EPHOST_VALUE_SEQUENCE || kind == EPHOST_VALUE_OPTIONAL)
      usage_error("input '" + infos[i].name + "' is declared " + describe(infos[i]) +
                  ": random inputs are tensors only; give the inputs with --inputs DIR");
    out.emplace_back(random_tensor(infos[i].name, infos[i].elem_type, resolve_shape(infos[i], shapes), args.seed, i));
  }
  return out;
}

BoundRun::BoundRun(const Ephost::Session& session, const std::vector<HostValue>& inputs) : session_(session) {
  for (const HostValue& t : inputs) {
    views_.push_back(t.to_ephost());
    input_names_.push_back(t.name());
  }
  for (const ValueInfo& info : session_outputs(session)) output_names_.push_back(info.name);
}

}  // namespace ephost_cli
