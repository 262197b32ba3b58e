# Cross-compiling for aarch64 Linux with Debian's crossbuild-essential-arm64 and the arm64
# multiarch development packages (scripts/install-deps.sh: dpkg --add-architecture arm64).
# Libraries and their CMake configs come from /usr/lib/aarch64-linux-gnu; the code generators
# (protoc, grpc_cpp_plugin) are the build machine's own x86 executables. Used by
# `cmake --preset aarch64-runner`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Headers and libraries: the target's only (/usr with the aarch64 library directory, and the
# architecture-independent headers under /usr/include); programs: the build machine's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc CACHE FILEPATH "the build machine's protoc")
# A board runs emulated on this machine (README, Device farm).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)

# pkg-config (FindOpenSSL, gRPC's re2) must read the target's .pc files, not the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
