// Session creation with the example compiling plugin: from the source model (partition, compile,
// nothing cached) against from its EPContext model (judge and load the cached contexts), and the
// generation itself (compile + write the ctx model and binary).
//
//   ephost_epcontext_bench [MODEL]     default: PP-OCR's mobile classifier (tests/models/fetch_models.sh)
// Compare the ratios of one run: the machines are shared and noisy.
#include <benchmark/benchmark.h>

#include <boost/filesystem.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ephost/ephost_cxx_api.h"

namespace fs = boost::filesystem;

namespace {

std::string g_model, g_ctx, g_dir;

Ephost::Env& env() {
  static Ephost::Env e(EPHOST_LOG_ERROR, std::vector<std::string>{EPHOST_EXAMPLE_PLUGIN_DIR});
  return e;
}

Ephost::SessionOptions options() {
  Ephost::SessionOptions o;
  o.set_threads(1);
  return o;
}

void FromSourceModel(benchmark::State& state) {
  for (auto _ : state) Ephost::Session s(env(), g_model, options());
}
void FromCtxModel(benchmark::State& state) {
  for (auto _ : state) Ephost::Session s(env(), g_ctx, options());
}
void GenerateCtxModel(benchmark::State& state) {
  for (auto _ : state) {
    Ephost::SessionOptions o = options();
    o.add_config("ep.context_enable", "1").add_config("ep.context_overwrite", "1");
    o.add_config("ep.context_file_path", g_dir + "/scratch_ctx.onnx");
    Ephost::Session s(env(), g_model, o);
  }
}
BENCHMARK(FromSourceModel)->Unit(benchmark::kMillisecond);
BENCHMARK(FromCtxModel)->Unit(benchmark::kMillisecond);
BENCHMARK(GenerateCtxModel)->Unit(benchmark::kMillisecond);

std::string default_model() {
  std::string cmd = std::string("bash '") + EPHOST_SOURCE_DIR + "/tests/models/fetch_models.sh' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  if (p) pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? "" : out + "/ch_ppocr_mobile_v2.0_cls_infer.onnx";
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string source = argc > 1 ? argv[1] : default_model();
  if (source.empty() || !fs::exists(source)) {
    std::cerr << "no model: pass one, or let tests/models/fetch_models.sh fetch PP-OCR\n";
    return 1;
  }
  g_dir = (fs::temp_directory_path() / fs::unique_path("ephost-epctx-bench-%%%%%%")).string();
  fs::create_directories(g_dir);
  g_model = g_dir + "/model.onnx";
  fs::copy_file(source, g_model);
  {
    Ephost::SessionOptions o = options();
    o.add_config("ep.context_enable", "1");
    Ephost::Session s(env(), g_model, o);
  }
  g_ctx = g_dir + "/model_ctx.onnx";
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fs::remove_all(g_dir);
  return 0;
}
