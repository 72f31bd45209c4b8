# The file-name suffix alone decides a source's ISA flags, so `grep -r _avx512 src`
# lists every AVX-512 line we own and no other file can be built with them.
#
# It also decides which architecture compiles a source at all (docs/decisions.md,
# "Builds per architecture"): x86-64 builds the _avx2/_avx512/_avx512vnni/_avxvnni
# units; aarch64 builds the _neon/_dotprod/_i8mm/_fp16/_bf16/_sve units; any other
# 64-bit target builds neither, and every selector falls back to the _ref kernels.
# Selectors compile their x86 (or aarch64) branch under `#if defined(__x86_64__)`
# (`__aarch64__`), which agrees with OP_ARCH below for any one toolchain.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(OP_ARCH x86_64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(OP_ARCH aarch64)
else()
  set(OP_ARCH other)
endif()
message(STATUS "onnx-prepack: kernels for ${OP_ARCH} (CMAKE_SYSTEM_PROCESSOR ${CMAKE_SYSTEM_PROCESSOR})")

set(OP_FLAGS_AVX2 "-mavx2 -mfma -mf16c")
set(OP_FLAGS_AVX512 "-mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma -mf16c -mavx2")
set(OP_FLAGS_AVX512VNNI "${OP_FLAGS_AVX512} -mavx512vnni")
set(OP_FLAGS_AVXVNNI "${OP_FLAGS_AVX2} -mavxvnni")

# aarch64: NEON (Advanced SIMD) is the baseline of -march=armv8-a, so _neon units
# need no flag; each extension gets the Armv8.2-A base plus its own feature.
set(OP_FLAGS_DOTPROD "-march=armv8.2-a+dotprod")
set(OP_FLAGS_I8MM "-march=armv8.2-a+dotprod+i8mm")
set(OP_FLAGS_FP16 "-march=armv8.2-a+fp16")
set(OP_FLAGS_BF16 "-march=armv8.2-a+bf16")
set(OP_FLAGS_SVE "-march=armv8.2-a+sve")

set(OP_X86_SUFFIX_REGEX "_(avx2|avx512|avx512vnni|avxvnni)$")
set(OP_ARM_SUFFIX_REGEX "_(neon|dotprod|i8mm|fp16|bf16|sve)$")

# Drops from the list named `var` the sources of the other architectures (by
# the suffix of the file's stem; headers are filtered too).
function(op_filter_arch_sources var)
  set(kept)
  foreach(src IN LISTS ${var})
    get_filename_component(stem "${src}" NAME_WE)
    if(stem MATCHES "${OP_X86_SUFFIX_REGEX}" AND NOT OP_ARCH STREQUAL "x86_64")
      continue()
    endif()
    if(stem MATCHES "${OP_ARM_SUFFIX_REGEX}" AND NOT OP_ARCH STREQUAL "aarch64")
      continue()
    endif()
    list(APPEND kept "${src}")
  endforeach()
  set(${var} "${kept}" PARENT_SCOPE)
endfunction()

function(op_apply_isa_flags)
  foreach(src IN LISTS ARGN)
    get_filename_component(stem "${src}" NAME_WE)
    if(stem MATCHES "_avx512vnni$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVX512VNNI}")
    elseif(stem MATCHES "_avxvnni$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVXVNNI}")
    elseif(stem MATCHES "_avx512$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVX512}")
    elseif(stem MATCHES "_avx2$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVX2}")
    elseif(stem MATCHES "_dotprod$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_DOTPROD}")
    elseif(stem MATCHES "_i8mm$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_I8MM}")
    elseif(stem MATCHES "_fp16$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_FP16}")
    elseif(stem MATCHES "_bf16$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_BF16}")
    elseif(stem MATCHES "_sve$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_SVE}")
    endif()
  endforeach()
endfunction()
