# helptexts.cmake: writes the man pages and plain-text help of both tools from their own --help.
#   cmake -DARCHPROBE=exe -DFATBUILD=exe -DOUT=dir [-DVERSION=x.y.z] -P helptexts.cmake
# Produces OUT/archprobe.txt, OUT/fatbuild.txt and, through manpages.sh, the man pages
# OUT/archprobe.1, OUT/fatbuild.1 and OUT/fatbuild-CMD.1 per command. The text is exactly
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

file(MAKE_DIRECTORY ${OUT})

help_of(ap_help ${ARCHPROBE})
file(WRITE ${OUT}/archprobe.txt "${ap_help}")

help_of(fb_help ${FATBUILD})
set(txt "${fb_help}")
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
endforeach()
file(WRITE ${OUT}/fatbuild.txt "${txt}")

# The man pages, one per tool and per fatbuild command, from the same --help (manpages.sh).
execute_process(COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/manpages.sh ${ARCHPROBE} ${FATBUILD} ${OUT} ${VERSION}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "helptexts.cmake: manpages.sh failed (exit ${rc})")
endif()
