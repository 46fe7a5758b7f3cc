#include "isolation/shared_provider_host.h"

#include <map>
#include <tuple>
#include <utility>

namespace ephost::isolation {

std::shared_ptr<SharedProviderHost> shared_provider_host(const void* env, const std::string& plugin_path,
                                                         const std::string& provider) {
  static std::mutex* hosts_mutex = new std::mutex;  // leaked: sessions may end during static destruction
  static auto* hosts =
      new std::map<std::tuple<const void*, std::string, std::string>, std::weak_ptr<SharedProviderHost>>;
  std::lock_guard<std::mutex> lock(*hosts_mutex);
  for (auto it = hosts->begin(); it != hosts->end();)
    it = it->second.expired() ? hosts->erase(it) : std::next(it);
  std::weak_ptr<SharedProviderHost>& slot = (*hosts)[{env, plugin_path, provider}];
  std::shared_ptr<SharedProviderHost> host = slot.lock();
  if (!host) {
    host = std::make_shared<SharedProviderHost>();
    slot = host;
  }
  return host;
}

}  // namespace ephost::isolation
