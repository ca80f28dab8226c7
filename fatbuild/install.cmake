# install.cmake: install rules and the CMake package / pkg-config file of fatbuild.
#   cmake --install BUILD --prefix P   gives
#   P/bin/fatbuild, P/lib/libfatbuild.{so*,a}, the runtime library (fatbuild/runtime.cmake's target),
#   P/include/{fatbuild.h,fatbuild/*.h,fatbuild_runtime.h}, P/lib/pkgconfig/fatbuild.pc, P/lib/cmake/fatbuild/
#   (find_package(fatbuild CONFIG), which also finds archprobe), the help texts of both tools
#   (P/share/man/man1/{archprobe,fatbuild,fatbuild-CMD}.1 and P/share/doc/archprobe-fatbuild/*.txt,
#   generated from --help at install time), the manual pages of docs/ (P/share/doc/archprobe-fatbuild/
#   *.md, which the man pages cite) and bash completion (P/share/bash-completion/completions/).
# The rules run deferred, at the end of this directory, so that targets defined by *.cmake files
# included after this one (runtime.cmake) are seen.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The runtime library target, whatever runtime.cmake calls it.
function(fb_runtime_target out)
  set(${out} "" PARENT_SCOPE)
  foreach(t IN ITEMS fatbuild_runtime fbrt fatbuild_runtime_shared)
    if(TARGET ${t})
      set(${out} ${t} PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

function(fb_install_rules)
  set(pkgdir ${CMAKE_INSTALL_LIBDIR}/cmake/fatbuild)
  set(src ${PROJECT_SOURCE_DIR}/fatbuild/cmake)

  set_target_properties(fatbuild_shared PROPERTIES EXPORT_NAME fatbuild INSTALL_RPATH "\$ORIGIN")
  set_target_properties(fatbuild_static PROPERTIES EXPORT_NAME fatbuild_static)
  set_target_properties(fatbuild PROPERTIES EXPORT_NAME cli)
  set(targets fatbuild fatbuild_shared fatbuild_static)
  set(headers ${PROJECT_SOURCE_DIR}/include/fatbuild.h)
  fb_runtime_target(rt)
  set(FB_HAVE_RUNTIME 0)
  if(rt)
    set_target_properties(${rt} PROPERTIES EXPORT_NAME runtime)
    list(APPEND targets ${rt})
    set(FB_HAVE_RUNTIME 1)
  endif()
  if(EXISTS ${PROJECT_SOURCE_DIR}/include/fatbuild_runtime.h)
    list(APPEND headers ${PROJECT_SOURCE_DIR}/include/fatbuild_runtime.h)
  endif()

  install(TARGETS ${targets}
          EXPORT fatbuildTargets
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
  install(TARGETS fatbuild-nvrtc-worker EXPORT fatbuildTargets
          RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/fatbuild)
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development)
  # fatbuild.h includes one header per part of the API
  file(GLOB part_headers ${PROJECT_SOURCE_DIR}/include/fatbuild/*.h)
  install(FILES ${part_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fatbuild COMPONENT Development)
  install(EXPORT fatbuildTargets NAMESPACE fatbuild:: DESTINATION ${pkgdir} COMPONENT Development)

  configure_package_config_file(${src}/fatbuildConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/pkg/fatbuildConfig.cmake
                                INSTALL_DESTINATION ${pkgdir}
                                PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/pkg/fatbuildConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/pkg/fatbuildConfig.cmake
                ${PROJECT_BINARY_DIR}/pkg/fatbuildConfigVersion.cmake
                ${src}/fatbuildFunctions.cmake
          DESTINATION ${pkgdir} COMPONENT Development)
  fb_configure_pc(${src}/fatbuild.pc.in ${PROJECT_BINARY_DIR}/pkg/fatbuild.pc)

  # The docs/ pages and bash completion (one script for both tools, found by either name).
  file(GLOB docs ${PROJECT_SOURCE_DIR}/docs/*.md)
  install(FILES ${docs} DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/archprobe-fatbuild COMPONENT Documentation)
  foreach(tool IN ITEMS fatbuild archprobe)
    install(FILES ${PROJECT_SOURCE_DIR}/fatbuild/completion/fatbuild.bash
            DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions RENAME ${tool})
  endforeach()

  # Help texts: run each installed tool's --help (and every fatbuild subcommand's) at install
  # time and write man pages (fatbuild/cmake/manpages.sh) and plain text. A --help that fails,
  # or one whose layout manpages.sh cannot read, stops the install. Each prefix gets its own
  # scratch folder, so that installs into two prefixes at once (ctest -j) never see each
  # other's half-written pages.
  install(CODE "string(MD5 _fb_key \"\${CMAKE_INSTALL_PREFIX}\")
    set(_fb_help \"${PROJECT_BINARY_DIR}/pkg/help/\${_fb_key}\")
    file(REMOVE_RECURSE \"\${_fb_help}\")
    execute_process(COMMAND \"${CMAKE_COMMAND}\"
      -DARCHPROBE=$<TARGET_FILE:archprobe> -DFATBUILD=$<TARGET_FILE:fatbuild>
      -DOUT=\${_fb_help} -DVERSION=${PROJECT_VERSION}
      -P \"${src}/helptexts.cmake\" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR \"fatbuild: generating the help texts failed\")
    endif()
    file(GLOB _fb_man \"\${_fb_help}/*.1\")
    file(GLOB _fb_txt \"\${_fb_help}/*.txt\")
    file(INSTALL \${_fb_man} DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1\")
    file(INSTALL \${_fb_txt} DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}/doc/archprobe-fatbuild\")"
    COMPONENT Documentation)
endfunction()

cmake_language(DEFER CALL fb_install_rules)
