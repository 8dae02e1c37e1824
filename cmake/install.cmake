# The installed package: the libraries, the exported targets worksize::scheduler and
# worksize::runtime with lib/cmake/worksize/worksizeConfig.cmake for find_package(worksize), and
# lib/pkgconfig/worksize.pc. The public headers are installed by worksize_public_headers() in
# scheduler/ and runtime/, bin/worksize by apps/. Tests and examples are not installed.
include(CMakePackageConfigHelpers)

set(WORKSIZE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/worksize)

# Shared builds: libworksize_*.so.0.1.0 with the soname .so.0.1 (0.x: a minor version may break
# the ABI).
set_target_properties(worksize_scheduler worksize_runtime PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  INSTALL_RPATH "$<$<BOOL:${WORKSIZE_BUILD_SHARED}>:$ORIGIN>")

install(TARGETS worksize_scheduler worksize_runtime EXPORT worksizeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(EXPORT worksizeTargets NAMESPACE worksize:: DESTINATION ${WORKSIZE_CMAKE_DIR}
  COMPONENT development)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/worksizeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/worksizeConfig.cmake INSTALL_DESTINATION ${WORKSIZE_CMAKE_DIR})
# 0.x: any 0.y >= the requested one is accepted; 1.0 will not satisfy a request for 0.x.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/worksizeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/worksizeConfig.cmake ${PROJECT_BINARY_DIR}/worksizeConfigVersion.cmake
  DESTINATION ${WORKSIZE_CMAKE_DIR} COMPONENT development)

# pkg-config. The prefix is found from the .pc file's own place (${pcfiledir}), so that the
# package stays usable when installed with `cmake --install --prefix DIR` or moved.
set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${pc_dir}")
  set(WORKSIZE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH rel "/p/${pc_dir}" "/p")
  string(REGEX REPLACE "/$" "" rel "${rel}")
  set(WORKSIZE_PC_PREFIX "\${pcfiledir}/${rel}")
endif()
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(WORKSIZE_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(WORKSIZE_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
# What linking worksize_runtime needs besides the Requires (nlohmann_json and OpenCL, whose
# headers the public headers include): MPI's C++ libraries and threads.
set(deps "")
foreach(lib IN LISTS MPI_CXX_LIBRARIES)
  if(lib MATCHES "^(.*)/lib([^/]+)\\.(so|a)(\\.[0-9.]+)?$")
    if(NOT CMAKE_MATCH_1 IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
      string(APPEND deps " -L${CMAKE_MATCH_1}")
    endif()
    string(APPEND deps " -l${CMAKE_MATCH_2}")
  else()
    string(APPEND deps " ${lib}")
  endif()
endforeach()
if(MPI_CXX_LINK_FLAGS)
  string(APPEND deps " ${MPI_CXX_LINK_FLAGS}")
endif()
if(WORKSIZE_HAVE_CLBLAST)
  string(APPEND deps " -lclblast")
endif()
if(CMAKE_THREAD_LIBS_INIT)
  string(APPEND deps " ${CMAKE_THREAD_LIBS_INIT}")
endif()
string(STRIP "${deps}" deps)
# A static library carries none of its dependencies, so every link needs them: Libs. A shared
# one does, so only a static link (`pkg-config --static`) needs them: Libs.private.
# Likewise spdlog (the log's writer, no public header includes it): Requires or Requires.private.
if(WORKSIZE_BUILD_SHARED)
  set(WORKSIZE_PC_LIBS_DEPS "")
  set(WORKSIZE_PC_LIBS_PRIVATE "${deps}")
  set(WORKSIZE_PC_REQUIRES_DEPS "")
  set(WORKSIZE_PC_REQUIRES_PRIVATE "spdlog >= 1.10")
else()
  set(WORKSIZE_PC_LIBS_DEPS " ${deps}")
  set(WORKSIZE_PC_LIBS_PRIVATE "")
  set(WORKSIZE_PC_REQUIRES_DEPS ", spdlog >= 1.10")
  set(WORKSIZE_PC_REQUIRES_PRIVATE "")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/worksize.pc.in ${PROJECT_BINARY_DIR}/worksize.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/worksize.pc DESTINATION ${pc_dir} COMPONENT development)

# `cpack -G DEB` in the build directory: one package worksize_<version>_<arch>.deb with all of the
# above under /usr. The headers need the -dev packages of scripts/setup.sh; dpkg-shlibdeps adds
# the shared libraries that bin/worksize (and shared worksize libraries) link.
if(PROJECT_IS_TOP_LEVEL)
  set(CPACK_PACKAGE_NAME worksize)
  set(CPACK_PACKAGE_VENDOR "worksize")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Work-size planning for heterogeneous OpenCL devices over MPI")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_PACKAGE_MAINTAINER "worksize developers")
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION devel)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "ocl-icd-opencl-dev, opencl-headers, opencl-clhpp-headers, libmpich-dev, nlohmann-json3-dev, libspdlog-dev")
  include(CPack)
endif()
