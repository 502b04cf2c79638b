# Install rules, the way MLIR installs itself: `cmake --install build --prefix P`
# puts under P
#   bin/           the tools
#   include/wsc/   the public headers, the .td files and the generated .inc
#   lib/           the static libraries
#   lib/cmake/wsc/ WSCConfig.cmake and the exported targets (namespace wsc::)
# so that another project can
#   find_package(WSC CONFIG REQUIRED)
#   target_link_libraries(tool PRIVATE wsc::MLIRWSCTransforms)
# examples/standalone-consumer is such a project; scripts/test-install.sh
# builds it against a fresh install.
include(CMakePackageConfigHelpers)

set(WSC_INSTALL_INCLUDEDIR include)
set(WSC_INSTALL_CMAKEDIR lib/cmake/wsc)

# Bottom layer first (docs/Architecture.md).
set(wsc_libraries WSCSupport WSCSchedule WSCSparse WSCModel WSCPlacement WSCRuntime)
set(wsc_tools wsc-run wsc-place)
if(WSC_ENABLE_MLIR)
  list(APPEND wsc_libraries MLIRWSC MLIRWSCAnalysis MLIRWSCTransforms MLIRWSCTarget)
  list(APPEND wsc_tools wsc-opt wsc-translate)
endif()

# The installed tools find libMLIR/libLLVM in /usr/lib/llvm-N/lib, which is
# not on the loader's path: keep the directories they were linked from.
set_target_properties(${wsc_tools} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${wsc_tools} RUNTIME DESTINATION bin)

install(TARGETS ${wsc_libraries} EXPORT WSCTargets
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib
  RUNTIME DESTINATION bin
  INCLUDES DESTINATION ${WSC_INSTALL_INCLUDEDIR})

install(DIRECTORY include/wsc DESTINATION ${WSC_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
if(WSC_ENABLE_MLIR)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/include/wsc DESTINATION ${WSC_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.inc"
    PATTERN CMakeFiles EXCLUDE)
endif()

install(EXPORT WSCTargets NAMESPACE wsc:: DESTINATION ${WSC_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/WSCConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/WSCConfig.cmake
  INSTALL_DESTINATION ${WSC_INSTALL_CMAKEDIR}
  PATH_VARS WSC_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/WSCConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/WSCConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/WSCConfigVersion.cmake
  DESTINATION ${WSC_INSTALL_CMAKEDIR})
