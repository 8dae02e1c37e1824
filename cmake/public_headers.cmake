# worksize_public_headers(<target> <dir> <file>...): installs the public headers <dir>/<file>
# (relative to the calling CMakeLists.txt; <dir> starts with include/) to the same place under
# CMAKE_INSTALL_INCLUDEDIR. The list is explicit; configuring fails if <dir> holds a header the
# list misses (it would not be installed) or the list names a missing file.
function(worksize_public_headers target dir)
  if(NOT dir MATCHES "^include/(.+)$")
    message(FATAL_ERROR "worksize_public_headers(${target}): '${dir}' does not start with include/")
  endif()
  set(dest ${CMAKE_INSTALL_INCLUDEDIR}/${CMAKE_MATCH_1})
  set(listed "")
  foreach(f IN LISTS ARGN)
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/${f})
      message(FATAL_ERROR "worksize_public_headers(${target}): ${dir}/${f} does not exist")
    endif()
    list(APPEND listed ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/${f})
  endforeach()
  # A check only, not a source list.
  file(GLOB present CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.hpp)
  foreach(f IN LISTS present)
    if(NOT f IN_LIST listed)
      message(FATAL_ERROR "worksize_public_headers(${target}): ${f} is not in the list of public "
                          "headers (${CMAKE_CURRENT_LIST_FILE}); add it there")
    endif()
  endforeach()
  install(FILES ${listed} DESTINATION ${dest} COMPONENT development)
endfunction()
