// Builds a recording test plugin from a plugin's own sources, unchanged: force-included before them
// (-include), it makes their EPHOST_DEFINE_PLUGIN(DESCRIBE, CREATE) expand to
// EPHOST_TEST_RECORDING_PLUGIN(EPHOST_TEST_PLUGIN_NAME, DESCRIBE, CREATE). The SDK header is included
// here first, so the source's own #include of it (#pragma once) changes nothing back.
#pragma once

#include "ephost/sdk/plugin.hpp"
#include "recording_plugin.hpp"

#ifndef EPHOST_TEST_PLUGIN_NAME
#error "EPHOST_TEST_PLUGIN_NAME names the plugin in the record"
#endif

#undef EPHOST_DEFINE_PLUGIN
#define EPHOST_DEFINE_PLUGIN(DESCRIBE, CREATE) EPHOST_TEST_RECORDING_PLUGIN(EPHOST_TEST_PLUGIN_NAME, DESCRIBE, CREATE)
