// Control-flow kernels of a kernel-registry ONNX Runtime plugin EP (OrtEpApi::CreateIfKernel, CreateLoopKernel,
// CreateScanKernel, API 24) and the operator schemas it reads (OrtEpApi::GetOpSchema and the OpSchema_* entries,
// API 25), end to end: "ortkern" built with If, Loop and Scan in its registry (library kernels_cf) claims them;
// the host makes their kernels, runs their subgraphs (whose nodes ortkern claims too), and calls the EP's
// helpers as ONNX Runtime does: ConcatOutput for a Loop's scan outputs, Transpose for a scan axis that is not
// 0. The outputs equal the CPU plugin's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <set>

#include "ephost/ephost_cxx_api.h"
#include "ort_test_plugins.h"
#include "test_support.h"

using json = nlohmann::json;
using ephost_test::ModelBuilder;
using ephost_test::TempDir;

namespace {

onnx::NodeProto& add_node(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                          const std::string& output, const std::string& name) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return *n;
}

void typed(onnx::ValueInfoProto* v, const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
  ModelBuilder::set_type(v, name, elem, dims);
}

// a = cond ? x + c : x * c (If); Loop M times (while `keep`): v += 1, scan output 2v each iteration (Loop);
// Scan over loop_y's axis 1 (3 positions, last first): state += column, scan output 2 * column, stacked
// along axis 1 (Scan). Opset 13; every body reads an outer-scope initializer.
std::string control_flow_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {2, 3}).input("cond", onnx::TensorProto::BOOL, {});
  m.input("M", onnx::TensorProto::INT64, {}).input("keep", onnx::TensorProto::BOOL, {});
  m.initializer("c", {3}, {0.5f, -1.0f, 2.0f}).initializer("one", {1}, {1.0f}).initializer("two", {1}, {2.0f});
  m.initializer("s0", {2}, {0.0f, 0.0f});

  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  add_node(then_branch, "Add", {"x", "c"}, "t_out", "then_add");
  typed(then_branch.add_output(), "t_out", onnx::TensorProto::FLOAT, {2, 3});
  else_branch.set_name("else");
  add_node(else_branch, "Mul", {"x", "c"}, "e_out", "else_mul");
  typed(else_branch.add_output(), "e_out", onnx::TensorProto::FLOAT, {2, 3});
  auto& if_node = m.node("If", {"cond"}, {"a"}, "if");
  ephost_test::set_graph_attribute(if_node, "then_branch", then_branch);
  ephost_test::set_graph_attribute(if_node, "else_branch", else_branch);

  onnx::GraphProto body;
  body.set_name("loop_body");
  typed(body.add_input(), "i", onnx::TensorProto::INT64, {});
  typed(body.add_input(), "cond_in", onnx::TensorProto::BOOL, {});
  typed(body.add_input(), "v_in", onnx::TensorProto::FLOAT, {2, 3});
  add_node(body, "Identity", {"cond_in"}, "cond_out", "pass");
  add_node(body, "Add", {"v_in", "one"}, "v_out", "count");
  add_node(body, "Mul", {"v_in", "two"}, "s_out", "twice");
  typed(body.add_output(), "cond_out", onnx::TensorProto::BOOL, {});
  typed(body.add_output(), "v_out", onnx::TensorProto::FLOAT, {2, 3});
  typed(body.add_output(), "s_out", onnx::TensorProto::FLOAT, {2, 3});
  auto& loop = m.node("Loop", {"M", "keep", "a"}, {"loop_y", "loop_scan"}, "loop");
  ephost_test::set_graph_attribute(loop, "body", body);

  onnx::GraphProto scan_body;
  scan_body.set_name("scan_body");
  typed(scan_body.add_input(), "st_in", onnx::TensorProto::FLOAT, {2});
  typed(scan_body.add_input(), "xt", onnx::TensorProto::FLOAT, {2});
  add_node(scan_body, "Add", {"st_in", "xt"}, "st_out", "acc");
  add_node(scan_body, "Mul", {"xt", "two"}, "yt", "dbl");
  typed(scan_body.add_output(), "st_out", onnx::TensorProto::FLOAT, {2});
  typed(scan_body.add_output(), "yt", onnx::TensorProto::FLOAT, {2});
  auto& scan = m.node("Scan", {"s0", "loop_y"}, {"scan_state", "scan_out"}, "scan");
  ephost_test::set_graph_attribute(scan, "body", scan_body);
  ephost_test::attr_int(scan, "num_scan_inputs", 1);
  ephost_test::attr_ints(scan, "scan_input_axes", {1});
  ephost_test::attr_ints(scan, "scan_input_directions", {1});
  ephost_test::attr_ints(scan, "scan_output_axes", {1});

  m.output("a", onnx::TensorProto::FLOAT, {2, 3}).output("loop_y", onnx::TensorProto::FLOAT, {2, 3});
  m.output("loop_scan", onnx::TensorProto::FLOAT, {-1, 2, 3}).output("scan_state", onnx::TensorProto::FLOAT, {2});
  m.output("scan_out", onnx::TensorProto::FLOAT, {2, 3});
  return m.bytes();
}

const std::vector<std::string> kOutputs = {"a", "loop_y", "loop_scan", "scan_state", "scan_out"};

std::vector<Ephost::Tensor> run(const Ephost::Session& s, bool cond, int64_t trips) {
  std::vector<float> x = ephost_test::ramp(6, 0.5f, -1.0f);
  uint8_t c = cond ? 1 : 0, keep = 1;
  return s.run({"x", "cond", "M", "keep"},
               {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {2, 3}, x.data(), x.size()),
                Ephost::Tensor::wrap(EPHOST_ELEMENT_BOOL, {}, &c, 1),
                Ephost::Tensor::wrap(EPHOST_ELEMENT_INT64, {}, &trips, 1),
                Ephost::Tensor::wrap(EPHOST_ELEMENT_BOOL, {}, &keep, 1)},
               kOutputs);
}

// Node name -> provider, over the main graph and every subgraph.
std::map<std::string, std::string> providers_of_all_graphs(const Ephost::Session& s) {
  const json report = json::parse(s.partition_report_json());
  std::map<std::string, std::string> out;
  for (const auto& g : report["graphs"])
    for (const auto& n : g["nodes"]) out[n["node"]] = n["provider"];
  return out;
}

// The line of `log` about node `node` ("... node=<node> ..."), "" when none.
std::string line_of(const std::string& log, const std::string& node) {
  size_t start = 0;
  while (start < log.size()) {
    const size_t end = log.find('\n', start);
    const std::string line = log.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.find(" node=" + node + " ") != std::string::npos) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

class OrtControlFlowKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    ephost_test::install_ort_plugin(plugins_, "kernels_cf");
    env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{plugins_.path()});
    cpu_env_ = std::make_unique<Ephost::Env>(EPHOST_LOG_ERROR, std::vector<std::string>{});
  }
  TempDir plugins_, logs_;
  std::unique_ptr<Ephost::Env> env_, cpu_env_;
};

TEST_F(OrtControlFlowKernels, IfLoopAndScanRunAsTheEpsKernelsAndEqualTheCpuPlugin) {
  const std::string model = control_flow_model();
  const std::string cf_log = logs_.file("cf.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.cf_log", cf_log);
  Ephost::Session s(*env_, model.data(), model.size(), options);
  Ephost::Session cpu(*cpu_env_, model.data(), model.size());
  const auto providers = providers_of_all_graphs(s);
  for (const char* node : {"if", "loop", "scan", "then_add", "else_mul", "count", "twice", "acc", "dbl"})
    EXPECT_EQ(providers.at(node), "ortkern") << node << ": " << s.partition_report_json();
  EXPECT_EQ(providers.at("pass"), "cpu");  // ortkern's Identity is float only

  for (bool cond : {true, false}) {
    for (int64_t trips : {3, 0}) {
      const auto got = run(s, cond, trips);
      const auto want = run(cpu, cond, trips);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].shape(), want[i].shape()) << kOutputs[i] << " cond=" << cond << " M=" << trips;
        EXPECT_EQ(got[i].to_vector<float>(), want[i].to_vector<float>()) << kOutputs[i] << " cond=" << cond
                                                                         << " M=" << trips;
      }
      if (trips == 0) {
        EXPECT_EQ(got[2].shape(), (std::vector<int64_t>{0, 2, 3}));
      }
    }
  }
  // Per run: one ConcatOutput for the Loop's scan output (3 iterations of 2x3 floats; none when M is 0),
  // and two Transposes for the Scan (its input's axis 1 to the front, its output's stacking axis to 1).
  const std::string with_loop = "concat node=loop parts=3 bytes=72\n";
  const std::string scan = "transpose node=scan perm=1,0 dims=2,3\ntranspose node=scan perm=1,0 dims=3,2\n";
  EXPECT_EQ(ephost_test::read_text(cf_log), with_loop + scan + scan + with_loop + scan + scan);
}

// The EP reads each node's schema through GetOpSchema at the node's opset: formals, type constraints
// (allowed types and the formals bound to them), as the host's schema registry has them.
TEST_F(OrtControlFlowKernels, TheEpReadsItsNodesSchemasFromTheHost) {
  const std::string model = control_flow_model();
  const std::string schema_log = logs_.file("schemas.txt");
  Ephost::SessionOptions options;
  options.add_config("ep.ortkern.schema_log", schema_log);
  Ephost::Session s(*env_, model.data(), model.size(), options);
  const std::string log = ephost_test::read_text(schema_log);
  const std::string loop = line_of(log, "loop");
  EXPECT_EQ(loop.find("schema node=loop op=Loop since=13 inputs=M,cond,v_initial outputs=v_final_and_scan_outputs"),
            0u) << log;
  EXPECT_NE(loop.find(" I{tensor(int64)}in[0]out[]"), std::string::npos) << loop;
  EXPECT_NE(loop.find(" B{tensor(bool)}in[1]out[]"), std::string::npos) << loop;
  EXPECT_NE(loop.find("}in[2]out[0]"), std::string::npos) << loop;  // V: the loop-carried values
  EXPECT_NE(loop.find(" fixed="), std::string::npos) << loop;
  const std::string if_line = line_of(log, "if");
  EXPECT_EQ(if_line.find("schema node=if op=If since=13 inputs=cond outputs=outputs"), 0u) << log;
  EXPECT_NE(if_line.find(" B{tensor(bool)}in[0]out[]"), std::string::npos) << if_line;
  const std::string scan = line_of(log, "scan");
  EXPECT_EQ(scan.find("schema node=scan op=Scan since=11 inputs=initial_state_and_scan_inputs "
                      "outputs=final_state_and_scan_outputs V{"),
            0u) << log;
  const std::string add = line_of(log, "count");  // in the Loop's body: GetCapability sees subgraphs too
  ASSERT_GT(add.size(), 7u) << log;
  EXPECT_EQ(add.find("schema node=count op=Add since=13 inputs=A,B outputs=C T{"), 0u) << log;
  EXPECT_NE(add.find("tensor(float)"), std::string::npos) << add;
  EXPECT_NE(add.find("}in[0,1]out[0] fixed="), std::string::npos) << add;
  EXPECT_EQ(add.substr(add.size() - 7), " fixed=") << "Add has no input of a fixed type";
}

}  // namespace
