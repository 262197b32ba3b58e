#!/usr/bin/env bash
# Installs kiln's dependencies from Debian 12 (bookworm) packages.
#   install-deps.sh demo   what the kiln binary needs to build and run (make demo)
#   install-deps.sh [all]  that, plus the test suite's and the benchmarks' (make test, make bench)
#   install-deps.sh bench  all, plus PyTorch and torchvision for bench/export_torchvision_models.py
#                          (large; nothing else needs them)
# Idempotent: packages already present are skipped, and nothing runs when all are there.
# Works as root or through sudo. Nothing is downloaded at build or run time.
set -euo pipefail

profile=${1:-all}
# The kiln binary: compiler and build tools, LLVM, XGBoost, gRPC, SQLite, ONNX and the rest.
kiln_packages=(
  g++ make cmake ninja-build pkg-config
  llvm-19-dev liblld-19-dev lld-19
  libxgboost-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libssl-dev openssl
  libcpp-httplib-dev
  libsqlite3-dev libpq-dev libspdlog-dev libfmt-dev libonnx-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
)
# The tests and benchmarks: GoogleTest, the Python client's gRPC, the Python module's build and
# tests (pybind11, numpy, onnx, pytest, PIL), the kernel peers (oneDNN,
# OpenBLAS), headless Chromium for the report checks, and the tools the suite calls.
test_packages=(
  build-essential clang-format sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-grpcio python3-grpc-tools
  python3-pybind11 pybind11-dev python3-numpy python3-onnx python3-pytest python3-pil
  libopenblas-dev libdnnl-dev ocl-icd-opencl-dev
  chromium libpng-dev  # kiln report rendered headless, its screenshot decoded
  python3-onnx python3-numpy  # scripts/make_mlp.py, the README's example model
  postgresql  # the PostgreSQL store's tests start a real server (tests/postgres/pg_server.h)
  # The aarch64 kiln-runner, cross-built and run under qemu-user (tests/arm): needs arm64 as a
  # foreign architecture (added below).
  crossbuild-essential-arm64 qemu-user-static
  libgrpc++-dev:arm64 libprotobuf-dev:arm64 libssl-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64
)
# More benchmark models: exported from torchvision with random weights (bench/).
bench_packages=(python3-torch python3-torchvision)
case "$profile" in
  demo) packages=("${kiln_packages[@]}") ;;
  all) packages=("${kiln_packages[@]}" "${test_packages[@]}") ;;
  bench) packages=("${kiln_packages[@]}" "${test_packages[@]}" "${bench_packages[@]}") ;;
  *) echo "install-deps: unknown profile '$profile' (expected demo, all or bench)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages of '$profile' present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if [[ " ${missing[*]} " == *":arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
fi
"${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 update
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y \
  --no-install-recommends "${missing[@]}"
