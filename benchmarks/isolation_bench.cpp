// The cost of running a provider out of process (session.provider_isolation=process): the same plugin
// (the "faulty" test plugin with no fault: beta's chain interpreter) on the same model, in process and
// in a provider host process. The model is one Add-Mul-Relu chain, which the plugin takes as one fused
// group: one compute call per run, so the difference per run is the isolation's cost per call (the
// request, the reply, and the copy of the input into the shared arena and of the output out of it).
// Widths from 16 floats (the fixed cost) to 1 M floats (4 MiB each way: the copies' share). From 1024
// floats y stays in shared memory the host allocated (isolation_shared_outputs, the default), so only x
// is copied: a third session with isolation_shared_outputs=0 shows the cost of copying y out too, with
// the bytes copied per run of each (the report's isolation.bytes_copied).
//
// Then device memory (plugin ABI 3): the fakedev test plugin (fake device memory in its own process,
// streams) runs the same chain as one fused group with its buffers in the provider host, the host
// holding ids. A run there is several calls: the copy of x to the device, the compute (buffer ids), the
// copy of y back (which finishes the stream there, so the run's closing synchronization asks nothing; frees
// are sent ahead): its extra cost per run is shown,
// and divided by the run's requests to the provider host, per call. FAKEDEV_UNPROTECTED=1 is set, so
// the plugin's own mprotect calls are not measured.
//
// Then det-sized tensors on the device (`device` too): PP-OCRv4 det at 960x960 takes an 11 MB input and gives
// a 3.7 MB output. Here x [3, 921600] (11.06 MB) crosses in and y = ReduceMax over its rows [1, 921600]
// (3.69 MB) crosses out (one cheap pass, so the copies dominate), through fakedev isolated against in
// process, runs alternating between the two, with the overhead (from the minimums) split into its parts: the host's memcpy into and out of the shared memory (timed alone on a memfd mapping), the
// requests' round trips (the small-tensor rows' cost per request times the requests), and the rest (the
// provider host's copy no longer overlapping the host's work, waiting); and a third session, isolated with
// x and y shared tensors (API 6 CreateSharedTensor; IoBinding), whose bytes cross without the host's copies.
//
// Then ONNX Runtime plugin EPs (the adapter in the provider host): the compiling EP ortadd takes the chain
// as one fused group (one Compute per run), the kernel-registry EP ortkern as three single-node kernels
// (three OrtKernelImpl::Compute per run): their isolated cost per run, and per call.
//
// Then the fallback of a device provider (`fallback`): fakedev isolated crashes in compute three times
// (FAKEDEV_CRASH_FILE), so the session plans again without it (session/provider_fallback.h). Shown:
// the time from the third failed run's return to the first correct run's return (the new plan's
// partition, compile and planning included), and the per-run latency before (fakedev isolated) and
// after (the CPU plugin), beside a session on the CPU plugin alone.
//
//   ephost_isolation_bench [RUNS] [host|device|det|ort|fallback]   default 2000 runs per width and mode; `host`:
//                                                         the host memory section only; `device`:
//                                                         the device memory section only; `det`: its 16-float
//                                                         and det-sized rows only; `ort`: the ONNX Runtime
//                                                         plugin EPs only; `fallback`: the fallback only
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <memory>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ephost/ephost_cxx_api.h"

namespace {

std::string chain_model(int64_t width, int64_t rows = 1) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  auto set_type = [&](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(name == "x" ? rows : 1);
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
  if (rows > 1) {  // y: the maximum over x's rows, smaller than x (one cheap pass: the copies dominate)
    node("ReduceMax", {"x"}, "y");
    auto* axes = g->mutable_node(g->node_size() - 1)->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(0);
  } else {
    node("Add", {"x", "c"}, "a");
    node("Mul", {"a", "c"}, "m");
    node("Relu", {"m"}, "y");
  }
  std::string s;
  m.SerializeToString(&s);
  return s;
}

// CPU seconds (user + system) used so far by this process, and by the provider host `pid` (-1: none).
double self_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
double process_cpu_s(long pid) {
  if (pid <= 0) return 0;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;  // state .. cmajflt: fields 3-13
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Timing {
  double median_us = 0;  // wall, per run
  double min_us = 0;     // wall, per run
  double cpu_us = 0;     // CPU per run: this process, plus the provider host when isolated
  double copied_bytes = 0;  // per run: bytes the host copied across (the report's isolation.bytes_copied)
};

// Per-run times over `runs` runs (after 50 warm-up runs). `shared_outputs` false: the provider's outputs
// are copied out of the arena (ep.<provider>.isolation_shared_outputs=0), as before outputs stayed in
// shared memory.
Timing time_runs(Ephost::Env& env, const std::string& model, int64_t width, const char* mode, int runs,
                 const char* provider = "faulty", int64_t rows = 1, bool shared_outputs = true) {
  Ephost::SessionOptions o;
  o.set_threads(1);
  o.add_config("session.provider_isolation", mode);
  if (shared_outputs)
    o.append_provider(provider);
  else
    o.append_provider(provider, {{"isolation_shared_outputs", "0"}});
  if (std::string(provider) == "fakedev") {
    o.add_config("ep.fakedev.mode", "fused");
    o.add_config("ep.fakedev.claim", "Add,Mul,Relu,ReduceMax");
  }
  Ephost::Session s(env, model.data(), model.size(), o);
  std::vector<float> x(static_cast<size_t>(width * rows), 0.25f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) * 0.125f - 4.0f;
  std::vector<double> times;
  long host = -1;
  double cpu0 = 0;
  uint64_t copied0 = 0;
  auto copied = [&s] {
    const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
    return report["providers"][0].value("isolation", nlohmann::json::object()).value("bytes_copied", uint64_t{0});
  };
  for (int i = 0; i < runs + 50; ++i) {
    if (i == 50) {
      const nlohmann::json report = nlohmann::json::parse(s.partition_report_json());
      host = report["providers"][0]["isolation"].value("process_id", -1L);
      cpu0 = self_cpu_s() + process_cpu_s(host);
      copied0 = copied();
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto y = s.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {rows, width}, x.data(), x.size())}, {"y"});
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 50) times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  Timing t;
  t.cpu_us = (self_cpu_s() + process_cpu_s(host) - cpu0) * 1e6 / runs;
  t.copied_bytes = static_cast<double>(copied() - copied0) / runs;
  std::sort(times.begin(), times.end());
  t.median_us = times[times.size() / 2];
  t.min_us = times.front();
  return t;
}

// fakedev in process, isolated, and isolated with shared tensors (CreateSharedTensor: x a shared input, y
// bound to a shared tensor, so neither is copied through the arena) on `model` (x [rows, width]), runs
// alternating between the three sessions so that all see the same machine load (after 5 warm-up runs
// each): {in process, isolated, isolated shared}.
struct ThreeTimings {
  Timing in, isolated, shared;
};
ThreeTimings time_alternating(Ephost::Env& env, const std::string& model, int64_t rows, int64_t width, int runs) {
  std::unique_ptr<Ephost::Session> sessions[3];
  const char* modes[3] = {"in_process", "process", "process"};
  long hosts[3] = {-1, -1, -1};
  for (int k = 0; k < 3; ++k) {
    Ephost::SessionOptions o;
    o.set_threads(1);
    o.add_config("session.provider_isolation", modes[k]);
    o.append_provider("fakedev");
    o.add_config("ep.fakedev.mode", "fused");
    o.add_config("ep.fakedev.claim", "Add,Mul,Relu,ReduceMax");
    sessions[k] = std::make_unique<Ephost::Session>(env, model.data(), model.size(), o);
    const nlohmann::json report = nlohmann::json::parse(sessions[k]->partition_report_json());
    hosts[k] = report["providers"][0]["isolation"].value("process_id", -1L);
  }
  std::vector<float> x(static_cast<size_t>(width * rows));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) * 0.125f - 4.0f;
  Ephost::Tensor shared_x = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {rows, width});
  std::copy(x.begin(), x.end(), shared_x.data<float>());
  Ephost::Tensor shared_y = Ephost::Tensor::shared(EPHOST_ELEMENT_FLOAT, {1, width});
  Ephost::Session::IoBinding binding(*sessions[2]);
  binding.bind_input("x", shared_x).bind_output("y", shared_y);
  std::vector<double> times[3];
  double cpu[3] = {0, 0, 0};
  for (int i = 0; i < runs + 5; ++i)
    for (int k = 0; k < 3; ++k) {
      const double cpu0 = self_cpu_s() + process_cpu_s(hosts[k]);
      const auto t0 = std::chrono::steady_clock::now();
      if (k == 2)
        binding.run();
      else
        sessions[k]->run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {rows, width}, x.data(), x.size())},
                         {"y"});
      const auto t1 = std::chrono::steady_clock::now();
      if (i < 5) continue;
      times[k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      cpu[k] += self_cpu_s() + process_cpu_s(hosts[k]) - cpu0;
    }
  Timing t[3];
  for (int k = 0; k < 3; ++k) {
    std::sort(times[k].begin(), times[k].end());
    t[k].median_us = times[k][times[k].size() / 2];
    t[k].min_us = times[k].front();
    t[k].cpu_us = cpu[k] * 1e6 / runs;
  }
  return {t[0], t[1], t[2]};
}

double median_run_us(const std::function<void()>& run, int runs) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Microseconds (median of `runs`) of the host's two memcpy of an isolated run with `in` bytes in and `out`
// bytes out: into a warm memfd mapping (the shared memory) and out of it.
double arena_memcpy_us(size_t in, size_t out, int runs) {
  const int fd = memfd_create("bench-arena", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(in + out)) != 0) return -1;
  void* p = mmap(nullptr, in + out, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -1;
  auto* arena = static_cast<char*>(p);
  std::vector<char> src(in, 1), dst(out, 0);
  const double us = median_run_us(
      [&] {
        std::memcpy(arena, src.data(), in);
        std::memcpy(dst.data(), arena + in, out);
      },
      runs);
  munmap(p, in + out);
  close(fd);
  return us;
}

// fakedev (in `env`) isolated on a chain of `width` floats, crashed three times; then on the CPU plugin.
void fallback_timing(Ephost::Env& env, const std::string& folder, int64_t width, int runs) {
  const std::string model = chain_model(width);
  const std::string crash = folder + "/crash-now";
  setenv("FAKEDEV_CRASH_FILE", crash.c_str(), 1);
  Ephost::SessionOptions o;
  o.set_threads(1);
  o.add_config("session.provider_isolation", "process");
  o.append_provider("fakedev");
  o.add_config("ep.fakedev.mode", "fused");
  Ephost::Session s(env, model.data(), model.size(), o);
  Ephost::SessionOptions cpu_options;
  cpu_options.set_threads(1);
  cpu_options.append_provider("cpu");
  Ephost::Session cpu(env, model.data(), model.size(), cpu_options);
  std::vector<float> x(static_cast<size_t>(width), 0.25f);
  auto run_on = [&](const Ephost::Session& session) {
    session.run({"x"}, {Ephost::Tensor::wrap(EPHOST_ELEMENT_FLOAT, {1, width}, x.data(), x.size())}, {"y"});
  };
  median_run_us([&] { run_on(s); }, 50);
  const double before = median_run_us([&] { run_on(s); }, runs);
  auto failed_at = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) {
    std::ofstream(crash) << "crash";
    try {
      run_on(s);
      std::printf("a run whose compute crashed succeeded\n");
    } catch (const Ephost::Exception&) {
      failed_at = std::chrono::steady_clock::now();
    }
  }
  run_on(s);
  const double recovery_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - failed_at).count();
  median_run_us([&] { run_on(s); }, 50);
  const double after = median_run_us([&] { run_on(s); }, runs);
  median_run_us([&] { run_on(cpu); }, 50);
  const double cpu_only = median_run_us([&] { run_on(cpu); }, runs);
  std::printf("%-9lld %14.2f %13.2f %11.2f %11.2f\n", static_cast<long long>(width), recovery_ms, before, after,
              cpu_only);
  unsetenv("FAKEDEV_CRASH_FILE");
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 2000;
  const std::string section = argc > 2 ? argv[2] : "";
  const bool device_only = section == "device" || section == "det" || section == "fallback";
  Ephost::Env env(EPHOST_LOG_ERROR, std::vector<std::string>{});
  env.register_plugin(EPHOST_FAULTY_PLUGIN);
  if (section.empty() || section == "ort") {
    env.register_plugin(EPHOST_ORT_TEST_PLUGIN);
    env.register_plugin(EPHOST_ORT_KERNEL_TEST_PLUGIN);
    std::printf("ONNX Runtime plugin EPs: per run, microseconds (as below); us/call = wall median difference "
                "per plugin call\n");
    std::printf("%-8s %-9s %11s %11s %11s | %11s %11s %11s | %10s %9s %9s\n", "ep", "floats", "in_median", "in_min",
                "in_cpu", "iso_median", "iso_min", "iso_cpu", "cpu_extra", "cpu_ratio", "us/call");
    // ortadd: one fused group, one Compute per run; ortkern: Add, Mul and Relu kernels, three per run.
    for (const auto& [ep, calls] : std::vector<std::pair<const char*, double>>{{"ortadd", 1}, {"ortkern", 3}})
      for (int64_t width : {16, 1024, 65536}) {
        const std::string model = chain_model(width);
        const Timing in = time_runs(env, model, width, "in_process", runs, ep);
        const Timing out = time_runs(env, model, width, "process", runs, ep);
        std::printf("%-8s %-9lld %11.2f %11.2f %11.2f | %11.2f %11.2f %11.2f | %10.2f %9.2f %9.2f\n", ep,
                    static_cast<long long>(width), in.median_us, in.min_us, in.cpu_us, out.median_us, out.min_us,
                    out.cpu_us, out.cpu_us - in.cpu_us, out.cpu_us / in.cpu_us,
                    (out.median_us - in.median_us) / calls);
      }
    if (section == "ort") return 0;
    std::printf("\n");
  }
  std::printf("per run, microseconds: wall median and min; CPU of this process plus the provider host; "
              "copied: bytes the host copied across per run\n");
  std::printf("%-9s %11s %11s %11s | %11s %11s %11s | %10s %9s %10s | %11s %9s %10s\n", "floats", "in_median",
              "in_min", "in_cpu", "iso_median", "iso_min", "iso_cpu", "cpu_extra", "cpu_ratio", "copied",
              "copy_cpu", "cpu_ratio", "copied");
  for (int64_t width : {16, 1024, 65536, 1048576}) {
    if (device_only) break;
    const std::string model = chain_model(width);
    const int n = width >= 1048576 ? std::max(20, runs / 20) : runs;
    const Timing in = time_runs(env, model, width, "in_process", n);
    const Timing out = time_runs(env, model, width, "process", n);
    // The same isolated session with its outputs copied out of the arena (isolation_shared_outputs=0).
    const Timing copying = time_runs(env, model, width, "process", n, "faulty", 1, false);
    std::printf("%-9lld %11.2f %11.2f %11.2f | %11.2f %11.2f %11.2f | %10.2f %9.2f %10.0f | %11.2f %9.2f %10.0f\n",
                static_cast<long long>(width), in.median_us, in.min_us, in.cpu_us, out.median_us, out.min_us,
                out.cpu_us, out.cpu_us - in.cpu_us, out.cpu_us / in.cpu_us, out.copied_bytes, copying.cpu_us,
                copying.cpu_us / in.cpu_us, copying.copied_bytes);
  }
  if (section == "host") return 0;

  // Device memory: fakedev alone in a plugin folder, probed by the scanner (so an isolated session has
  // its device), in process against isolated.
  setenv("FAKEDEV_UNPROTECTED", "1", 1);
  char folder[] = "/tmp/ephost-isolation-bench-XXXXXX";
  if (!mkdtemp(folder)) return 1;
  const std::string link = std::string(folder) + "/libephost_test_fakedev.so";
  if (symlink(EPHOST_FAKEDEV_PLUGIN, link.c_str()) != 0) return 1;
  {
    Ephost::Env device_env(EPHOST_LOG_ERROR, std::vector<std::string>{folder});
    if (section == "fallback") {
      std::printf("\nfallback of an isolated device provider after 3 crashes (fakedev, one fused group; per run, "
                  "wall median)\n");
      std::printf("%-9s %14s %13s %11s %11s\n", "floats", "recovery_ms", "before_us", "after_us", "cpu_only_us");
      for (int64_t width : {16, 1024, 65536}) fallback_timing(device_env, folder, width, runs);
    } else {
      // Requests per isolated run: copy in, compute, copy out, synchronize (the frees ride ahead).
      constexpr double kCallsPerRun = 3;
      std::printf("\ndevice memory (fakedev, one fused group; %g requests per isolated run)\n", kCallsPerRun);
      std::printf("%-9s %11s %11s %11s | %11s %11s %11s | %10s %9s %9s\n", "floats", "in_median", "in_min", "in_cpu",
                  "iso_median", "iso_min", "iso_cpu", "cpu_extra", "cpu_ratio", "us/call");
      double per_request_us = 0;
      for (int64_t width : {16, 1024, 65536, 1048576}) {
        if (section == "det" && width > 16) break;  // the small row only: the cost of a request
        const std::string model = chain_model(width);
        const int n = width >= 1048576 ? std::max(20, runs / 20) : runs;
        const Timing in = time_runs(device_env, model, width, "in_process", n, "fakedev");
        const Timing out = time_runs(device_env, model, width, "process", n, "fakedev");
        std::printf("%-9lld %11.2f %11.2f %11.2f | %11.2f %11.2f %11.2f | %10.2f %9.2f %9.2f\n",
                    static_cast<long long>(width), in.median_us, in.min_us, in.cpu_us, out.median_us, out.min_us,
                    out.cpu_us, out.cpu_us - in.cpu_us, out.cpu_us / in.cpu_us,
                    (out.median_us - in.median_us) / kCallsPerRun);
        if (width == 16) per_request_us = (out.median_us - in.median_us) / kCallsPerRun;
      }
      // det-sized: 11.06 MB in, 3.69 MB out.
      constexpr int64_t kDetRows = 3, kDetWidth = 921600;
      const size_t in_bytes = kDetRows * kDetWidth * sizeof(float), out_bytes = kDetWidth * sizeof(float);
      const std::string det = chain_model(kDetWidth, kDetRows);
      const int n = std::max(20, runs / 10);
      const ThreeTimings t = time_alternating(device_env, det, kDetRows, kDetWidth, n);
      const Timing& in = t.in;
      const Timing& out = t.isolated;
      const double memcpy_us = arena_memcpy_us(in_bytes, out_bytes, n);
      const double overhead = out.min_us - in.min_us;
      const double round_trips = per_request_us * kCallsPerRun;
      std::printf("\ndet-sized device I/O (fakedev, one ReduceMax; %.2f MB in, %.2f MB out; %d alternating runs): "
                  "per run, microseconds\n", in_bytes / 1e6, out_bytes / 1e6, n);
      std::printf("%10s %10s %10s %10s | %10s %10s %9s | %10s %10s %10s\n", "in_min", "iso_min", "in_median",
                  "iso_median", "in_cpu", "iso_cpu", "cpu_ratio", "arena_copy", "round_trip", "rest");
      std::printf("%10.1f %10.1f %10.1f %10.1f | %10.1f %10.1f %9.2f | %10.1f %10.1f %10.1f\n", in.min_us, out.min_us,
                  in.median_us, out.median_us, in.cpu_us, out.cpu_us, out.cpu_us / in.cpu_us, memcpy_us, round_trips,
                  overhead - memcpy_us - round_trips);
      std::printf("(overhead split from the minimums, iso_min - in_min = arena_copy + round_trip + rest; arena_copy: "
                  "the host's memcpy of the bytes into and out of a memfd mapping, timed alone; round_trip: %g "
                  "requests at the 16-float row's median cost; rest: the provider host's copies where they do not "
                  "overlap the host's, and waiting)\n", kCallsPerRun);
      // The same isolated run with x and y shared tensors (API 6): no arena copy on the host's side.
      std::printf("isolated with shared tensors (x a shared input, y bound to a shared tensor), same runs:\n");
      std::printf("%10s %10s %10s %10s | %10s %10s %9s | %10s %10s\n", "in_min", "shared_min", "in_median",
                  "sh_median", "in_cpu", "shared_cpu", "cpu_ratio", "min_ratio", "vs_iso_min");
      std::printf("%10.1f %10.1f %10.1f %10.1f | %10.1f %10.1f %9.2f | %10.3f %10.3f\n", in.min_us, t.shared.min_us,
                  in.median_us, t.shared.median_us, in.cpu_us, t.shared.cpu_us, t.shared.cpu_us / in.cpu_us,
                  t.shared.min_us / in.min_us, t.shared.min_us / out.min_us);
    }
  }
  unlink(link.c_str());
  rmdir(folder);
  return 0;
}
