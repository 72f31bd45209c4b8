# Cross build for aarch64 Linux on a Debian host with the aarch64 toolchain
# (g++-aarch64-linux-gnu) and arm64 multiarch libraries (libprotobuf-dev:arm64,
# libssl-dev:arm64, libgtest-dev:arm64), as tools/setup.sh installs them. The
# host protoc generates the sources (it must be the arm64 libprotobuf's version).
# Run the results with qemu-aarch64 (tools/test_aarch64.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Debian multiarch: libraries under /usr/lib/aarch64-linux-gnu, headers shared
# under /usr/include (arch-specific ones under /usr/include/aarch64-linux-gnu).
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # protoc, python3: the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The host's x86-64 libraries must never satisfy a find_library.
list(APPEND CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)
# No -L: the arm64 multiarch libc (a dependency of the :arm64 libraries) is the
# loader /lib/ld-linux-aarch64.so.1 finds; mixing it with the cross libc of
# /usr/aarch64-linux-gnu (qemu -L) deadlocks the first futex wait.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
