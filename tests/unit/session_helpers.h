// Sessions and IRs for the unit tests that make them from ModelProtos built in C++ (model_builders.h):
// one quiet Env per test executable, sessions created from the serialized model, and a loaded model
// with its IR (what the session's stages start from).
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "model/loader.h"
#include "model_builders.h"
#include "session/session.h"

namespace ephost_test {

// The Env the unit tests share: errors only in the log, no plugin directories.
inline ephost::Env& quiet_env() {
  static std::vector<std::string> none;
  static ephost::Env e(EPHOST_LOG_ERROR, &none);
  return e;
}

// A session of `m` on quiet_env(), created from its bytes as an application would.
inline std::unique_ptr<ephost::Session> create_session(const onnx::ModelProto& m,
                                                       const ephost::SessionOptions& options = {}) {
  const std::string bytes = serialize(m);
  return ephost::Session::create_from_buffer(quiet_env(), bytes.data(), bytes.size(), options);
}

// `m` loaded (checked and shape-inferred, as a session loads it) and its IR built.
inline ModelAndIr load_with_ir(const onnx::ModelProto& m, const ephost::LoadOptions& options = {}) {
  const std::string bytes = serialize(m);
  ModelAndIr loaded;
  loaded.model = ephost::load_model_from_buffer(bytes.data(), bytes.size(), options);
  loaded.main = ephost::build_graph_ir(*loaded.model);
  return loaded;
}

}  // namespace ephost_test
