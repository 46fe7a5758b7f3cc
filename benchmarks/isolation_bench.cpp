// The cost of running a provider out of process (session.provider_isolation=process): the same plugin
// (the "faulty" test plugin with no fault: beta's chain interpreter) on the same model, in process and
// in a provider host process. The model is one Add-Mul-Relu chain, which the plugin takes as one fused
// group: one compute call per run, so the difference per run is the isolation's cost per call (the
// request, the reply, and the copy of the input into the shared arena and of the output out of it).
// Widths from 16 floats (the fixed cost) to 1 M floats (4 MiB each way: the copies' share).
//
//   ephost_isolation_bench [RUNS]      default 2000 runs per width and mode
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ephost/ephost_cxx_api.h"

namespace {

std::string chain_model(int64_t width) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  auto set_type = [&](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(width);
  };
  set_type(g->add_input(), "x");
  set_type(g->add_output(), "y");
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_dims(1);
  c->add_float_data(0.5f);
  auto node = [&](const char* op, std::vector<std::string> in, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Add", {"x", "c"}, "a");
  node("Mul", {"a", "c"}, "m");
  node("Relu", {"m"}, "y");
  std::string s;
  m.SerializeToString(&s);
  return s;
}

// Median microseconds per run over `runs` runs (after 50 warm-up runs).
double us_per_run(Ephost::Env& env, const std::string& model, int64_t width, const char* mode, int runs) {
  Ephost::SessionOptions o;
  o.set_threads(1);
  o.add_config("session.provider_isolation", mode);
  o.append_provider("faulty");
  Ephost::Session s(env, model.data(), model.size(), o);
  std::vector<float> x(static_cast<size_t>(width), 0.25f);
  std::vector<double> times;
  for (int i = 0; i < runs + 50; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto y = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, width}, x.data(), x.size())}, {"y"});
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 50) times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 2000;
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  env.register_plugin(EPHOST_FAULTY_PLUGIN);
  std::printf("%-10s %14s %14s %14s\n", "floats", "in_process_us", "process_us", "overhead_us");
  for (int64_t width : {16, 1024, 65536, 1048576}) {
    const std::string model = chain_model(width);
    const int n = width >= 1048576 ? std::max(20, runs / 20) : runs;
    const double in = us_per_run(env, model, width, "in_process", n);
    const double out = us_per_run(env, model, width, "process", n);
    std::printf("%-10lld %14.2f %14.2f %14.2f\n", static_cast<long long>(width), in, out, out - in);
  }
  return 0;
}
