# Third-party dependencies, all from Debian 12 packages (scripts/install-deps.sh).
# Recipes and traps: ../shared/reference/deps.md.
find_package(Threads REQUIRED)

# The board's build (KILN_RUNNER_ONLY) needs only OpenSSL, CLI11, nlohmann_json, spdlog (the
# runner's log), protobuf and gRPC (proto/CMakeLists.txt).
if(KILN_RUNNER_ONLY)
  find_package(OpenSSL REQUIRED)
  find_package(fmt CONFIG REQUIRED)
  find_package(spdlog CONFIG REQUIRED)
  find_package(CLI11 CONFIG REQUIRED)
  find_package(nlohmann_json CONFIG REQUIRED)
  find_package(Protobuf REQUIRED)
  return()
endif()

# LLVM 19: the single libLLVM.so plus lld's static archives. "19" alone is rejected; pin 19.1.
find_package(LLVM 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
find_package(LLD REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/lld)
add_library(kiln_llvm INTERFACE)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${LLD_INCLUDE_DIRS})
separate_arguments(_kiln_llvm_defs UNIX_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(kiln_llvm INTERFACE ${_kiln_llvm_defs})
target_link_libraries(kiln_llvm INTERFACE lldELF lldCommon LLVM)

find_package(SQLite3 REQUIRED)
# libpq: the PostgreSQL store's client (store/postgres/).
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
find_package(OpenSSL REQUIRED)  # libcrypto: artifact digests (common/sha256.h)
find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)

# ONNX 1.12: its config does not look up protobuf, so FindProtobuf must come first (deps.md §4.6).
# Targets onnx and onnx_proto (ONNX_NAMESPACE=onnx, ONNX_ML=1).
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)

# The test suite and benchmarks only (KILN_TESTS): GoogleTest, libpng to decode headless
# Chromium's screenshots, and the kernel benchmark's peers.
if(KILN_TESTS)
  find_package(GTest CONFIG REQUIRED)
  find_package(PNG REQUIRED)
  find_package(dnnl CONFIG QUIET)
  find_package(OpenBLAS CONFIG QUIET)
endif()

# XGBoost 1.7: its xgboost-config.cmake is broken in Debian 12 (deps.md §2); import by hand.
find_path(XGBOOST_INCLUDE_DIR xgboost/c_api.h REQUIRED)
find_library(XGBOOST_LIBRARY NAMES xgboost REQUIRED)
add_library(xgboost_c SHARED IMPORTED)
set_target_properties(xgboost_c PROPERTIES IMPORTED_LOCATION ${XGBOOST_LIBRARY}
                      INTERFACE_INCLUDE_DIRECTORIES ${XGBOOST_INCLUDE_DIR})
