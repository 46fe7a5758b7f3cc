// ephost_model_runner: one model's timings through the C API, as one JSON line, for
// benchmarks/model_bench.py (which runs ONNX Runtime's side through benchmarks/ort_runner.js, with the
// same protocol and the same input files).
//
//   ephost_model_runner --model M.onnx --inputs INPUTS.json [--threads N] [--warmup W]
//                       [--min-runs R] [--max-runs R] [--min-seconds S] [--background] [--provider-option K=V]...
//                       [--config K=V]... [--partition-json FILE] [--dump-outputs FILE] [--verbose]
//
// INPUTS.json: [{"name": ..., "dtype": "float32" | "int64" | "int32" | "bool", "shape": [...],
//                "file": "raw little-endian data, relative to INPUTS.json"}, ...]
//
// Measured: session creation, the first run, then steady runs (after W untimed warm-up runs) until at
// least R runs and S seconds have passed; peak RSS is the process's VmHWM minus its VmRSS just before
// the session was created (inputs already loaded), steady RSS its VmRSS after the timed runs minus that
// baseline (what the session holds for good: the initializers it kept, packed weights, buffers);
// --config sets session configuration entries (session.keep_initializers=1); cpu_plugin_architecture is the built-in CPU plugin's
// "machine/ISA tier". --background: after the warm-up prints
// {"ready": true} and keeps running until stdin closes (the second worker of a side-by-side pair).
#include <ephost/ephost_c_api.h>
#include <ephost/ephost_session_options_keys.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>

namespace {

const EphostApi* api = nullptr;

[[noreturn]] void die(const std::string& what) {
  std::cerr << "ephost_model_runner: " << what << "\n";
  std::exit(1);
}

void check(EphostStatus* s, const char* what) {
  if (s == nullptr) return;
  std::string msg = api->GetErrorMessage(s);
  api->ReleaseStatus(s);
  die(std::string(what) + ": " + msg);
}

// A /proc/self/status field in kB.
long status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') return std::atol(line.c_str() + n + 1);
  return -1;
}

// CPU time of the whole process (all threads), in ms: on a loaded machine a 1-thread run's CPU time
// says what the work costs, while its latency also counts the time other tasks held the CPU.
double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Page faults the process took so far (first touches of new memory: a large share of session
// creation on machines where the kernel clears pages slowly).
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Input {
  std::string name;
  EphostElementType type;
  std::vector<int64_t> shape;
  std::vector<char> data;
  EphostTensor* tensor = nullptr;
};

// What the built-in CPU plugin says it runs on ("x86_64/avx512": the machine and the ISA tier of its
// own loops, which EPHOST_CPU_ISA caps), as `ephost bench` prints it: a number says which path made it.
std::string cpu_plugin_architecture(const EphostEnv* env) {
  for (size_t i = 0; i < api->GetPluginReportCount(env); ++i) {
    EphostPluginReport r{};
    r.struct_size = sizeof r;
    EphostStatus* s = api->GetPluginReport(env, i, &r);
    if (s != nullptr) {
      api->ReleaseStatus(s);
      continue;
    }
    if (r.loaded && std::strcmp(r.path, "<built-in>") == 0 && std::strcmp(r.name, "cpu") == 0)
      return r.hardware_architecture;
  }
  return "unknown";
}

EphostElementType type_of(const std::string& s) {
  if (s == "float32") return EPHOST_ELEMENT_FLOAT;
  if (s == "int64") return EPHOST_ELEMENT_INT64;
  if (s == "int32") return EPHOST_ELEMENT_INT32;
  if (s == "bool") return EPHOST_ELEMENT_BOOL;
  die("unknown dtype " + s);
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, inputs_path;
  int threads = 1, warmup = 3, min_runs = 10, max_runs = 100000;
  double min_seconds = 2.0;
  bool background = false;
  EphostLogLevel log_level = EPHOST_LOG_WARNING;
  std::string partition_out, dump_out;
  std::vector<std::pair<std::string, std::string>> provider_options;
  std::vector<std::pair<std::string, std::string>> free_dims;  // --free-dim NAME=VALUE
  std::vector<std::pair<std::string, std::string>> config;     // --config KEY=VALUE
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--model") model = next();
    else if (a == "--inputs") inputs_path = next();
    else if (a == "--threads") threads = std::stoi(next());
    else if (a == "--warmup") warmup = std::stoi(next());
    else if (a == "--min-runs") min_runs = std::stoi(next());
    else if (a == "--max-runs") max_runs = std::stoi(next());
    else if (a == "--min-seconds") min_seconds = std::stod(next());
    else if (a == "--background") background = true;
    else if (a == "--verbose") log_level = EPHOST_LOG_VERBOSE;
    else if (a == "--partition-json") partition_out = next();
    else if (a == "--dump-outputs") dump_out = next();
    else if (a == "--provider-option") {
      std::string kv = next();
      size_t eq = kv.find('=');
      if (eq == std::string::npos) die("--provider-option wants KEY=VALUE");
      provider_options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else if (a == "--config") {
      std::string kv = next();
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) die("--config wants KEY=VALUE");
      config.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else if (a == "--free-dim") {
      std::string kv = next();
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) die("--free-dim wants NAME=VALUE");
      free_dims.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else die("unknown argument " + a);
  }
  if (model.empty() || inputs_path.empty()) die("--model and --inputs are required");
  api = EphostGetApi(EPHOST_API_VERSION);
  if (api == nullptr) die("no C API table");

  // Inputs first, so that the RSS baseline includes them.
  std::vector<Input> inputs;
  {
    std::ifstream f(inputs_path);
    if (!f) die("cannot read " + inputs_path);
    nlohmann::json j = nlohmann::json::parse(f);
    std::string dir = inputs_path.substr(0, inputs_path.find_last_of('/') + 1);
    for (const auto& e : j) {
      Input in;
      in.name = e.at("name").get<std::string>();
      in.type = type_of(e.at("dtype").get<std::string>());
      in.shape = e.at("shape").get<std::vector<int64_t>>();
      std::ifstream d(dir + e.at("file").get<std::string>(), std::ios::binary);
      if (!d) die("cannot read input file for " + in.name);
      in.data.assign(std::istreambuf_iterator<char>(d), std::istreambuf_iterator<char>());
      inputs.push_back(std::move(in));
    }
  }
  for (Input& in : inputs)
    check(api->CreateTensorWithData(in.type, in.shape.data(), in.shape.size(), in.data.data(), in.data.size(),
                                    &in.tensor),
          "input tensor");

  EphostEnv* env = nullptr;
  check(api->CreateEnv(log_level, &env), "CreateEnv");
  EphostSessionOptions* options = nullptr;
  check(api->CreateSessionOptions(&options), "CreateSessionOptions");
  check(api->SetIntraOpNumThreads(options, threads), "SetIntraOpNumThreads");
  for (auto& [name, value] : free_dims)
    check(api->AddSessionConfigEntry(options, (kEphostSessionOptionsFreeDimensionOverridePrefix + name).c_str(),
                                     value.c_str()),
          "--free-dim");
  for (auto& [key, value] : config)
    check(api->AddSessionConfigEntry(options, key.c_str(), value.c_str()), "--config");
  if (!provider_options.empty()) {
    std::vector<const char*> keys, values;
    for (auto& kv : provider_options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    check(api->AppendProvider(options, "cpu", keys.data(), values.data(), keys.size()), "AppendProvider");
  }

  const long rss_base = status_kb("VmRSS");
  const double create_cpu0 = process_cpu_ms();
  const long create_faults0 = minor_faults();
  auto t0 = std::chrono::steady_clock::now();
  EphostSession* session = nullptr;
  check(api->CreateSession(env, model.c_str(), options, &session), "CreateSession");
  const double create_ms = ms_since(t0);
  const double create_cpu_ms = process_cpu_ms() - create_cpu0;
  const long create_faults = minor_faults() - create_faults0;
  if (!partition_out.empty()) {
    char* json = nullptr;
    check(api->SessionGetPartitionReportJson(session, &json), "partition report");
    std::ofstream(partition_out) << json;
    api->FreeString(json);
  }

  std::vector<const char*> in_names;
  std::vector<const EphostTensor*> in_values;
  for (const Input& in : inputs) {
    in_names.push_back(in.name.c_str());
    in_values.push_back(in.tensor);
  }
  std::vector<const char*> out_names;
  for (size_t i = 0; i < api->SessionGetOutputCount(session); ++i) {
    const char* n = nullptr;
    check(api->SessionGetOutputName(session, i, &n), "output name");
    out_names.push_back(n);
  }
  std::vector<EphostTensor*> outs(out_names.size(), nullptr);
  auto run = [&] {
    check(api->Run(session, in_names.data(), in_values.data(), in_values.size(), out_names.data(), out_names.size(),
                   outs.data()),
          "Run");
    for (EphostTensor*& t : outs) {
      api->ReleaseTensor(t);
      t = nullptr;
    }
  };

  const double first_cpu0 = process_cpu_ms();
  t0 = std::chrono::steady_clock::now();
  run();
  const double first_ms = ms_since(t0);
  const double first_cpu_ms = process_cpu_ms() - first_cpu0;
  if (!dump_out.empty()) {
    // Every output of one more run, as raw float32 in output order (the benchmarks compare runtimes).
    check(api->Run(session, in_names.data(), in_values.data(), in_values.size(), out_names.data(), out_names.size(),
                   outs.data()),
          "Run");
    std::ofstream f(dump_out, std::ios::binary);
    for (EphostTensor*& t : outs) {
      if (api->TensorGetElementType(t) == EPHOST_ELEMENT_FLOAT)
        f.write(static_cast<const char*>(api->TensorGetData(t)),
                static_cast<std::streamsize>(api->TensorGetElementCount(t) * sizeof(float)));
      api->ReleaseTensor(t);
      t = nullptr;
    }
  }
  for (int i = 0; i < warmup; ++i) run();

  if (background) {
    std::atomic<bool> stop{false};
    std::thread watcher([&] {
      char buf[64];
      while (std::fread(buf, 1, sizeof buf, stdin) > 0) {
      }
      stop = true;
    });
    std::printf("{\"ready\": true}\n");
    std::fflush(stdout);
    long runs = 0;
    while (!stop) {
      run();
      ++runs;
    }
    watcher.join();
    std::printf("{\"background_runs\": %ld}\n", runs);
    return 0;
  }

  std::vector<double> times, cpu;
  const auto start = std::chrono::steady_clock::now();
  while (static_cast<int>(times.size()) < max_runs &&
         (static_cast<int>(times.size()) < min_runs || ms_since(start) < min_seconds * 1000.0)) {
    const double c0 = process_cpu_ms();
    t0 = std::chrono::steady_clock::now();
    run();
    times.push_back(ms_since(t0));
    cpu.push_back(process_cpu_ms() - c0);
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const long hwm = status_kb("VmHWM");
  const long rss_steady = status_kb("VmRSS");
  std::sort(cpu.begin(), cpu.end());
  const double cpu_median = n % 2 ? cpu[n / 2] : (cpu[n / 2 - 1] + cpu[n / 2]) / 2;

  nlohmann::ordered_json out;
  out["runtime"] = "ephost";
  out["version"] = EphostGetVersionString();
  out["threads"] = threads;
  out["cpu_plugin_architecture"] = cpu_plugin_architecture(env);
  out["create_ms"] = create_ms;
  out["create_cpu_ms"] = create_cpu_ms;
  out["create_page_faults"] = create_faults;
  out["first_run_ms"] = first_ms;
  out["first_run_cpu_ms"] = first_cpu_ms;
  out["median_ms"] = median;
  out["min_ms"] = sorted.front();
  out["p90_ms"] = sorted[std::min(n - 1, static_cast<size_t>(0.9 * static_cast<double>(n)))];
  out["cpu_ms"] = cpu_median;
  out["runs"] = n;
  out["rss_baseline_mb"] = rss_base / 1024.0;
  out["peak_rss_mb"] = (hwm - rss_base) / 1024.0;
  out["steady_rss_mb"] = (rss_steady - rss_base) / 1024.0;
  std::cout << out.dump() << std::endl;

  api->ReleaseSession(session);
  api->ReleaseSessionOptions(options);
  api->ReleaseEnv(env);
  for (Input& in : inputs) api->ReleaseTensor(in.tensor);
  return 0;
}
