// The built-in CPU plugin. libephost links it statically and negotiates with it through this entry
// point exactly as with a discovered plugin library (the symbol is not exported).
#pragma once

#include "ephost/ephost_plugin.h"

extern "C" EphostStatus* ephost_cpu_plugin_negotiate(EphostPluginNegotiation* negotiation);
