# helptexts.cmake: writes the man pages and plain-text help of both tools from their own --help.
#   cmake -DARCHPROBE=exe -DFATBUILD=exe -DOUT=dir [-DVERSION=x.y.z] -P helptexts.cmake
# Produces OUT/archprobe.1, OUT/fatbuild.1, OUT/archprobe.txt, OUT/fatbuild.txt. The text is exactly
# what the tools print: fatbuild.txt is 'fatbuild --help' followed by 'fatbuild CMD --help' for each
# command that 'fatbuild --help' lists. Any --help that exits non-zero or prints nothing is an error.
cmake_minimum_required(VERSION 3.20)
foreach(v ARCHPROBE FATBUILD OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "helptexts.cmake: -D${v}= is required")
  endif()
endforeach()
if(NOT DEFINED VERSION)
  set(VERSION "")
endif()

function(help_of out)
  execute_process(COMMAND ${ARGN} --help RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  string(REPLACE ";" " " cmd "${ARGN}")
  if(NOT rc EQUAL 0 OR text STREQUAL "")
    message(FATAL_ERROR "helptexts.cmake: '${cmd} --help' failed (exit ${rc}): ${err}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# roff: backslashes escaped, lines that start with . or ' protected; kept verbatim (.nf).
function(to_roff out text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  if(NOT text MATCHES "\n$")
    string(APPEND text "\n")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(write_page name summary body sections)
  string(TOUPPER ${name} upper)
  string(TIMESTAMP date "%Y-%m-%d" UTC)
  to_roff(rbody "${body}")
  set(page ".TH ${upper} 1 \"${date}\" \"${name} ${VERSION}\" \"User Commands\"\n.SH NAME\n${name} \\- ${summary}\n.SH SYNOPSIS AND OPTIONS\n.nf\n${rbody}.fi\n${sections}")
  string(APPEND page ".SH SEE ALSO\narchprobe(1), fatbuild(1), nvcc(1)\n")
  file(WRITE ${OUT}/${name}.1 "${page}")
endfunction()

file(MAKE_DIRECTORY ${OUT})

help_of(ap_help ${ARCHPROBE})
file(WRITE ${OUT}/archprobe.txt "${ap_help}")
write_page(archprobe "list the visible CUDA GPUs and read GPU arch lists" "${ap_help}" "")

help_of(fb_help ${FATBUILD})
set(txt "${fb_help}")
set(sections "")
# The commands are the indented "  name  summary" lines after "Commands:".
string(REGEX MATCH "Commands:\n(( +[a-z][a-z0-9_-]* [^\n]*\n)+)" m "${fb_help}")
string(REGEX MATCHALL "\n +[a-z][a-z0-9_-]* " cmds "\n${CMAKE_MATCH_1}")
if(cmds STREQUAL "")
  message(FATAL_ERROR "helptexts.cmake: 'fatbuild --help' lists no commands")
endif()
foreach(c IN LISTS cmds)
  string(STRIP "${c}" c)
  help_of(h ${FATBUILD} ${c})
  string(APPEND txt "\n\n==== fatbuild ${c} --help ====\n\n${h}")
  to_roff(rh "${h}")
  string(APPEND sections ".SH COMMAND: ${c}\n.nf\n${rh}.fi\n")
endforeach()
file(WRITE ${OUT}/fatbuild.txt "${txt}")
write_page(fatbuild "build CUDA code for every GPU you ship to, and check that it will load" "${fb_help}" "${sections}")
