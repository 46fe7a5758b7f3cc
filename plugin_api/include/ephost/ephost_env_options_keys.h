/*
 * ephost_env_options_keys.h — every env option libephost understands, one documented constant each.
 * Env options are given when an env is created (CreateEnvWithOptions, API version 3), since
 * discovery runs then:
 *
 *   const char* keys[] = {kEphostEnvOptionsPluginScanTimeoutMs};
 *   const char* values[] = {"2000"};
 *   api->CreateEnvWithOptions(EPHOST_LOG_WARNING, NULL, keys, values, 1, &env);
 *
 * Each option overrides the environment variable named beside it; an unknown key or an invalid value
 * is INVALID_ARGUMENT. Header-only, no dependencies; C and C++.
 */
#ifndef EPHOST_ENV_OPTIONS_KEYS_H_
#define EPHOST_ENV_OPTIONS_KEYS_H_

/* "child" (default) or "inprocess"; environment EPHOST_PLUGIN_SCAN. "child": every candidate plugin
 * library is probed (loaded, negotiated, described) in a child process, ephost-plugin-scanner, before
 * the host loads it; a library that crashes, aborts, exits or hangs there is skipped with that reason.
 * "inprocess": probed in the application's own process, for environments without fork or exec.
 * UNSAFE: a plugin that crashes or exits while probed then ends the application. Since API 3. */
static const char* const kEphostEnvOptionsPluginScan = "env.plugin_scan";

/* milliseconds, 1 to 3600000, default "10000"; environment EPHOST_PLUGIN_SCAN_TIMEOUT_MS. How long one
 * library may take to be probed before the scanner's child is killed and the library skipped as timed
 * out. Since API 3. */
static const char* const kEphostEnvOptionsPluginScanTimeoutMs = "env.plugin_scan_timeout_ms";

/* path, default $XDG_CACHE_HOME/ephost/plugin-registry-<machine>.json (~/.cache when XDG_CACHE_HOME is
 * unset); environment EPHOST_PLUGIN_REGISTRY. The registry cache: what the scanner found out about
 * each library, keyed by path, size, mtime, inode and the host's ABI, so that the next env probes only
 * what changed (a library that crashed stays skipped until its file changes; a refusal or a timeout is
 * probed again when the environment, the host version or the accelerator device nodes changed, and
 * after a backoff of 15 min doubling per repeated verdict up to 24 h). "" disables the cache.
 * A corrupt or foreign file is ignored and rewritten. Since API 3. */
static const char* const kEphostEnvOptionsPluginRegistry = "env.plugin_registry";

/* "0" (default) or "1"; no environment variable. "1": every plugin library is probed again in the
 * scanner, whatever the registry cache remembers, and the fresh verdicts are stored in it
 * (`ephost plugins --rescan`). Since API 3. */
static const char* const kEphostEnvOptionsPluginRescan = "env.plugin_rescan";

/* milliseconds, default "10000", "0" disables; environment EPHOST_PLUGIN_CALL_WARNING_MS. A call into
 * a plugin (get_capability, compile, compute, ...) that has not returned after this long is logged
 * at warning level naming the plugin, its library and the call: a plugin that hangs cannot be
 * interrupted in process, but it can be named. Since API 3. */
static const char* const kEphostEnvOptionsPluginCallWarningMs = "env.plugin_call_warning_ms";

#endif /* EPHOST_ENV_OPTIONS_KEYS_H_ */
