// A third-party C++ application built against the installed CMake package (find_package(ephost),
// ephost::ephost) and the header-only wrapper ephost_cxx_api.h (tests/packaging/install_test.sh).
// Runs MODEL on inputs of ones (symbolic dims = DIM) and prints what the test compares:
//   plugin NAME PATH              for every loaded plugin (where discovery found it)
//   provider NAME NODES           nodes each provider took (from the partition report)
//   OUTPUT: [shape] sum=S first=a,b,c,d   in samples/c_run's format
//
//   app MODEL [DIM]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [DIM]\n", argv[0]);
    return 2;
  }
  const int64_t symbolic = argc > 2 ? std::atoll(argv[2]) : 1;
  try {
    Ephost::Env env;
    for (const EphostPluginReport& p : env.plugin_reports())
      if (p.loaded) std::printf("plugin %s %s\n", p.name, p.path);
    Ephost::Session session(env, argv[1]);
    std::vector<Ephost::Tensor> inputs;
    const std::vector<std::string> input_names = session.input_names();
    for (size_t i = 0; i < input_names.size(); ++i) {
      int32_t type = 0;
      int64_t rank = 0;
      const int64_t* dims = nullptr;
      Ephost::check(Ephost::api().SessionGetInputType(session.get(), i, &type, &rank, &dims));
      std::vector<int64_t> shape(dims, dims + rank);
      for (int64_t& d : shape) d = d >= 0 ? d : symbolic;
      Ephost::Tensor t = Ephost::Tensor::allocate(static_cast<EphostElementType>(type), shape);
      if (type == EPHOST_ELEMENT_FLOAT)
        for (size_t k = 0; k < t.size(); ++k) t.data<float>()[k] = 1.0f;
      inputs.push_back(std::move(t));
    }
    const std::vector<std::string> output_names = session.output_names();
    const std::vector<Ephost::Tensor> outputs = session.run(input_names, inputs, output_names);
    std::printf("partition %s\n", session.partition_report_json().c_str());
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::printf("%s: [", output_names[i].c_str());
      const std::vector<int64_t> shape = outputs[i].shape();
      for (size_t d = 0; d < shape.size(); ++d) std::printf(d ? ",%lld" : "%lld", static_cast<long long>(shape[d]));
      std::printf("]");
      if (outputs[i].type() == EPHOST_ELEMENT_FLOAT) {
        const float* data = outputs[i].data<float>();
        double sum = 0.0;
        for (size_t k = 0; k < outputs[i].size(); ++k) sum += data[k];
        std::printf(" sum=%.9g first=", sum);
        for (size_t k = 0; k < outputs[i].size() && k < 4; ++k) std::printf(k ? ",%.9g" : "%.9g", data[k]);
      }
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
