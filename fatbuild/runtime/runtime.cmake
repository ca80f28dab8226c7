# libfatbuild_runtime: static, PIC, hidden visibility; linked into every extension fatbuild builds.
# Never sanitized: extensions are linked by plain cc/c++ without the sanitizer runtimes.
# select.c (the selection model) is compiled in too, to explain a missing image.
add_library(fatbuild_runtime STATIC ${CMAKE_CURRENT_SOURCE_DIR}/runtime/fbrt.c ${CMAKE_CURRENT_SOURCE_DIR}/fatbin/select.c)
set_target_properties(fatbuild_runtime PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden
                      OUTPUT_NAME fatbuild_runtime)
target_include_directories(fatbuild_runtime PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
target_include_directories(fatbuild_runtime PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/archprobe)
target_compile_options(fatbuild_runtime PRIVATE ${FB_WARNINGS})
target_compile_definitions(fatbuild_runtime PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
target_link_libraries(fatbuild_runtime INTERFACE ${CMAKE_DL_LIBS} Threads::Threads)
# The CLI finds the runtime and its header here unless told otherwise (FATBUILD_RUNTIME,
# FATBUILD_INCLUDE, or the install layout ../lib and ../include beside the program).
# A package (the wheel of pyproject.toml) builds with FB_BUILD_TREE_PATHS off: its programs then
# carry no path of the build machine, and a runtime missing from the install is reported there.
add_dependencies(fatbuild fatbuild_runtime)
install(TARGETS fatbuild_runtime ARCHIVE DESTINATION lib)
install(FILES ${PROJECT_SOURCE_DIR}/include/fatbuild_runtime.h DESTINATION include)
if(FB_BUILD_TREE_PATHS)
  foreach(tgt IN ITEMS fatbuild fatbuild_static fatbuild_shared)
    target_compile_definitions(${tgt} PRIVATE
      FB_RUNTIME_BUILD_PATH="$<TARGET_FILE:fatbuild_runtime>"
      FB_INCLUDE_BUILD_DIR="${PROJECT_SOURCE_DIR}/include")
  endforeach()
endif()
