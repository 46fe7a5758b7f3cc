#include "isolation/provider_host_server.h"

#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "plugin_abi/handles.h"
#include "core/error.h"
#include "core/profiler.h"
#include "core/runtime_value.h"
#include "core/tensor.h"
#include "discovery/plugin_registry.h"
#include "isolation/graph_snapshot.h"
#include "isolation/served_context.h"
#include "isolation/served_device_memory.h"
#include "isolation/shared_arena.h"
#include "isolation/shared_region.h"
#include "isolation/wire.h"
#include "model/loader.h"
#include "model/model.h"
#include "partition/partition.h"
#include "provider/provider.h"

namespace ephost::isolation {
namespace {

struct ServedGraph {
  std::unique_ptr<Model> model;
  std::unique_ptr<Graph> main;
};

class Server {
 public:
  Server(int socket_fd, SharedArena arena) : socket_(socket_fd), arena_(std::move(arena)) {}

  int run() {
    std::string request;
    for (;;) {
      const ReadResult r = read_frame_until(socket_, std::chrono::steady_clock::time_point::max(), request, nullptr,
                                            nullptr, &passed_fd_);
      if (r != ReadResult::kFrame) return 0;  // the host closed the socket: it is done with this process
      const MessageWriter reply = answer(request);
      if (passed_fd_ >= 0) ::close(passed_fd_);  // passed with a request that did not take it
      passed_fd_ = -1;
      if (!write_frame(socket_, reply.data())) return 0;
    }
  }

 private:
  // `client`: the host's provider this request is for (several sessions' providers of one plugin share
  // this process); its provider, graphs and units are its own.
  void handle(Op op, uint64_t client, MessageReader& in, MessageWriter& out) {
    client_ = client;
    switch (op) {
      case Op::kCreate: return create(in, out);
      case Op::kGraph: return add_graph(in);
      case Op::kClaims: return claims(in, out);
      case Op::kCreateKernel: return add_unit(provider().create_kernel(node(in)), out);
      case Op::kCompile: return compile(in, out);
      case Op::kCreateState: return provider().create_state(unit(in.u64()));
      case Op::kCompute: return compute(in, out);
      case Op::kRunStart: return provider().run_start();
      case Op::kRunEnd: return provider().run_end();
      case Op::kReleaseUnit: units_.erase(in.u64()); return;
      case Op::kEmitContext: return emit_context(in, out);
      case Op::kJudgeContext: return judge_context(in, out);
      case Op::kLoadContext: return load_context(in, out);
      case Op::kBatch: return batch(in, out);
      case Op::kDestroy: return destroy();
      case Op::kDeviceAllocate: {
        const uint64_t id = in.u64(), device = in.u64();
        return memory_.allocate(id, device, in.u64());
      }
      case Op::kDeviceFree: return memory_.free(in.u64());
      case Op::kCopyToDevice: return copy_to_device(in);
      case Op::kCopyToHost: return copy_to_host(in, out);
      case Op::kCopyOnDevice: {
        const uint64_t stream = in.u64(), src = in.u64(), src_offset = in.u64(), dst = in.u64(), dst_offset = in.u64();
        return memory_.copy_on_device(stream, src, src_offset, dst, dst_offset, in.u64());
      }
      case Op::kStreamCreate: {
        const uint64_t id = in.u64();
        return memory_.create_stream(id, in.u64());
      }
      case Op::kStreamSynchronize: return memory_.synchronize(in.u64());
      case Op::kStreamRelease: return memory_.release_stream(in.u64());
      case Op::kAttachRegion: return attach_region(in);
      case Op::kDetachRegion: {
        // An upload still queued from it reads it until its stream is finished.
        memory_.settle_uploads();
        return regions_.detach(in.u64());
      }
      case Op::kSync: return provider().sync(in.str().c_str());
      case Op::kStartProfiling: return start_profiling(in);
      case Op::kEndProfiling: return end_profiling(out);
    }
    fail(EPHOST_EP_FAIL, "provider host: unknown request {}", static_cast<uint32_t>(op));
  }

  Provider& provider() {
    auto it = providers_.find(client_);
    if (it == providers_.end() || !it->second) fail(EPHOST_EP_FAIL, "provider host: no provider was created for client {}", client_);
    return *it->second;
  }

  // The client's units, graphs and provider go (its session ended).
  void destroy() {
    for (auto it = units_.begin(); it != units_.end();)
      it = it->second.client == client_ ? units_.erase(it) : std::next(it);
    for (auto it = graphs_.begin(); it != graphs_.end();)
      it = it->first.first == client_ ? graphs_.erase(it) : std::next(it);
    providers_.erase(client_);
    profiles_.erase(client_);  // after its provider, which files events in it
  }

  // The client's provider profiles into a profile of this process that counts from the host's origin; its
  // events go back to the host at kEndProfiling.
  void start_profiling(MessageReader& in) {
    const Profiler::Clock::time_point origin{std::chrono::nanoseconds(in.i64())};
    Provider& p = provider();
    auto& profile = profiles_[client_];
    if (!profile) profile = std::make_unique<Profiler>("", origin);
    p.start_profiling(*profile);
  }

  void end_profiling(MessageWriter& out) {
    provider().end_profiling();
    auto it = profiles_.find(client_);
    const std::vector<Profiler::Recorded> events =
        it == profiles_.end() ? std::vector<Profiler::Recorded>() : it->second->take_recorded();
    out.u64(events.size());
    for (const Profiler::Recorded& e : events) {
      out.bytes(e.category).bytes(e.name).i64(e.start_us).i64(e.duration_us).u64(e.args.size());
      for (const auto& [key, value] : e.args) out.bytes(key).bytes(value);
    }
  }

  void create(MessageReader& in, MessageWriter& out) {
    const std::string path = in.str();
    const std::string name = in.str();
    const int64_t device_index = in.i64();
    std::vector<std::pair<std::string, std::string>> options;
    for (uint64_t n = in.u64(); n > 0; --n) {
      std::string key = in.str();
      options.emplace_back(std::move(key), in.str());
    }
    const PluginRecord& record = served_record(path, name);
    const Device* device = nullptr;
    if (device_index >= 0) {
      if (static_cast<size_t>(device_index) >= record.devices.size())
        fail(EPHOST_EP_FAIL, "plugin '{}' has no device {} in the provider host", record.name, device_index);
      device = record.devices[static_cast<size_t>(device_index)].get();
    }
    std::unique_ptr<Provider> provider = create_provider(record, options, device);
    uint32_t flags = (provider->emits_contexts() ? kCreatedEmitsContexts : 0u) |
                     (provider->observes_runs() ? kCreatedObservesRuns : 0u);
    if (device && device->has_streams()) flags |= kCreatedDeviceHasStreams;
    if (device && device->has_device_to_device_copy()) flags |= kCreatedDeviceCopiesBetweenDevices;
    if (provider->syncs()) flags |= kCreatedSyncs;
    out.u32(flags);
    providers_[client_] = std::move(provider);
  }

  // The record of provider `name` of the library at `path`, loaded in this process. The host probed the
  // library already; here it is loaded, once, for every client. A library may serve several providers (an
  // ONNX Runtime plugin EP library, one per factory): each is its own record, found by name. The host
  // starts one process per provider (shared_provider_host.h), so one name is served here.
  const PluginRecord& served_record(const std::string& path, const std::string& name) {
    if (!registry_) {
      ScanSettings settings;
      settings.in_process = true;
      registry_ = std::make_unique<PluginRegistry>(settings);
      const PluginRecord& first = registry_->load_library(path);
      if (!first.loaded) fail(EPHOST_EP_FAIL, "the provider host could not load {}: {}", path, first.skip_reason());
    }
    const PluginRecord* record = registry_->find_loaded(name);
    if (!record) {
      std::string served;
      for (const auto& r : registry_->records())
        if (r->loaded) served += (served.empty() ? "'" : ", '") + r->name + "'";
      fail(EPHOST_EP_FAIL, "the provider host loaded {}, which serves no provider '{}' (it serves {})", path, name,
           served.empty() ? "none" : served);
    }
    if (record->path != path)
      fail(EPHOST_EP_FAIL, "provider host: this process serves {}, not {} (internal error)", record->path, path);
    if (!registry_->ensure_loaded(*record))
      fail(EPHOST_EP_FAIL, "the provider host could not load {}: {}", path, record->skip_reason());
    memory_.serve(*record);
    return *record;
  }

  void add_graph(MessageReader& in) {
    const uint64_t id = in.u64();
    const std::string_view bytes = in.bytes();
    LoadOptions options;
    options.run_checker = false;  // the host checked it; the provider host sees what the host sees
    options.infer_shapes = false;
    ServedGraph g;
    g.model = load_model_from_buffer(bytes.data(), bytes.size(), options);
    g.main = build_graph_ir(*g.model);
    graphs_[{client_, id}] = std::move(g);
  }

  const Graph& graph(MessageReader& in) {
    const uint64_t id = in.u64();
    auto it = graphs_.find({client_, id});
    if (it == graphs_.end()) fail(EPHOST_EP_FAIL, "provider host: graph {} was never sent", id);
    return read_graph_path(in, *it->second.main);
  }

  const Node& node(MessageReader& in) {
    const Graph& g = graph(in);
    const uint64_t index = in.u64();
    if (index >= g.nodes.size()) fail(EPHOST_EP_FAIL, "provider host: node {} is not in graph '{}'", index, g.name);
    return *g.nodes[index];
  }

  ComputeUnit& unit(uint64_t id) {
    auto it = units_.find(id);
    if (it == units_.end() || it->second.client != client_)
      fail(EPHOST_EP_FAIL, "provider host: unit {} does not exist", id);
    return *it->second.unit;
  }

  // The unit reply (wire.h): the unit's id, then what the provider says once it made it.
  void add_unit(std::unique_ptr<ComputeUnit> unit, MessageWriter& out) {
    const uint64_t id = next_unit_++;
    units_[id] = ServedUnit{client_, std::move(unit)};
    const Provider& p = provider();
    out.u64(id).u32(p.emits_contexts() ? 1 : 0).bytes(p.compiled_model_compatibility_info());
  }

  void claims(MessageReader& in, MessageWriter& out) {
    const Graph& g = graph(in);
    const std::string occasion = in.str();
    const auto claims = provider().claims(*g.view, occasion.empty() ? nullptr : occasion.c_str());
    out.u64(claims.size());
    for (const auto& c : claims) {
      out.u32(c.fused ? 1 : 0).bytes(c.refused).u64(c.nodes.size());
      for (const Node* n : c.nodes) out.u64(n->index);
    }
  }

  // The reply to one request (op, client, its fields): kReplyOk and what the op writes, or the error's
  // status and message.
  MessageWriter answer(std::string_view bytes) {
    MessageWriter reply;
    try {
      MessageReader request(bytes);
      reply.u32(kReplyOk);
      const auto op = static_cast<Op>(request.u32());
      handle(op, request.u64(), request, reply);
    } catch (const Error& e) {
      reply = MessageWriter();
      reply.u32(static_cast<uint32_t>(e.code())).bytes(e.what());
    } catch (const std::exception& e) {
      reply = MessageWriter();
      reply.u32(EPHOST_EP_FAIL).bytes(e.what());
    }
    return reply;
  }

  // The requests sent ahead run in order; an on_run_start that fails ends the batch with its error.
  void batch(MessageReader& in, MessageWriter& out) {
    std::vector<std::string> failed_run_ends;
    for (uint64_t n = in.u64(); n > 0; --n) {
      MessageReader ahead(in.bytes());
      MessageWriter ignored;
      const auto op = static_cast<Op>(ahead.u32());
      const uint64_t client = ahead.u64();
      if (op != Op::kRunStart && op != Op::kRunEnd && op != Op::kDeviceFree && op != Op::kStreamRelease &&
          op != Op::kDetachRegion)
        fail(EPHOST_EP_FAIL, "provider host: request {} cannot be sent ahead", static_cast<uint32_t>(op));
      if (op != Op::kRunEnd) {
        handle(op, client, ahead, ignored);
        continue;
      }
      try {
        handle(op, client, ahead, ignored);
      } catch (const std::exception& e) {
        failed_run_ends.push_back(e.what());
      }
    }
    out.u64(failed_run_ends.size());
    for (const std::string& m : failed_run_ends) out.bytes(m);
    out.bytes(answer(in.bytes()).data());
  }

  void compile(MessageReader& in, MessageWriter& out) {
    const Graph& g = graph(in);
    std::vector<const Node*> nodes;
    for (uint64_t n = in.u64(); n > 0; --n) {
      const uint64_t index = in.u64();
      if (index >= g.nodes.size()) fail(EPHOST_EP_FAIL, "provider host: node {} is not in graph '{}'", index, g.name);
      nodes.push_back(g.nodes[index].get());
    }
    const std::string name = in.str();
    const std::unique_ptr<GraphView> view = make_group_view(g, nodes, name);
    add_unit(provider().compile(*view, name), out);
  }

  void compute(MessageReader& in, MessageWriter& out) {
    ComputeUnit& u = unit(in.u64());
    follow_arena(in.u64());
    const auto threads = static_cast<int32_t>(in.i64());
    const int64_t device_index = in.i64();  // the memory device's index, -1: host memory
    const uint64_t stream = in.u64();
    const uint64_t first_output_id = in.u64();
    std::optional<ServedContext> context;
    if (device_index >= 0)
      context.emplace(arena_, regions_, threads, memory_, &memory_.device(static_cast<uint64_t>(device_index)),
                      memory_.stream(stream), first_output_id);
    else
      context.emplace(arena_, regions_, threads);
    context->read_inputs(in);
    provider().compute(u, &*context);
    context->write_outputs(out);
  }

  // Maps the arena again when the host grew it to `size`; queued uploads that read the old mapping are
  // finished first.
  void follow_arena(uint64_t size) {
    if (size != arena_.size()) memory_.settle_uploads();
    arena_.follow(size);
  }

  // The host's bytes of a copy: in the arena (region 0), or in a shared region of the application.
  struct CopyBytes {
    char* data = nullptr;
    bool in_region = false;
  };
  CopyBytes copy_bytes(MessageReader& in, uint64_t bytes) {
    follow_arena(in.u64());
    const uint64_t region = in.u64(), at = in.u64();
    if (region) return {regions_.span(region, at, bytes), true};
    if (at > arena_.size() || bytes > arena_.size() - at)
      fail(EPHOST_EP_FAIL, "provider host: a copy of {} bytes at offset {} lies outside the shared memory ({} bytes)",
           bytes, at, arena_.size());
    return {arena_.base() + at, false};
  }

  void copy_to_device(MessageReader& in) {
    const uint64_t stream = in.u64(), id = in.u64(), offset = in.u64(), bytes = in.u64();
    const CopyBytes src = copy_bytes(in, bytes);
    // Arena bytes stay pending until the stream is finished; a region's are the application's tensor, which
    // the run reads as it stands (as in process, where an upload reads the application's buffer).
    const size_t arena_end = src.in_region ? 0 : static_cast<size_t>(src.data - arena_.base()) + bytes;
    memory_.copy_to_device(stream, id, offset, src.data, bytes, arena_end);
  }

  void copy_to_host(MessageReader& in, MessageWriter& out) {
    const uint64_t stream = in.u64(), id = in.u64(), offset = in.u64(), bytes = in.u64();
    memory_.copy_to_host(stream, id, offset, copy_bytes(in, bytes).data, bytes);
    out.u64(arena_.size());
  }

  // Maps the application's shared region passed with this request (shared_region.h).
  void attach_region(MessageReader& in) {
    const uint64_t id = in.u64(), size = in.u64();
    if (passed_fd_ < 0) fail(EPHOST_EP_FAIL, "provider host: shared tensor memory {} came without its descriptor", id);
    const int fd = passed_fd_;
    passed_fd_ = -1;
    regions_.attach(id, fd, size);
  }

  void emit_context(MessageReader& in, MessageWriter& out) {
    const std::string name = in.str();
    EphostContextSink sink;
    provider().emit_context(name, sink);
    out.u64(sink.pieces.size());
    for (const auto& p : sink.pieces) out.bytes({reinterpret_cast<const char*>(p.data()), p.size()});
    out.u64(sink.attributes.size());
    for (const auto& a : sink.attributes) out.bytes(a.first).bytes(a.second);
  }

  void judge_context(MessageReader& in, MessageWriter& out) {
    const Node& n = node(in);
    const std::string_view blob = in.bytes();
    const auto judgement = provider().judge_context(n, blob.data(), blob.size());
    out.u32(judgement ? 1 : 0).u32(judgement ? judgement->verdict : 0).bytes(judgement ? judgement->reason : "");
  }

  void load_context(MessageReader& in, MessageWriter& out) {
    const Node& n = node(in);
    const std::string_view blob = in.bytes();
    add_unit(provider().load_context(n, blob.data(), blob.size()), out);
  }

  struct ServedUnit {
    uint64_t client = 0;
    std::unique_ptr<ComputeUnit> unit;
  };

  int socket_;
  int passed_fd_ = -1;  // a descriptor passed with the request being handled (kAttachRegion takes it)
  SharedArena arena_;
  ServedRegions regions_;
  std::unique_ptr<PluginRegistry> registry_;  // the one library this process serves
  // Declared after the registry: released before it.
  ServedDeviceMemory memory_;  // released after the units (declared before them)
  std::map<uint64_t, std::unique_ptr<Provider>> providers_;  // by client
  std::map<uint64_t, std::unique_ptr<Profiler>> profiles_;    // by client, while its provider profiles
  std::map<std::pair<uint64_t, uint64_t>, ServedGraph> graphs_;  // by client and graph id
  std::map<uint64_t, ServedUnit> units_;  // released before the providers
  uint64_t next_unit_ = 1;
  uint64_t client_ = 0;  // the client of the request being handled
};

}  // namespace

int serve_provider_host(int socket_fd, int arena_fd, size_t arena_size) {
  try {
    Server server(socket_fd, SharedArena::adopt(arena_fd, arena_size));
    return server.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ephost-provider-host: %s\n", e.what());
    return 1;
  }
}

}  // namespace ephost::isolation
