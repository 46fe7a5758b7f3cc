#include "plugin_call_rules.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

namespace ephost::observer {

namespace {

std::string handle(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}

std::string what(const PluginCall& c) {
  std::string s = c.plugin + " " + c.function;
  if (c.object) s += "(" + handle(c.object) + (c.state ? ", state " + handle(c.state) : "") + ")";
  if (!c.node.empty()) s += " [" + c.node + "]";
  if (!c.name.empty()) s += " '" + c.name + "'";
  if (c.made) s += " -> " + handle(c.made);
  if (c.failed) s += " FAILED";
  return s;
}

// One lifetime of a handle: from the call that made it to the one that released it. Handles are
// addresses and may be reused once released, so a handle names the instance alive at the time.
struct Instance {
  std::string kind;  // "provider", "kernel", "compute unit", "state"
  const PluginCall* made = nullptr;
  const PluginCall* released = nullptr;
  std::vector<const PluginCall*> uses;
  Instance* owner = nullptr;  // a kernel's or unit's provider, a state's unit
  std::vector<Instance*> owned;
  size_t create_state_calls = 0;   // units: successful create_state calls
  bool made_a_state = false;       // units: one of them made a (non-NULL) state
  size_t run_starts = 0, run_ends = 0;  // providers
};

class Checker {
 public:
  explicit Checker(const std::vector<PluginCall>& calls) : calls_(calls) {
    std::sort(calls_.begin(), calls_.end(), [](const PluginCall& a, const PluginCall& b) { return a.begin < b.begin; });
  }

  std::vector<std::string> run() {
    for (const PluginCall& c : calls_) visit(c);
    for (const auto& i : instances_) check(*i);
    check_unloads();
    return problems_;
  }

 private:
  using Key = std::pair<const void*, const void*>;  // (handle, unit for a state)

  void visit(const PluginCall& c) {
    const std::string& f = c.function;
    if (f == "provider_create" || f == "provider_create_for_device") {
      if (!c.failed) make("provider", {c.made, nullptr}, c, nullptr);
    } else if (f == "provider_release") {
      release({c.object, nullptr}, "provider", c);
    } else if (f == "kernel_create" || f == "compile" || f == "context_load") {
      Instance* provider = use({c.object, nullptr}, "provider", c);
      if (!c.failed) make(f == "kernel_create" ? "kernel" : "compute unit", {c.made, nullptr}, c, provider);
    } else if (f == "kernel_compute") {
      use({c.object, nullptr}, "kernel", c);
    } else if (f == "kernel_release") {
      release({c.object, nullptr}, "kernel", c);
    } else if (f == "create_state") {
      Instance* unit = use({c.object, nullptr}, "compute unit", c);
      if (unit && !c.failed && ++unit->create_state_calls > 1)
        problems_.push_back("create_state ran twice for one compute unit: " + what(c));
      if (unit && !c.failed && c.made) unit->made_a_state = true;
      if (!c.failed && c.made) make("state", {c.made, c.object}, c, unit);
    } else if (f == "compute") {
      Instance* unit = use({c.object, nullptr}, "compute unit", c);
      if (c.state) {
        use({c.state, c.object}, "state", c);
      } else if (unit && unit->made_a_state) {
        problems_.push_back("compute got no state although create_state made one: " + what(c));
      }
    } else if (f == "release_state") {
      use({c.object, nullptr}, "compute unit", c);
      if (c.state) release({c.state, c.object}, "state", c);
    } else if (f == "release") {
      release({c.object, nullptr}, "compute unit", c);
    } else if (f == "on_run_start" || f == "on_run_end") {
      // A failed on_run_start starts nothing: only a started run is owed its on_run_end.
      Instance* p = use({c.object, nullptr}, "provider", c);
      if (p && !(f == "on_run_start" && c.failed)) ++(f == "on_run_start" ? p->run_starts : p->run_ends);
    } else if (f == "get_capability" || f == "context_emit" || f == "context_judge") {
      use({c.object, nullptr}, "provider", c);
    }
  }

  void make(const std::string& kind, Key key, const PluginCall& c, Instance* owner) {
    if (live_.count(key)) problems_.push_back(what(c) + " made a " + kind + " whose handle is still alive");
    instances_.push_back(std::make_unique<Instance>());
    Instance* i = instances_.back().get();
    i->kind = kind;
    i->made = &c;
    i->owner = owner;
    if (owner) owner->owned.push_back(i);
    live_[key] = i;
  }

  Instance* use(Key key, const std::string& kind, const PluginCall& c) {
    auto it = live_.find(key);
    if (it == live_.end() || it->second->kind != kind) {
      problems_.push_back(what(c) + " on a " + kind + " that was never made or is already released");
      return nullptr;
    }
    it->second->uses.push_back(&c);
    return it->second;
  }

  void release(Key key, const std::string& kind, const PluginCall& c) {
    auto it = live_.find(key);
    if (it == live_.end() || it->second->kind != kind) {
      problems_.push_back(what(c) + " releases a " + kind + " that was never made or is already released");
      return;
    }
    it->second->released = &c;
    live_.erase(it);
  }

  void check(const Instance& i) {
    if (!i.released) {
      problems_.push_back("the " + i.kind + " made by " + what(*i.made) + " was never released");
      return;
    }
    for (const PluginCall* u : i.uses) {
      if (u->begin < i.made->end) problems_.push_back(what(*u) + " began before " + what(*i.made) + " returned");
      if (u->end > i.released->begin)
        problems_.push_back(what(*u) + " had not returned when " + what(*i.released) + " began");
    }
    for (const Instance* o : i.owned)
      if (o->released && o->released->end > i.released->begin)
        problems_.push_back("release order: " + what(*o->released) + " after " + what(*i.released) + " began");
    if (i.kind == "provider" && i.run_starts != i.run_ends)
      problems_.push_back("provider " + handle(i.made->made) + ": " + std::to_string(i.run_starts) +
                          " on_run_start but " + std::to_string(i.run_ends) + " on_run_end");
  }

  // Nothing reaches a library once it is unloaded, and nothing is under way when it is (a library
  // loaded again starts over with negotiate).
  void check_unloads() {
    std::map<std::string, const PluginCall*> unloaded;  // plugin -> its unload, while unloaded
    for (const PluginCall& c : calls_) {
      if (c.function == "unload") {
        for (const PluginCall& other : calls_)
          if (other.plugin == c.plugin && &other != &c && other.begin < c.begin && other.end > c.begin)
            problems_.push_back(what(other) + " was under way when the library was unloaded");
        unloaded[c.plugin] = &c;
      } else if (c.function == "negotiate") {
        unloaded.erase(c.plugin);
      } else if (unloaded.count(c.plugin)) {
        problems_.push_back(what(c) + " came after the library was unloaded");
      }
    }
  }

  std::vector<PluginCall> calls_;
  std::vector<std::unique_ptr<Instance>> instances_;
  std::map<Key, Instance*> live_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> lifecycle_violations(const std::vector<PluginCall>& calls) { return Checker(calls).run(); }

std::string describe_calls(const std::vector<PluginCall>& calls) {
  std::string s;
  for (const PluginCall& c : calls) s += (s.empty() ? "" : "\n  ") + what(c);
  return s;
}

}  // namespace ephost::observer
