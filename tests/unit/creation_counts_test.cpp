// The whole-model work a session's creation does (model/creation_counts.h), pinned per kind of model so
// that a stage that rebuilds the IR or re-infers the whole model again cannot creep back unnoticed:
// an ordinary model, one the graph transforms rewrite, one with nested model-local functions no
// provider claims, one whose providers max_coverage ranks by a dry run, and a trusted (host-built)
// model (the EPContext fallback's counts: tests/integration/epcontext_test.cpp). The session report shows the same counts.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "model_builders.h"
#include "session/session.h"
#include "session_helpers.h"

using namespace ephost;
using namespace ephost_test;

namespace {

// X -> Relu -> Y: nothing for the transforms to do.
onnx::ModelProto relu_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_node(g, "Relu", {"X"}, {"Y"}, "relu");
  add_output(g, "Y", kFloat, {2, 3});
  return m;
}

// X -> Identity -> Relu -> Y, plus Add(c, c) folded to a constant: no-op elimination and constant
// folding both rewrite it.
onnx::ModelProto transformed_model() {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_initializer(g, float_tensor("c", {2, 3}, {1, 2, 3, 4, 5, 6}));
  add_node(g, "Identity", {"X"}, {"i"}, "identity");
  add_node(g, "Add", {"c", "c"}, {"cc"}, "add_constants");
  add_node(g, "Relu", {"i"}, {"r"}, "relu");
  add_node(g, "Add", {"r", "cc"}, {"Y"}, "add");
  add_output(g, "Y", kFloat, {2, 3});
  return m;
}

// com.example Outer(X) = ScaledRelu(X) + X, ScaledRelu(X) = LeakyRelu(X): two levels of model-local
// functions that no provider has a kernel for, so both are expanded.
onnx::ModelProto nested_functions_model() {
  auto m = make_model(13);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {2, 3});
  add_node(g, "Outer", {"X"}, {"Y"}, "outer", "com.example");
  add_output(g, "Y", kFloat, {2, 3});
  auto define = [&](const std::string& name) {
    auto* f = m.add_functions();
    f->set_name(name);
    f->set_domain("com.example");
    f->add_input("X");
    f->add_output("Y");
    for (const char* domain : {"", "com.example"}) {
      auto* opset = f->add_opset_import();
      opset->set_domain(domain);
      opset->set_version(*domain ? 1 : 13);
    }
    return f;
  };
  auto* scaled = define("ScaledRelu");
  auto* leaky = scaled->add_node();
  leaky->set_op_type("LeakyRelu");
  leaky->add_input("X");
  leaky->add_output("Y");
  auto* outer = define("Outer");
  auto* call = outer->add_node();
  call->set_op_type("ScaledRelu");
  call->set_domain("com.example");
  call->add_input("X");
  call->add_output("S");
  auto* add = outer->add_node();
  add->set_op_type("Add");
  add->add_input("S");
  add->add_input("X");
  add->add_output("Y");
  return m;
}

void expect_counts(const Session& s, size_t ir_builds, size_t shape_inferences) {
  EXPECT_EQ(s.creation_counts().ir_builds, ir_builds);
  EXPECT_EQ(s.creation_counts().shape_inferences, shape_inferences);
  const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
  EXPECT_EQ(report.at("creation").at("ir_builds").get<size_t>(), ir_builds);
  EXPECT_EQ(report.at("creation").at("shape_inferences").get<size_t>(), shape_inferences);
}

}  // namespace

TEST(CreationCounts, OrdinaryModel) {
  expect_counts(*create_session(relu_model()), 1, 1);
}

TEST(CreationCounts, ModelTheTransformsRewrite) {
  auto s = create_session(transformed_model());
  for (const auto& n : s->graph().nodes) EXPECT_NE(n->op_type, "Identity");
  expect_counts(*s, 1, 1);  // the transforms edit the IR, typed where it changed
}

TEST(CreationCounts, TransformsOff) {
  SessionOptions options;
  options.optimization_level = 0;
  expect_counts(*create_session(transformed_model(), options), 1, 1);
}

TEST(CreationCounts, NestedFunctions) {
  auto s = create_session(nested_functions_model());
  for (const auto& n : s->graph().nodes) EXPECT_EQ(n->domain, "") << n->name;
  expect_counts(*s, 1, 1);  // the bodies are spliced into the IR and typed there
}

TEST(CreationCounts, MaxCoverageDryRunAsksAboutTheSessionsOwnIr) {
  SessionOptions options;
  options.set("session.ep_selection_policy", "max_coverage");
  auto s = create_session(relu_model(), options);
  EXPECT_EQ(nlohmann::json::parse(s->partition_report_json()).at("selection").at("policy"), "max_coverage");
  expect_counts(*s, 1, 1);  // no IR built for the dry run alone
}

TEST(CreationCounts, TrustedModelIsNotInferredAtLoad) {
  const std::string bytes = serialize(relu_model());
  auto s = Session::create_trusted_from_buffer(quiet_env(), bytes.data(), bytes.size(), SessionOptions{});
  expect_counts(*s, 1, 0);
}
