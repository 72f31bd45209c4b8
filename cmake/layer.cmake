# ONNX_PREPACK_PCH: the standard, protobuf (onnx_prepack.pb.h) and, in tests, gtest headers
# that nearly every source includes, parsed once per target instead of once per source
# (tools/test.sh's cold CI builds; off by default, since ccache and a PCH mix poorly).
set(OP_PCH_STD <algorithm> <cstdint> <cstring> <functional> <map> <memory> <optional> <set>
    <span> <string> <string_view> <utility> <vector>)
function(op_precompile target)
  if(ONNX_PREPACK_PCH)
    target_precompile_headers(${target} PRIVATE
        "$<$<COMPILE_LANGUAGE:CXX>:${OP_PCH_STD};${ARGN}>")
  endif()
endfunction()

# One static library per layer under src/, its sources found by glob so that
# adding a file needs no CMake edit. DEPS are the layers below it.
function(op_add_layer name)
  cmake_parse_arguments(L "" "" "DEPS;EXTRA" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS
       "${CMAKE_CURRENT_SOURCE_DIR}/*.cc" "${CMAKE_CURRENT_SOURCE_DIR}/*.h")
  op_apply_isa_flags(${srcs})
  list(FILTER srcs INCLUDE REGEX "\\.cc$")
  if(srcs)
    add_library(onnx_prepack_${name} STATIC ${srcs})
    set(scope PUBLIC)
  else()
    # A layer still being written: keep the dependency chain intact.
    add_library(onnx_prepack_${name} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(onnx_prepack_${name} ${scope}
      ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(onnx_prepack_${name} ${scope} ${L_DEPS} ${L_EXTRA})
  if(srcs)
    if(name STREQUAL "base")
      op_precompile(onnx_prepack_${name})
    else()  # every layer above base reads the format's protobuf messages
      op_precompile(onnx_prepack_${name} "${PROJECT_BINARY_DIR}/proto/onnx_prepack.pb.h")
    endif()
  endif()
endfunction()

# A gtest executable per test folder; each *_test.cc in it is compiled in.
function(op_add_test_folder name)
  cmake_parse_arguments(T "" "LABEL" "DEPS" ${ARGN})
  if(NOT T_LABEL)
    set(T_LABEL unit)
  endif()
  file(GLOB srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc")
  if(NOT srcs)
    return()
  endif()
  add_executable(${name}_tests ${srcs})
  target_link_libraries(${name}_tests PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  op_precompile(${name}_tests <gtest/gtest.h> "${PROJECT_BINARY_DIR}/proto/onnx_prepack.pb.h")
  target_compile_definitions(${name}_tests PRIVATE
      OP_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
      OP_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      OP_CLI_PATH="$<TARGET_FILE:onnx-prepack>"
      OP_PEERS_DIR="${PROJECT_SOURCE_DIR}/tools/peers/node_modules")
  gtest_discover_tests(${name}_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${T_LABEL})
endfunction()
