# `make package`: one Debian package of what `cmake --install` puts in place
# (cmake/WSCInstall.cmake), installed under /usr, so that
# find_package(WSC) finds /usr/lib/cmake/wsc.
set(WSC_PACKAGE_MAINTAINER
  "wsc maintainers <maintainers@users.noreply.a-seed-1dcccf18.example>"
  CACHE STRING "Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME wsc)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "MLIR compiler and emulator for weight-streaming training on wafer-scale systems")
set(CPACK_PACKAGE_CONTACT "${WSC_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/package)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)

# The packages of the shared libraries the tools load (wsc-run: OpenBLAS, Open MPI;
# wsc-opt, wsc-translate: MLIR and LLVM); our own libraries are static.
# Stated here rather than computed: dpkg-shlibdeps (from dpkg-dev) gives the
# same list on Debian 12 but cannot trace libLLVM through the symlink in
# /usr/lib/llvm-N/lib, and fails on it.
set(wsc_depends "libc6 (>= 2.34), libstdc++6 (>= 11), libgcc-s1 (>= 3.0), libopenblas0, libopenmpi3")
if(WSC_ENABLE_MLIR)
  string(APPEND wsc_depends
    ", libmlir-${LLVM_VERSION_MAJOR} (>= 1:${LLVM_PACKAGE_VERSION})"
    ", libllvm${LLVM_VERSION_MAJOR}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${wsc_depends}")
# What find_package(WSC) needs to build against the libraries and headers.
set(wsc_recommends "cmake, nlohmann-json3-dev, libopenblas-dev")
if(WSC_ENABLE_MLIR)
  string(APPEND wsc_recommends ", libmlir-${LLVM_VERSION_MAJOR}-dev")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "${wsc_recommends}")

include(CPack)
