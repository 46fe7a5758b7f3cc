// The C API's cost of one Run on a model: inputs wrapped once (CreateTensorWithData), then Run called
// again and again; prints the median microseconds per Run over ROUNDS rounds of RUNS runs. The baseline
// for benchmarks/python_run_overhead.py, which measures ephost.InferenceSession.run on the same model.
//   ephost_run_call_bench MODEL RUNS ROUNDS   (the model: float inputs of fixed shapes)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL RUNS ROUNDS\n", argv[0]);
    return 2;
  }
  const int runs = std::atoi(argv[2]), rounds = std::atoi(argv[3]);
  try {
    Ephost::Env env(EPHOST_LOG_WARNING, std::vector<std::string>{});
    Ephost::SessionOptions options;
    options.set_threads(1);
    Ephost::Session session(env, argv[1], options);
    std::vector<std::string> names = session.input_names();
    std::vector<std::vector<float>> buffers;
    std::vector<Ephost::Tensor> inputs;
    for (size_t i = 0; i < names.size(); ++i) {
      const auto type = session.input_tensor_type(i);
      size_t count = 1;
      for (int64_t d : type.dims) count *= static_cast<size_t>(d);
      buffers.emplace_back(count, 0.5f);
      inputs.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, type.dims, buffers.back().data(), count));
    }
    const std::vector<std::string> outputs = session.output_names();
    std::vector<double> per_run;
    for (int r = 0; r < rounds; ++r) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < runs; ++i) session.run(names, inputs, outputs);
      per_run.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / runs);
    }
    std::sort(per_run.begin(), per_run.end());
    std::printf("%.3f\n", per_run[per_run.size() / 2]);
  } catch (const Ephost::Exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
