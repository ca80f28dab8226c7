# install.cmake: install rules and the CMake package / pkg-config file of archprobe.
#   cmake --install BUILD --prefix P   gives
#   P/bin/archprobe, P/lib/libarchprobe.{so*,a}, P/include/archprobe.h,
#   P/lib/pkgconfig/archprobe.pc, P/lib/cmake/archprobe/ (find_package(archprobe CONFIG)).
# Everything installed is relocatable: the package and .pc files find the prefix from their own place.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(AP_PKG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/archprobe)
set(AP_PKG_SRC ${CMAKE_CURRENT_LIST_DIR}/cmake)

# Exported names: archprobe::archprobe (shared), archprobe::archprobe_static, archprobe::cli (the tool).
set_target_properties(archprobe_shared PROPERTIES EXPORT_NAME archprobe)
set_target_properties(archprobe_static PROPERTIES EXPORT_NAME archprobe_static)
set_target_properties(archprobe PROPERTIES EXPORT_NAME cli)

install(TARGETS archprobe archprobe_shared archprobe_static
        EXPORT archprobeTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(FILES ${PROJECT_SOURCE_DIR}/include/archprobe.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development)
install(EXPORT archprobeTargets NAMESPACE archprobe:: DESTINATION ${AP_PKG_DIR} COMPONENT Development)

configure_package_config_file(${AP_PKG_SRC}/archprobeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pkg/archprobeConfig.cmake
                              INSTALL_DESTINATION ${AP_PKG_DIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pkg/archprobeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pkg/archprobeConfig.cmake
              ${PROJECT_BINARY_DIR}/pkg/archprobeConfigVersion.cmake
              ${AP_PKG_SRC}/archprobeFunctions.cmake
        DESTINATION ${AP_PKG_DIR} COMPONENT Development)

# pkg-config: prefix relative to the .pc file (${pcfiledir}), so --prefix at install time works.
function(fb_configure_pc in out)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
  else()
    file(RELATIVE_PATH rel "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
    string(REGEX REPLACE "/$" "" rel "${rel}")
    set(PC_PREFIX "\${pcfiledir}/${rel}")
    set(PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  else()
    set(PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}")
    set(PC_BINDIR "${CMAKE_INSTALL_BINDIR}")
  else()
    set(PC_BINDIR "\${prefix}/${CMAKE_INSTALL_BINDIR}")
  endif()
  set(PC_VERSION ${PROJECT_VERSION})
  set(PC_DL_LIBS "")
  foreach(l IN LISTS CMAKE_DL_LIBS)
    string(APPEND PC_DL_LIBS " -l${l}")
  endforeach()
  configure_file(${in} ${out} @ONLY)
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)
endfunction()
fb_configure_pc(${AP_PKG_SRC}/archprobe.pc.in ${PROJECT_BINARY_DIR}/pkg/archprobe.pc)
