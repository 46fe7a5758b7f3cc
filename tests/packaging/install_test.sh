#!/usr/bin/env bash
# What a user of the packages does, against the packages themselves (not the build tree):
#  1. unpacks the four .deb files (five with ephost-opencl) into a temporary root with dpkg-deb -x (the root is not /, so every
#     path the packages carry must be relative to where they are unpacked: pkg-config, CMake package);
#  2. checks the layout: multiarch libdir, plugin directory under it, soname link in the runtime package,
#     the development link, headers, CMake package and .pc in -dev, the tools in -tools;
#  3. builds samples/c_run with `pkg-config --cflags --libs ephost`;
#  4. builds a C++ application and a plugin with find_package(ephost) (tests/packaging/consumer);
#  5. builds the installed example_ep template out of tree and drops it into the installed default
#     plugin directory (the one pkg-config's plugindir names);
#  6. runs the demo model through each consumer and the installed `ephost`; the template plugin must be
#     discovered from the installed plugin directory and run the model, and the outputs must equal the
#     build tree's (CPU plugin) within 1e-4;
#  7. imports the unpacked Python package (python3-ephost) with Debian's python3 and runs the model
#     through it, on the installed plugins; runs the unpacked ephost-plugin-cts on the template plugin;
#  8. unpacks the .tar.gz and runs its `ephost` (found libephost through its RUNPATH) the same way.
#
#   install_test.sh BUILD_DIR SOURCE_DIR PACKAGE_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
PKG=$(cd "$3" && pwd)
PY=/usr/bin/python3
WORK=$(mktemp -d)
# The plugin registry cache of the installed ephost stays in the work folder.
export EPHOST_PLUGIN_REGISTRY=$WORK/plugin-registry.json
trap 'rm -rf "$WORK"' EXIT
fail() { echo "install test: FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }

ARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
LIBDIR=usr/lib/$ARCH

# ---- 1. unpack -----------------------------------------------------------------------------------
debs=("$PKG"/*.deb)
# A fifth package, ephost-opencl, where the build found OpenCL (plugins/opencl).
OPENCL=0
grep -q '^EPHOST_HAVE_OPENCL_PLUGIN:INTERNAL=ON' "$BUILD/CMakeCache.txt" && OPENCL=1
[ ${#debs[@]} -eq $((4 + OPENCL)) ] || fail "expected $((4 + OPENCL)) .deb files in $PKG, found ${#debs[@]}: ${debs[*]}"
ROOT=$WORK/root
for deb in "${debs[@]}"; do
  step "unpack $(basename "$deb")"
  dpkg-deb -x "$deb" "$ROOT"
done
pkgname() { dpkg-deb -f "$1" Package; }
declare -A DEB
for deb in "${debs[@]}"; do DEB[$(pkgname "$deb")]=$deb; done
for name in libephost0 libephost-dev ephost-tools python3-ephost; do
  [ -n "${DEB[$name]:-}" ] || fail "no package $name among: ${!DEB[*]}"
done

# ---- 2. layout -----------------------------------------------------------------------------------
step "layout"
# Each package's file list, read once (grep -q on a pipe would stop dpkg-deb mid-list: SIGPIPE).
for name in "${!DEB[@]}"; do dpkg-deb -c "${DEB[$name]}" | awk '{print $6}' | sed 's|^\./||' >"$WORK/$name.files"; done
expect_in() {  # package path-regex what
  grep -Eq "^$2\$" "$WORK/$1.files" || fail "$1 does not contain $3 ($2)"
}
expect_in libephost0 "$LIBDIR/libephost\.so\.0\.[0-9.]+" "the shared library in the multiarch libdir"
expect_in libephost0 "$LIBDIR/libephost\.so\.0" "the soname link"
expect_in libephost0 "$LIBDIR/ephost/plugins/" "the default plugin directory"
expect_in libephost0 "$LIBDIR/ephost/ephost-plugin-scanner" "the plugin scanner beside the plugin directory"
expect_in libephost0 "$LIBDIR/ephost/ephost-provider-host" "the provider host beside the plugin scanner"
expect_in libephost-dev "$LIBDIR/libephost\.so" "the development link"
expect_in libephost-dev "usr/include/ephost/ephost_c_api\.h" "the C API header"
expect_in libephost-dev "usr/include/ephost/sdk/plugin\.hpp" "the plugin SDK"
expect_in libephost-dev "$LIBDIR/cmake/ephost/ephostConfig\.cmake" "the CMake package"
expect_in libephost-dev "$LIBDIR/pkgconfig/ephost\.pc" "the pkg-config file"
expect_in libephost-dev "usr/share/ephost/samples/example_ep/CMakeLists\.txt" "the example EP template"
expect_in ephost-tools "usr/bin/ephost" "the ephost command"
expect_in ephost-tools "usr/bin/ep_weight_sharing_ctx_gen" "ep_weight_sharing_ctx_gen"
expect_in ephost-tools "usr/bin/ephost-plugin-cts" "the plugin conformance kit"
expect_in ephost-tools "$LIBDIR/ephost/cts/libephost_cts_observer\.so" "the kit's observer plugin"
expect_in ephost-tools "usr/share/ephost/plugin-cts/node/test_add/model\.onnx" "the kit's node cases"
if [ $OPENCL -eq 1 ]; then
  [ -n "${DEB[ephost-opencl]:-}" ] || fail "no package ephost-opencl among: ${!DEB[*]}"
  expect_in ephost-opencl "$LIBDIR/ephost/plugins/libephost_opencl\.so" "the OpenCL plugin in the default plugin directory"
  dpkg-deb -f "${DEB[ephost-opencl]}" Depends | grep -q 'libephost0' || fail "ephost-opencl does not depend on libephost0"
  dpkg-deb -f "${DEB[ephost-opencl]}" Depends | grep -q 'ocl-icd-libopencl1\|libopencl' ||
    fail "ephost-opencl does not depend on an OpenCL ICD loader"
fi
PYDIR=usr/lib/python3/dist-packages
expect_in python3-ephost "$PYDIR/ephost/__init__\.py" "the Python package"
expect_in python3-ephost "$PYDIR/ephost/_ephost\.cpython-[0-9]+-[a-z0-9_]+-linux-gnu\.so" "the Python extension"
dpkg-deb -f "${DEB[python3-ephost]}" Depends | grep -q 'python3-numpy' || fail "python3-ephost does not depend on python3-numpy"
dpkg-deb -f "${DEB[python3-ephost]}" Depends | grep -q 'libephost0' || fail "python3-ephost does not depend on libephost0"
if grep -Eq "^$LIBDIR/libephost\.so\$" "$WORK/libephost0.files"; then fail "the unversioned .so link is in libephost0"; fi
if grep -q '^usr/lib/libephost' "$WORK/ephost-tools.files" "$WORK/libephost-dev.files"; then fail "a library outside the multiarch libdir"; fi
dpkg-deb -f "${DEB[libephost-dev]}" Depends | grep -q 'libephost0 (= ' || fail "libephost-dev does not depend on libephost0 (= version)"
dpkg-deb -f "${DEB[ephost-tools]}" Depends | grep -q 'libephost0' || fail "ephost-tools does not depend on libephost0"
dpkg-deb -I "${DEB[libephost0]}" shlibs | grep -q '^libephost 0 libephost0' || fail "libephost0 has no shlibs entry"
dpkg-deb -I "${DEB[libephost0]}" triggers | grep -q 'activate-noawait ldconfig' || fail "libephost0 has no ldconfig trigger"
for elf in "$ROOT/usr/bin/ephost" "$ROOT/usr/bin/ephost-plugin-cts" "$ROOT/$PYDIR"/ephost/_ephost*.so; do
  if readelf -d "$elf" | grep -Eq 'RPATH|RUNPATH'; then fail "${elf#$ROOT} carries a RUNPATH"; fi
done

export LD_LIBRARY_PATH=$ROOT/$LIBDIR
unset EPHOST_PLUGIN_PATH
export PKG_CONFIG_PATH=$ROOT/$LIBDIR/pkgconfig
PLUGINDIR=$(pkg-config --variable=plugindir ephost)
[ "$(realpath "$PLUGINDIR")" = "$(realpath "$ROOT/$LIBDIR/ephost/plugins")" ] ||
  fail "pkg-config's plugindir is $PLUGINDIR, not the unpacked plugin directory $ROOT/$LIBDIR/ephost/plugins"

# ---- 3. samples/c_run with pkg-config --------------------------------------------------------------
step "build samples/c_run with pkg-config"
# shellcheck disable=SC2046
cc -std=c99 -Wall -o "$WORK/c_run" "$SRC/samples/c_run/main.c" $(pkg-config --cflags --libs ephost)
grep -q "$ROOT/$LIBDIR/libephost.so.0" <(ldd "$WORK/c_run") || fail "c_run does not load the unpacked libephost"

# ---- 4. C++ application and plugin with find_package(ephost) -----------------------------------------
step "build tests/packaging/consumer with find_package(ephost)"
cmake -S "$SRC/tests/packaging/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$ROOT/usr" >/dev/null
cmake --build "$WORK/consumer" >/dev/null
[ "$(realpath "$(cat "$WORK/consumer/plugin_dir.txt")")" = "$(realpath "$ROOT/$LIBDIR/ephost/plugins")" ] ||
  fail "ephost_PLUGIN_DIR of the CMake package is $(cat "$WORK/consumer/plugin_dir.txt")"

# ---- 5. the installed example_ep template, built out of tree ------------------------------------------
step "build the installed example_ep template out of tree"
cmake -S "$ROOT/usr/share/ephost/samples/example_ep" -B "$WORK/example_ep" -DCMAKE_PREFIX_PATH="$ROOT/usr" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/example_ep" -j2 >/dev/null
example_so=$(find "$WORK/example_ep" -name 'libephost_example_ep.so' | head -1)
[ -n "$example_so" ] || fail "the template built no libephost_example_ep.so"
cp "$example_so" "$PLUGINDIR/"
cp "$WORK/consumer/libmyep.so" "$PLUGINDIR/"

# ---- 6. run the model through each consumer ---------------------------------------------------------
MODEL=$WORK/demo.onnx
"$PY" "$SRC/samples/models/make_demo_model.py" "$MODEL" >/dev/null
step "reference: the build tree's c_run (CPU plugin only)"
env -u LD_LIBRARY_PATH EPHOST_PLUGIN_PATH= "$BUILD/samples/ephost_c_run" "$MODEL" 8 >"$WORK/reference.txt"
cat "$WORK/reference.txt"
step "installed: c_run (pkg-config), C++ app (find_package), /usr/bin/ephost"
"$WORK/c_run" "$MODEL" 8 >"$WORK/c_run.txt" || fail "c_run against the packages failed"
"$WORK/consumer/app" "$MODEL" 8 >"$WORK/app.txt" || fail "the C++ consumer against the packages failed"
"$ROOT/usr/bin/ephost" plugins --json >"$WORK/plugins.json" || fail "installed ephost plugins failed"
"$ROOT/usr/bin/ephost" run "$MODEL" --shape x=1,3,8,8 --report >"$WORK/ephost_run.txt" ||
  fail "installed ephost run failed"

"$PY" - "$ROOT/$LIBDIR/ephost/plugins" "$WORK" "$OPENCL" <<'PYCHECK' || fail "outputs or discovery differ (above)"
import json, math, os, re, sys
plugin_dir, work, opencl = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"

def outputs(path):
    found = {}
    for line in open(path):
        m = re.match(r"^(\S+): \[([0-9,]*)\] sum=(\S+) first=(\S+)$", line.strip())
        if m:
            found[m.group(1)] = (m.group(2), float(m.group(3)), [float(v) for v in m.group(4).split(",")])
    return found

def close(a, b):
    return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-4)

reference = outputs(os.path.join(work, "reference.txt"))
assert reference, "the build tree's c_run printed no float output"
errors = []
for name in ("c_run.txt", "app.txt"):
    got = outputs(os.path.join(work, name))
    for out, (shape, total, first) in reference.items():
        if out not in got:
            errors.append(f"{name}: output {out} missing"); continue
        g_shape, g_total, g_first = got[out]
        if g_shape != shape or not close(g_total, total) or not all(close(a, b) for a, b in zip(g_first, first)):
            errors.append(f"{name}: {out} = [{g_shape}] sum {g_total} first {g_first}; "
                          f"build tree: [{shape}] sum {total} first {first}")

# The template plugin and the consumer's plugin (and ephost-opencl's plugin, where it was built) were
# discovered from the installed plugin directory.
report = json.load(open(os.path.join(work, "plugins.json")))
for plugin in ("example", "myep") + (("opencl",) if opencl else ()):
    rows = [p for p in report if p.get("name") == plugin]
    if not rows or not rows[0].get("loaded"):
        errors.append(f"installed ephost did not load {plugin}: {json.dumps(report)}")
    elif rows[0].get("probed_by") not in ("scanner", "registry") or rows[0].get("probe_outcome") != "usable":
        # "registry": the consumers before it had the installed scanner probe it, and it was remembered.
        errors.append(f"installed ephost did not probe {plugin} with the installed plugin scanner: {json.dumps(rows[0])}")
    elif os.path.dirname(os.path.realpath(rows[0]["path"])) != plugin_dir:
        errors.append(f"{plugin} was loaded from {rows[0]['path']}, not from {plugin_dir}")
# ... and the example plugin ran the model (it claims every node of the demo model).
app = open(os.path.join(work, "app.txt")).read()
partition, _ = json.JSONDecoder().raw_decode(app, app.index("partition ") + len("partition "))
per_provider = partition.get("nodes_per_provider", {})
if per_provider.get("example", 0) == 0:
    errors.append(f"the example plugin ran no node in the C++ consumer: {per_provider}")
if not re.search(r"^\s+example: [1-9]", open(os.path.join(work, "ephost_run.txt")).read(), re.M):
    errors.append("installed `ephost run --report` shows no node on the example plugin")
for line in open(os.path.join(work, "app.txt")):
    if line.startswith("plugin example ") and os.path.dirname(os.path.realpath(line.split()[2])) != plugin_dir:
        errors.append(f"C++ consumer: {line.strip()} is not in {plugin_dir}")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
PYCHECK
cat "$WORK/c_run.txt"

# ---- 7. the Python package and the conformance kit, unpacked ------------------------------------------
step "import the unpacked Python package and run the model through it"
PYTHONPATH=$ROOT/$PYDIR PYTHONDONTWRITEBYTECODE=1 "$PY" - "$ROOT" "$MODEL" <<'PYRUN' ||
import os, sys
import numpy as np
import ephost
root, model = sys.argv[1:]
assert os.path.realpath(ephost.__file__).startswith(os.path.realpath(root)), ephost.__file__
# onnxruntime's names where a provider has one: example lists ExampleExecutionProvider as a source key.
assert "ExampleExecutionProvider" in ephost.get_available_providers(), ephost.get_available_providers()
session = ephost.InferenceSession(model, providers=["example"])
[inp] = session.get_inputs()
x = (np.arange(np.prod([1, 3, 8, 8]), dtype=np.float32).reshape(1, 3, 8, 8) % 8) / 8.0 - 0.5
print("python3-ephost", ephost.__version__, "outputs:", [o.name for o in session.get_outputs()])
assert session.get_partition_report()["nodes_per_provider"].get("example", 0) > 0
outputs = session.run(None, {inp.name: x})
on_cpu = ephost.InferenceSession(model, providers=["cpu"]).run(None, {inp.name: x})
for got, expected in zip(outputs, on_cpu):
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
PYRUN
  fail "the unpacked Python package does not run the model (above)"
step "the unpacked ephost-plugin-cts on the example template plugin (ABI section)"
"$ROOT/usr/bin/ephost-plugin-cts" "$PLUGINDIR/libephost_example_ep.so" --section abi >"$WORK/cts.txt" ||
  { cat "$WORK/cts.txt"; fail "the unpacked conformance kit does not pass the example plugin"; }
tail -3 "$WORK/cts.txt"

# ---- 8. the .tar.gz ----------------------------------------------------------------------------------
step "the .tar.gz"
tgz=("$PKG"/*.tar.gz)
[ ${#tgz[@]} -eq 1 ] || fail "expected one .tar.gz in $PKG"
mkdir -p "$WORK/tgz"
tar -xzf "${tgz[0]}" -C "$WORK/tgz"
TOP=$(find "$WORK/tgz" -mindepth 1 -maxdepth 1 -type d | head -1)
env -u LD_LIBRARY_PATH "$TOP/bin/ephost" run "$MODEL" --shape x=1,3,8,8 >/dev/null ||
  fail "the tarball's ephost does not run from where it was unpacked"
[ "$(realpath "$(PKG_CONFIG_PATH=$TOP/lib/$ARCH/pkgconfig pkg-config --variable=plugindir ephost)")" = \
  "$(realpath "$TOP/lib/$ARCH/ephost/plugins")" ] || fail "the tarball's ephost.pc is not relocatable"

echo "install test: passed (packages unpacked, three consumers built, model run through the installed plugin and the Python package, the kit ran)"
