# One static library per layer under src/, its sources found by glob so that
# adding a file needs no CMake edit. DEPS are the layers below it.
function(op_add_layer name)
  cmake_parse_arguments(L "" "" "DEPS;EXTRA" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS
       "${CMAKE_CURRENT_SOURCE_DIR}/*.cc" "${CMAKE_CURRENT_SOURCE_DIR}/*.h")
  op_filter_arch_sources(srcs)
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
  target_compile_definitions(${name}_tests PRIVATE
      OP_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
      OP_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      OP_CLI_PATH="$<TARGET_FILE:onnx-prepack>"
      OP_PEERS_DIR="${PROJECT_SOURCE_DIR}/tools/peers/node_modules")
  gtest_discover_tests(${name}_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${T_LABEL})
endfunction()
