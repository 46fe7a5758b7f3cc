// Fuzz harness: a ctx model's attributes (the EPContext nodes of a model ephost compiled), the binary
// its nodes name, and the source model it falls back to. The input is three length-prefixed parts:
//   u32 size, the ctx model (ModelProto) | u32 size, the context binary | the source model
// written into a folder as ctx.onnx, <the file the first embed_mode=0 node names> and
// <onnx_model_filename>; then a session is created from the ctx model with the example EP (which
// judges and loads contexts) and run once. Seeds come from `ephost compile` outputs (scripts/fuzz.sh),
// so mutations land on real attributes: embed modes, main contexts, partition names, paths, sources,
// payloads. A clean Ephost::Exception is the only acceptable failure.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "fuzz_support.h"

namespace {

const Ephost::Env& env() {
  static const std::vector<std::string> dirs = {EPHOST_EXAMPLE_PLUGIN_DIR};
  static const Ephost::Env e(EPHOST_LOG_FATAL, &dirs,
                             {{kEphostEnvOptionsPluginScan, "inprocess"}, {kEphostEnvOptionsPluginRegistry, ""}});
  return e;
}

// The next length-prefixed part; the rest of the input when it runs short.
std::string take_part(const uint8_t*& data, size_t& size) {
  uint32_t n = 0;
  if (size < 4) {
    std::string rest(reinterpret_cast<const char*>(data), size);
    size = 0;
    return rest;
  }
  std::memcpy(&n, data, 4);
  data += 4;
  size -= 4;
  n = static_cast<uint32_t>(std::min<size_t>(n, size));
  std::string part(reinterpret_cast<const char*>(data), n);
  data += n;
  size -= n;
  return part;
}

// A plain file name from an attribute, or `fallback` (the files are written inside the folder only).
std::string file_name_or(const std::string& name, const std::string& fallback) {
  if (name.empty() || name.size() > 100 || name.find_first_of("/\\") != std::string::npos || name == "." ||
      name == ".." || name.find('\0') != std::string::npos)
    return fallback;
  return name;
}

std::string string_attribute(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.s();
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string ctx_bytes = take_part(data, size);
  const std::string binary = take_part(data, size);
  const std::string source(reinterpret_cast<const char*>(data), size);

  // The files the ctx model names, where it names them (when it names plain file names).
  std::string binary_name = "model_example.bin", source_name = "model.onnx";
  onnx::ModelProto parsed;
  if (parsed.ParseFromString(ctx_bytes)) {
    for (const auto& n : parsed.graph().node()) {
      if (n.op_type() != "EPContext") continue;
      binary_name = file_name_or(string_attribute(n, "ep_cache_context"), binary_name);
      source_name = file_name_or(string_attribute(n, "onnx_model_filename"), source_name);
      break;
    }
  }
  const auto folder = ephost_fuzz::scratch_folder() / "ctx";
  std::error_code ec;
  std::filesystem::remove_all(folder, ec);
  ephost_fuzz::write_file(folder / binary_name, binary.data(), binary.size());
  if (source_name != binary_name) ephost_fuzz::write_file(folder / source_name, source.data(), source.size());

  try {
    Ephost::SessionOptions options;
    options.add_config("ep.context_file_path", (folder / "ctx.onnx").string());
    options.append_provider("example", {});
    Ephost::Session session(env(), ctx_bytes.data(), ctx_bytes.size(), options);
    session.ep_context_report_json();
    std::vector<Ephost::Tensor> inputs;
    std::vector<std::vector<uint8_t>> buffers;
    for (size_t i = 0; i < session.input_names().size(); ++i) {
      const Ephost::Session::TensorType t = session.input_tensor_type(i);
      std::vector<int64_t> shape;
      int64_t count = 1;
      for (int64_t d : t.dims) {
        shape.push_back(d < 0 ? 1 : d);
        count *= shape.back();
        if (shape.back() > 4096 || count > 4096) return 0;
      }
      if (t.rank < 0 || t.elem_type == 0 || t.elem_type == EPHOST_ELEMENT_STRING) return 0;
      inputs.push_back(Ephost::Tensor::allocate(static_cast<EphostElementType>(t.elem_type), shape));
    }
    session.run(session.input_names(), inputs, session.output_names());
  } catch (const Ephost::Exception&) {
  }
  return 0;
}
