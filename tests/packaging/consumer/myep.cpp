// A minimal third-party plugin built against the installed SDK (tests/packaging/install_test.sh).
#include "ephost/sdk/plugin.hpp"
using namespace ephost::sdk;
struct P : Provider { void get_capability(const Graph&, Capability&) override {} };
struct D { Description operator()() const { Description d; d.name = "myep"; d.vendor = "Me"; return d; } };
struct C { std::unique_ptr<Provider> operator()(const Options&) const { return std::make_unique<P>(); } };
EPHOST_DEFINE_PLUGIN(D, C)
