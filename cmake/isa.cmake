# The file-name suffix alone decides a source's ISA flags, so `grep -r _avx512 src`
# lists every AVX-512 line we own and no other file can be built with them.
set(OP_FLAGS_AVX2 "-mavx2 -mfma -mf16c")
set(OP_FLAGS_AVX512 "-mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma -mf16c -mavx2")
set(OP_FLAGS_AVX512VNNI "${OP_FLAGS_AVX512} -mavx512vnni")
set(OP_FLAGS_AVXVNNI "${OP_FLAGS_AVX2} -mavxvnni")

# A precompiled header (ONNX_PREPACK_PCH) is built without these flags: clang refuses a
# PCH of other target features, so per-ISA sources parse their headers themselves.
function(op_apply_isa_flags)
  foreach(src IN LISTS ARGN)
    get_filename_component(stem "${src}" NAME_WE)
    if(stem MATCHES "_avx512vnni$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVX512VNNI}"
                                                 SKIP_PRECOMPILE_HEADERS ON)
    elseif(stem MATCHES "_avxvnni$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVXVNNI}"
                                                 SKIP_PRECOMPILE_HEADERS ON)
    elseif(stem MATCHES "_avx512$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVX512}"
                                                 SKIP_PRECOMPILE_HEADERS ON)
    elseif(stem MATCHES "_avx2$")
      set_source_files_properties("${src}" PROPERTIES COMPILE_FLAGS "${OP_FLAGS_AVX2}"
                                                 SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
