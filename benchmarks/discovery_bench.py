#!/usr/bin/python3
"""Plugin discovery time for N plugins, cold (every library probed by the crash-isolated plugin scanner)
and warm (every result read from the registry cache), measured on `ephost plugins`.

    benchmarks/discovery_bench.py [--ephost PATH] [--plugin LIB]... [--count N] [--repeat R]

Each --plugin library (default: the build's test plugins libephost_bench_relabel.so and
libephost_test_alpha.so, usable plugins, and libephost_broken_negotiate_segfault.so, one that crashes
while probed) is copied N times (default 50) into a temporary folder of its own under distinct file
names, and timed, as the median of R runs (default 7):
  base  `ephost plugins` over an empty folder (process start, the built-in CPU plugin)
  cold  the N copies with an empty $XDG_CACHE_HOME: the scanner probes every one in a child process
  warm  the same again: the registry cache answers, nothing is probed out of process (each warm run less
        a base run made just before it)
Both wall time and CPU time (the process and its children, from wait4) are shown, less base: on a
loaded machine wall time mostly measures waiting for a core.
  - A library holding the placeholder name "ephost_bench_000" (libephost_bench_relabel.so: the alpha test
    plugin built under that name) is relabelled in each copy ("ephost_bench_007", same length): N
    distinct usable plugins, the case the warm goal is about.
  - Copies of an ordinary usable plugin all say one plugin name: all but the first are duplicates.
  - Copies of a crashing plugin are skipped from the registry.
The warm line also says how many copies the host loaded in process ("in process"): with lazy loading
none is, until a session needs it.
Process start varies by tens of milliseconds on a loaded machine, more than the warm goal itself, so warm
discovery is also timed inside one process ("warm, in process"): CreateEnvWithPluginDirs alone through
the C API (ctypes on libephost), median of 10*R envs after two unmeasured ones, wall and the thread's
CPU time. Every env loads what it needs afresh: the previous one unloaded its plugins when released.
Goals (issue 12): warm <= 5 ms for 50 plugins, cold <= 50 ms per plugin.
"""
import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The name libephost_bench_relabel.so is built with; rewritten per copy (same length).
PLACEHOLDER = b"ephost_bench_000"


def timed(ephost, plugin_dir, cache_dir):
    """Wall and CPU seconds of one `ephost plugins` (CPU: the process and its reaped children)."""
    env = dict(os.environ, EPHOST_PLUGIN_PATH=plugin_dir, XDG_CACHE_HOME=cache_dir)
    env.pop("EPHOST_PLUGIN_REGISTRY", None)
    start = time.perf_counter()
    pid = os.posix_spawn(ephost, [ephost, "plugins"], env,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"discovery_bench: `ephost plugins` over {plugin_dir} failed (status {status})")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def in_process_child(libephost, folder, cache_dir, repeat):
    """Runs in a child interpreter: times CreateEnvWithPluginDirs over `folder`, warm, in this process."""
    os.environ["XDG_CACHE_HOME"] = cache_dir
    os.environ.pop("EPHOST_PLUGIN_REGISTRY", None)
    lib = ctypes.CDLL(libephost)
    lib.EphostGetApi.restype = ctypes.c_void_p
    lib.EphostGetApi.argtypes = [ctypes.c_uint32]
    api = lib.EphostGetApi(3)
    slot = lambda i: ctypes.c_void_p.from_address(api + 8 + 8 * i).value  # after struct_size, version
    create = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                              ctypes.POINTER(ctypes.c_void_p))(slot(6))  # CreateEnvWithPluginDirs
    release = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(slot(7))  # ReleaseEnv
    dirs = (ctypes.c_char_p * 2)(folder.encode(), None)
    runs = []
    for i in range(repeat + 2):
        env = ctypes.c_void_p()
        wall, cpu = time.perf_counter(), time.thread_time()
        status = create(3, dirs, ctypes.byref(env))  # EPHOST_LOG_ERROR
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if status:
            sys.exit("discovery_bench: CreateEnvWithPluginDirs failed")
        release(env)
        if i >= 2:
            runs.append((wall * 1e3, cpu * 1e3))
    print(json.dumps(median_of(runs)))


def time_in_process(libephost, folder, cache_dir, repeat):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", libephost, folder, cache_dir,
                          str(repeat)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def median_of(runs):
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        return in_process_child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ephost", default=os.environ.get("EPHOST", os.path.join(ROOT, "build/tools/cli/ephost")))
    p.add_argument("--libephost", default=os.path.join(ROOT, "build/host/libephost.so.0"),
                   help="the libephost the in-process timing loads (that of --ephost)")
    p.add_argument("--plugin", action="append")
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--repeat", type=int, default=7)
    a = p.parse_args()
    plugins = a.plugin or [os.path.join(ROOT, "build/tests/bench_plugins/libephost_bench_relabel.so")] + [
        os.path.join(ROOT, "build/tests/test_plugins", f"lib{n}.so")
        for n in ("ephost_test_alpha", "ephost_broken_negotiate_segfault")]
    for f in [a.ephost, *plugins]:
        if not os.path.exists(f):
            sys.exit(f"discovery_bench: {f} does not exist (build ephost_cli and ephost_test_plugins, or pass it)")

    with tempfile.TemporaryDirectory() as work:
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        base = median_of([timed(a.ephost, empty, os.path.join(work, "cache-base")) for _ in range(a.repeat)])
        print(f"{a.count} copies per plugin, median of {a.repeat} runs; wall / CPU in ms")
        print(f"base (empty folder): {base[0]:8.2f} / {base[1]:7.2f}")
        for plugin in plugins:
            folder = os.path.join(work, os.path.basename(plugin))
            os.makedirs(folder)
            with open(plugin, "rb") as f:
                image = f.read()
            relabel = PLACEHOLDER in image
            for i in range(a.count):
                copy = os.path.join(folder, f"libbench_plugin_{i:03d}.so")
                if relabel:
                    with open(copy, "wb") as f:
                        f.write(image.replace(PLACEHOLDER, f"ephost_bench_{i:03d}".encode()))
                    shutil.copymode(plugin, copy)
                else:
                    shutil.copyfile(plugin, copy)
            cold_runs = [timed(a.ephost, folder, os.path.join(work, f"cache-{os.path.basename(plugin)}-{r}"))
                         for r in range(a.repeat)]
            cache = os.path.join(work, f"cache-{os.path.basename(plugin)}-0")
            # Each warm run is paired with a base run just before it and counted as the difference: the
            # machine's load drifts more between the start of the bench and now than the goal is long.
            warm_diffs = []
            for _ in range(a.repeat):
                b = timed(a.ephost, empty, os.path.join(work, "cache-base"))
                w = timed(a.ephost, folder, cache)
                warm_diffs.append((w[0] - b[0], w[1] - b[1]))
            cold, warm_net = median_of(cold_runs), median_of(warm_diffs)
            # Who answered for the copies on a warm start: all "registry" when the cache works.
            env = dict(os.environ, EPHOST_PLUGIN_PATH=folder, XDG_CACHE_HOME=cache)
            env.pop("EPHOST_PLUGIN_REGISTRY", None)
            text = subprocess.run([a.ephost, "plugins", "--json"], env=env, capture_output=True, text=True).stdout
            report = json.loads(text[text.index("["):])
            copies = [r for r in report if "libbench_plugin_" in r["path"]]
            by = Counter(r["probed_by"] for r in copies)
            usable = sum(1 for r in copies if r["loaded"])
            in_process = sum(1 for r in copies if r["loaded"] and r.get("in_process", True))
            names = len({r["name"] for r in copies if r["loaded"]})
            n = a.count
            print(f"{os.path.basename(plugin)}{' (relabelled: distinct names)' if relabel else ''}: "
                  f"warm: {usable} usable, {names} distinct name(s), {in_process} loaded in process")
            print(f"  cold (scanner):  {cold[0] - base[0]:8.2f} / {cold[1] - base[1]:7.2f} for {n}, "
                  f"{(cold[0] - base[0]) / n:6.2f} / {(cold[1] - base[1]) / n:5.2f} per plugin (goal <= 50 per plugin)")
            print(f"  warm (registry): {warm_net[0]:8.2f} / {warm_net[1]:7.2f} for {n} (goal <= 5 in all); "
                  f"probed by: {', '.join(f'{c} {w}' for w, c in sorted(by.items()))}")
            empty_env = time_in_process(a.libephost, empty, cache, a.repeat * 10)
            warm_env = time_in_process(a.libephost, folder, cache, a.repeat * 10)
            print(f"  warm, in process: {warm_env[0]:8.2f} / {warm_env[1]:7.2f} for {n} "
                  f"(an env over an empty folder: {empty_env[0]:.2f} / {empty_env[1]:.2f})")


if __name__ == "__main__":
    main()
