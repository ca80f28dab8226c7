# fatbuildFunctions.cmake: gencode flags and extension builds from an installed fatbuild.
#
#   fatbuild_gencode_flags(<var> [ARCH_LIST <list>] [FALLBACK <list>])
#     Sets <var> to the nvcc flags for the list, as a CMake list
#     (-gencode=arch=compute_80,code=sm_80;...), for projects that pass flags themselves
#     (target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${var}>) or a custom command).
#     No ARCH_LIST: TORCH_CUDA_ARCH_LIST from the environment, else auto (the visible GPUs, else
#     FALLBACK / ARCHPROBE_FALLBACK / all-major with a notice). Any error is a FATAL_ERROR.
#
#   fatbuild_add_extension(<target> SOURCES <src>... [ARCH_LIST <list>] [BACKEND nvrtc|nvcc]
#                          [OUTPUT_NAME <name>] [OPTIONS <fatbuild build option>...])
#     Builds a loadable extension (<name>.so, default lib<target>.so, in the current binary dir)
#     with 'fatbuild build', the same as running it by hand, its build files in <target>.fatbuild/.
#     <target> is a custom target that is part of 'all' and runs 'fatbuild build' each time:
#     that build is incremental itself (sources, included headers, flags, arch list) and leaves
#     the .so untouched when nothing changed. No ARCH_LIST: TORCH_CUDA_ARCH_LIST, else auto (the
#     visible GPUs, else the fallback, with fatbuild's notice). The file's path is in the target
#     property FATBUILD_OUTPUT and in the variable <target>_FILE; <target>::extension links it
#     (with the Ninja generator the link waits for it; with others add_dependencies(<exe> <target>)).
#     Host sources are compiled with the project's C / C++ compilers (CC, CXX for fatbuild).
include_guard(GLOBAL)

function(_fatbuild_exe out)
  if(NOT FATBUILD_EXECUTABLE OR NOT EXISTS "${FATBUILD_EXECUTABLE}")
    message(FATAL_ERROR "fatbuild: the fatbuild tool was not found (FATBUILD_EXECUTABLE='${FATBUILD_EXECUTABLE}')")
  endif()
  set(${out} "${FATBUILD_EXECUTABLE}" PARENT_SCOPE)
endfunction()

# The environment for the tool: CUDA_HOME from the project's CMAKE_CUDA_COMPILER, and (for
# extension builds, with_cc) CC and CXX from its C and C++ compilers, when it has them.
function(_fatbuild_env_prefix out)
  set(vars "")
  if(IS_ABSOLUTE "${CMAKE_CUDA_COMPILER}")
    get_filename_component(bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
    get_filename_component(home "${bin}" DIRECTORY)
    list(APPEND vars "CUDA_HOME=${home}")
  endif()
  if("with_cc" IN_LIST ARGN)
    if(CMAKE_C_COMPILER)
      list(APPEND vars "CC=${CMAKE_C_COMPILER}")
    endif()
    if(CMAKE_CXX_COMPILER)
      list(APPEND vars "CXX=${CMAKE_CXX_COMPILER}")
    endif()
  endif()
  set(p "")
  if(vars)
    set(p "${CMAKE_COMMAND}" -E env ${vars})
  endif()
  set(${out} "${p}" PARENT_SCOPE)
endfunction()

function(fatbuild_gencode_flags var)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "ARCH_LIST;FALLBACK")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fatbuild_gencode_flags: unknown arguments '${arg_UNPARSED_ARGUMENTS}' "
                        "(usage: fatbuild_gencode_flags(<var> [ARCH_LIST <list>] [FALLBACK <list>]))")
  endif()
  _fatbuild_exe(fb)
  _fatbuild_env_prefix(envp)
  if(NOT "${arg_ARCH_LIST}" STREQUAL "")
    set(text "${arg_ARCH_LIST}")
  elseif(NOT "$ENV{TORCH_CUDA_ARCH_LIST}" STREQUAL "")
    set(text "$ENV{TORCH_CUDA_ARCH_LIST}")
  else()
    set(text auto)
  endif()
  string(REPLACE "\\;" " " text "${text}")
  string(REPLACE ";" " " text "${text}")
  set(cmd ${envp} "${fb}" flags --arch-list "${text}" --format nvcc)
  if(NOT "${arg_FALLBACK}" STREQUAL "")
    string(REPLACE "\\;" " " fallback "${arg_FALLBACK}")
    string(REPLACE ";" " " fallback "${fallback}")
    list(APPEND cmd --fallback "${fallback}")
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fatbuild_gencode_flags: arch list '${text}' cannot be used (fatbuild exit ${rc}):\n${e}")
  endif()
  if(NOT e STREQUAL "")
    message(NOTICE "fatbuild_gencode_flags: ${e}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${o}")
  if(flags STREQUAL "")
    message(FATAL_ERROR "fatbuild_gencode_flags: fatbuild printed no flags for '${text}'")
  endif()
  foreach(f IN LISTS flags)
    if(NOT f MATCHES "^-gencode=arch=compute_[0-9]+[af]?,code=")
      message(FATAL_ERROR "fatbuild_gencode_flags: unexpected flag '${f}' from fatbuild for '${text}'; refusing to use it")
    endif()
  endforeach()
  set(${var} "${flags}" PARENT_SCOPE)
endfunction()

function(fatbuild_add_extension target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "BACKEND;OUTPUT_NAME" "SOURCES;ARCH_LIST;OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fatbuild_add_extension(${target}): unknown arguments '${arg_UNPARSED_ARGUMENTS}'")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "fatbuild_add_extension(${target}): SOURCES is required")
  endif()
  if(arg_BACKEND AND NOT arg_BACKEND MATCHES "^(nvrtc|nvcc)$")
    message(FATAL_ERROR "fatbuild_add_extension(${target}): BACKEND must be nvrtc or nvcc, not '${arg_BACKEND}'")
  endif()
  _fatbuild_exe(fb)
  _fatbuild_env_prefix(envp with_cc)
  if(arg_OUTPUT_NAME)
    set(name "${arg_OUTPUT_NAME}")
  else()
    set(name "lib${target}")
  endif()
  if(NOT name MATCHES "\\.so$")
    string(APPEND name ".so")
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  set(srcs "")
  foreach(s IN LISTS arg_SOURCES)
    get_filename_component(s "${s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND srcs "${s}")
  endforeach()
  set(cmd ${envp} "${fb}" build --build-dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.fatbuild")
  if(NOT "${arg_ARCH_LIST}" STREQUAL "")
    string(REPLACE "\\;" " " text "${arg_ARCH_LIST}")
    string(REPLACE ";" " " text "${text}")
    list(APPEND cmd --arch-list "${text}")
  endif()
  if(arg_BACKEND)
    list(APPEND cmd --backend ${arg_BACKEND})
  endif()
  list(APPEND cmd ${arg_OPTIONS} -o "${out}" ${srcs})
  # fatbuild build is incremental itself (its own ninja file tracks sources, included headers,
  # flags and the arch list) and leaves OUT untouched when nothing changed, so the target runs
  # it on every build instead of guessing the dependencies from here.
  add_custom_target(${target} ALL
                    COMMAND ${cmd}
                    BYPRODUCTS "${out}"
                    DEPENDS ${srcs}
                    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
                    COMMENT "fatbuild build ${name}"
                    VERBATIM)
  set_target_properties(${target} PROPERTIES FATBUILD_OUTPUT "${out}")
  # <target>::extension: link it like a library (its kernels' host wrappers), or load it at run time.
  add_library(${target}::extension INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target}::extension PROPERTIES INTERFACE_LINK_LIBRARIES "${out}")
  set(${target}_FILE "${out}" PARENT_SCOPE)
endfunction()
