// The OpenCL plugin on PP-OCR's classifier and detector (tests/models/fetch_models.sh):
//   - session creation from the source model (every kernel generated and built by the driver, the
//     program binary written into a ctx model) against creation from that ctx model (judge, then
//     clCreateProgramWithBinary);
//   - run latency on the OpenCL device beside the built-in CPU plugin;
//   - copies per run between host and device, from the partition report.
//
//   ephost_opencl_bench [--driver-cache] [--repeat N] [--device-types cpu,gpu,accelerator]
//
// A source compile is measured cold: PoCL's kernel cache is turned off (POCL_KERNEL_CACHE=0) unless
// --driver-cache is given, since a user's first session on a new machine or driver finds no cache either.
// It is timed once per model (it takes seconds); ctx loads and runs are medians of N. The machines are
// shared: compare ratios within one run.
#include <algorithm>
#include <boost/filesystem.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"

namespace fs = boost::filesystem;
using json = nlohmann::json;

namespace {

struct Case {
  const char* key;
  const char* file;
  std::vector<int64_t> shape;
};

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string models_folder() {
  FILE* p = popen("bash '" EPHOST_SOURCE_DIR "/tests/models/fetch_models.sh' 2>/dev/null", "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = p ? pclose(p) : -1;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return status == 0 ? out : "";
}

// Copies of every run: values crossing between host and device at run time, and the graph outputs made
// on the device that go back to the host.
size_t copies_per_run(const json& report) {
  size_t n = 0;
  for (const auto& g : report["graphs"]) {
    for (const auto& c : g["copies"])
      if (c["when"] == "every run") ++n;
    if (g.contains("outputs_copied_to_host")) n += g["outputs_copied_to_host"].size();
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  bool driver_cache = false;
  int repeat = 10;
  std::string device_types = "cpu,gpu,accelerator";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--driver-cache") {
      driver_cache = true;
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--device-types" && i + 1 < argc) {
      device_types = argv[++i];
    } else {
      std::cerr << "usage: ephost_opencl_bench [--driver-cache] [--repeat N] [--device-types LIST]\n";
      return 2;
    }
  }
  // Before the plugin (and with it the OpenCL driver) is loaded: PoCL reads it when its platform starts.
  if (!driver_cache) setenv("POCL_KERNEL_CACHE", "0", 1);

  const std::string folder = models_folder();
  if (folder.empty()) {
    std::cerr << "opencl_bench: the PP-OCR models are unavailable (tests/models/fetch_models.sh failed)\n";
    return 1;
  }
  try {
    Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{EPHOST_OPENCL_PLUGIN_DIR});
    std::string device;
    for (const auto& d : env.devices())
      if (std::string(d.plugin) == "opencl" && device.empty()) device = std::string(d.name) + ", driver " + d.driver_version;
    if (device.empty()) {
      std::cerr << "opencl_bench: the OpenCL plugin found no device\n";
      return 1;
    }
    const fs::path dir = fs::temp_directory_path() / fs::unique_path("ephost-opencl-bench-%%%%-%%%%");
    fs::create_directories(dir);
    std::printf("OpenCL device: %s; driver kernel cache %s; %d repeats\n\n", device.c_str(), driver_cache ? "on" : "off", repeat);
    std::printf("%-4s %14s %12s %8s %14s %14s %10s\n", "model", "create src ms", "create ctx ms", "ratio", "run opencl ms",
                "run cpu ms", "copies/run");
    const std::vector<Case> cases = {{"cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}},
                                     {"det", "ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640}}};
    for (const Case& c : cases) {
      const std::string source = (dir / (std::string(c.key) + ".onnx")).string();
      const std::string ctx = (dir / (std::string(c.key) + "_ctx.onnx")).string();
      fs::copy_file(fs::path(folder) / c.file, source);
      auto opencl = [&] {
        Ephost::SessionOptions o;
        o.set_threads(2);
        o.append_provider("opencl");
        o.append_provider("cpu");
        o.add_config("ep.opencl.device_types", device_types);
        return o;
      };
      Ephost::SessionOptions generate = opencl();
      generate.add_config(kEphostSessionOptionsEpContextEnable, "1");
      auto t = std::chrono::steady_clock::now();
      { Ephost::Session s(env, source, generate); }
      const double create_source = ms_since(t);

      std::vector<double> create_ctx;
      for (int i = 0; i < repeat; ++i) {
        t = std::chrono::steady_clock::now();
        Ephost::Session s(env, ctx, opencl());
        create_ctx.push_back(ms_since(t));
      }

      int64_t count = 1;
      for (int64_t d : c.shape) count *= d;
      std::vector<float> x(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) x[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
      auto latency = [&](const Ephost::Session& s) {
        std::vector<double> ms;
        for (int i = 0; i < repeat + 1; ++i) {
          t = std::chrono::steady_clock::now();
          s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, c.shape, x.data(), x.size())}, {s.output_names()[0]});
          if (i > 0) ms.push_back(ms_since(t));  // the first run plans memory
        }
        return median(ms);
      };
      Ephost::Session on_device(env, ctx, opencl());
      Ephost::SessionOptions cpu;
      cpu.set_threads(2);
      cpu.append_provider("cpu");
      Ephost::Session on_cpu(env, source, cpu);
      const double run_opencl = latency(on_device), run_cpu = latency(on_cpu);
      const size_t copies = copies_per_run(json::parse(on_device.partition_report_json()));
      std::printf("%-4s %14.1f %12.2f %7.0fx %14.2f %14.2f %10zu\n", c.key, create_source, median(create_ctx),
                  create_source / median(create_ctx), run_opencl, run_cpu, copies);
    }
    boost::system::error_code ec;
    fs::remove_all(dir, ec);
  } catch (const std::exception& e) {
    std::cerr << "opencl_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
