#!/usr/bin/env bash
# Installs kiln's build and runtime dependencies from Debian 12 (bookworm) packages.
# Idempotent: packages already present are skipped, and nothing runs when all are there.
# Works as root or through sudo. Nothing is downloaded at build or run time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  llvm-19-dev liblld-19-dev lld-19
  libxgboost-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libssl-dev openssl
  libcpp-httplib-dev
  libsqlite3-dev sqlite3 libspdlog-dev libfmt-dev libonnx-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-grpcio python3-grpc-tools
  libopenblas-dev libdnnl-dev ocl-icd-opencl-dev
  chromium libpng-dev  # tests: kiln report rendered headless, its screenshot decoded
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 update
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y \
  --no-install-recommends "${missing[@]}"
