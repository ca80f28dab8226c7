# archprobeFunctions.cmake: pick CUDA architectures at configure time, before enable_language(CUDA).
#
#   archprobe_cuda_architectures(<var> [ARCH_LIST <list>] [FALLBACK <list>] [STRICT])
#
# Sets <var> to a list in CMake CUDA_ARCHITECTURES syntax ("75-real;80"), ready for
# set(CMAKE_CUDA_ARCHITECTURES ${<var>}) before enable_language(CUDA) or project(... CUDA).
# The list comes from, in this order:
#   1. ARCH_LIST: any arch-list syntax fatbuild reads (8.0 8.6+PTX, 80-real;86, sm_90a, Ampere, all-major)
#   2. the TORCH_CUDA_ARCH_LIST environment variable, when set and not empty
#   3. the visible GPUs, found by running archprobe (ARCHPROBE_ARCHS in the environment replaces the
#      probe: for docker build and CI)
#   4. when archprobe finds no usable GPU (no driver, stub driver, no device, driver error, timeout):
#      FALLBACK, else the ARCHPROBE_FALLBACK environment variable, else all-major; a notice says why.
#      With STRICT there is no fallback: configuring stops with FATAL_ERROR and archprobe's reason.
# Also sets <var>_SOURCE to ARCH_LIST, TORCH_CUDA_ARCH_LIST, devices, ARCHPROBE_ARCHS or fallback.
#
# The list is checked against the CUDA toolkit of CMAKE_CUDA_COMPILER (when set), else CUDA_HOME, else
# the nvcc on PATH, else /usr/local/cuda. An arch the toolkit lacks, an unparseable item or anything
# that is not valid CUDA_ARCHITECTURES syntax for this CMake is a FATAL_ERROR: the function never
# returns a guessed or garbage list (unlike CMake's own "native", whose probe in CMake 3.28+ can yield
# "No CUDA devices found.-real" on a machine without a GPU). The tools run with execute_process,
# never through a shell. ARCHPROBE_EXECUTABLE and FATBUILD_EXECUTABLE may be set to other binaries.
include_guard(GLOBAL)

# Runs fatbuild to turn an arch-list text into CMake syntax; FATAL_ERROR on any failure.
function(_archprobe_to_cmake out text what)
  set(fb "${FATBUILD_EXECUTABLE}")
  if(NOT fb AND DEFINED _ARCHPROBE_FATBUILD_EXECUTABLE)
    set(fb "${_ARCHPROBE_FATBUILD_EXECUTABLE}")
  endif()
  if(NOT fb OR NOT EXISTS "${fb}")
    message(FATAL_ERROR "archprobe_cuda_architectures: the fatbuild tool was not found (looked for '${fb}'); "
                        "install archprobe and fatbuild together, or set FATBUILD_EXECUTABLE")
  endif()
  # One argument: ';' would split it into several here, and every arch-list separator is equivalent.
  string(REPLACE "\\;" " " text "${text}")
  string(REPLACE ";" " " text "${text}")
  set(cmd "${fb}" flags --arch-list "${text}" --format cmake)
  set(env "")
  if(IS_ABSOLUTE "${CMAKE_CUDA_COMPILER}")
    get_filename_component(bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
    get_filename_component(home "${bin}" DIRECTORY)
    set(cmd "${CMAKE_COMMAND}" -E env "CUDA_HOME=${home}" ${cmd})
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    if(e STREQUAL "")
      set(e "(no message)")
    endif()
    message(FATAL_ERROR "archprobe_cuda_architectures: ${what} '${text}' cannot be used (fatbuild exit ${rc}):\n${e}")
  endif()
  if(NOT e STREQUAL "")
    message(NOTICE "archprobe_cuda_architectures: ${e}")
  endif()
  set(item "[0-9]+[af]?(-real|-virtual)?")
  if(NOT o MATCHES "^${item}(;${item})*$")
    message(FATAL_ERROR "archprobe_cuda_architectures: fatbuild gave '${o}' for ${what} '${text}', "
                        "which is not a CUDA_ARCHITECTURES list; refusing to use it")
  endif()
  if(o MATCHES "[0-9]f" AND CMAKE_VERSION VERSION_LESS 3.31.8)
    message(FATAL_ERROR "archprobe_cuda_architectures: '${o}' has a family-specific ('f') arch, which "
                        "CMAKE_CUDA_ARCHITECTURES accepts only from CMake 3.31.8; use a newer CMake or plain arches")
  endif()
  if(o MATCHES "[0-9]a" AND CMAKE_VERSION VERSION_LESS 3.25)
    message(FATAL_ERROR "archprobe_cuda_architectures: '${o}' has an arch-specific ('a') arch, which "
                        "CMAKE_CUDA_ARCHITECTURES accepts only from CMake 3.25")
  endif()
  set(${out} "${o}" PARENT_SCOPE)
endfunction()

function(archprobe_cuda_architectures var)
  cmake_parse_arguments(PARSE_ARGV 1 arg "STRICT" "" "ARCH_LIST;FALLBACK")
  # PARSE_ARGV keeps a quoted "7.5;8.0" as one item with an escaped ';'.
  string(REPLACE "\\;" ";" arg_ARCH_LIST "${arg_ARCH_LIST}")
  string(REPLACE "\\;" ";" arg_FALLBACK "${arg_FALLBACK}")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "archprobe_cuda_architectures: unknown arguments '${arg_UNPARSED_ARGUMENTS}' "
                        "(usage: archprobe_cuda_architectures(<var> [ARCH_LIST <list>] [FALLBACK <list>] [STRICT]))")
  endif()
  if(NOT "${arg_ARCH_LIST}" STREQUAL "")
    _archprobe_to_cmake(archs "${arg_ARCH_LIST}" "ARCH_LIST")
    set(source ARCH_LIST)
  elseif(NOT "$ENV{TORCH_CUDA_ARCH_LIST}" STREQUAL "")
    _archprobe_to_cmake(archs "$ENV{TORCH_CUDA_ARCH_LIST}" "TORCH_CUDA_ARCH_LIST")
    set(source TORCH_CUDA_ARCH_LIST)
  else()
    if(NOT ARCHPROBE_EXECUTABLE OR NOT EXISTS "${ARCHPROBE_EXECUTABLE}")
      message(FATAL_ERROR "archprobe_cuda_architectures: the archprobe tool was not found "
                          "(ARCHPROBE_EXECUTABLE='${ARCHPROBE_EXECUTABLE}')")
    endif()
    # No fallback in archprobe (not even ARCHPROBE_FALLBACK): it is decided here, with STRICT and the notice.
    set(cmd "${CMAKE_COMMAND}" -E env --unset=ARCHPROBE_FALLBACK)
    if(IS_ABSOLUTE "${CMAKE_CUDA_COMPILER}")
      get_filename_component(bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
      get_filename_component(home "${bin}" DIRECTORY)
      list(APPEND cmd "CUDA_HOME=${home}")
    endif()
    list(APPEND cmd "${ARCHPROBE_EXECUTABLE}" --format torch)
    if(arg_STRICT)
      list(APPEND cmd --strict)
    endif()
    execute_process(COMMAND ${cmd}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
    string(REGEX REPLACE "^archprobe: " "" e "${e}")
    string(REGEX REPLACE "\narchprobe: " "\n" e "${e}")
    if(rc EQUAL 0 AND NOT o STREQUAL "")
      # The devices as archprobe answers for them (8.6 9.0+PTX: SASS each, PTX for the newest).
      _archprobe_to_cmake(archs "${o}" "the visible GPUs (archprobe)")
      if(NOT "$ENV{ARCHPROBE_ARCHS}" STREQUAL "")
        set(source ARCHPROBE_ARCHS)
      else()
        set(source devices)
      endif()
    elseif(rc MATCHES "^[134567]$")
      # archprobe's hint is for its command line ("pass --fallback LIST ..."); here FALLBACK says it.
      string(REGEX REPLACE "; pass --fallback [^\n]*" "" why "${e}")
      if(why STREQUAL "")
        set(why "archprobe found no usable GPU")
      endif()
      if(arg_STRICT)
        message(FATAL_ERROR "archprobe_cuda_architectures(STRICT): no GPU to build for: ${why} "
                            "(archprobe exit ${rc}). Pass ARCH_LIST, set TORCH_CUDA_ARCH_LIST or "
                            "ARCHPROBE_ARCHS, or drop STRICT to build for a fallback list.")
      endif()
      if(NOT "${arg_FALLBACK}" STREQUAL "")
        set(fallback "${arg_FALLBACK}")
        set(from "FALLBACK")
      elseif(NOT "$ENV{ARCHPROBE_FALLBACK}" STREQUAL "")
        set(fallback "$ENV{ARCHPROBE_FALLBACK}")
        set(from "ARCHPROBE_FALLBACK")
      else()
        set(fallback all-major)
        set(from "the default")
      endif()
      _archprobe_to_cmake(archs "${fallback}" "the fallback list")
      message(NOTICE "archprobe_cuda_architectures: ${why}; using the fallback list '${fallback}' "
                     "(${from}) = ${archs}. Set ARCH_LIST or TORCH_CUDA_ARCH_LIST to choose, or STRICT to fail instead.")
      set(source fallback)
    else()
      message(FATAL_ERROR "archprobe_cuda_architectures: '${ARCHPROBE_EXECUTABLE} --format torch' failed "
                          "(exit ${rc}): ${e}")
    endif()
  endif()
  message(STATUS "archprobe_cuda_architectures: ${var} = ${archs} (from ${source})")
  set(${var} "${archs}" PARENT_SCOPE)
  set(${var}_SOURCE "${source}" PARENT_SCOPE)
endfunction()
