# Precompiled headers (WORKSIZE_PCH, on by default): the heavy headers most sources of a target
# include (nlohmann/json, OpenCL's C++ bindings, GoogleTest, Boost.Program_options, the standard
# library's containers) are parsed once per target instead of once per source, which cuts a
# build on a 2-core machine by a third (docs/testing.md, "Times"). They are private to each target:
# nothing installed depends on them, and a build with WORKSIZE_PCH=OFF compiles the same code.
option(WORKSIZE_PCH "Precompile the heavy headers of each target" ON)

set(WORKSIZE_PCH_STD <algorithm> <functional> <map> <memory> <optional> <sstream> <string> <vector>)

# worksize_precompile(TARGET HEADER...): TARGET's sources start from a precompiled header of the
# standard headers above and HEADER... (<system> or "project" names).
function(worksize_precompile target)
  if(WORKSIZE_PCH)
    target_precompile_headers(${target} PRIVATE ${WORKSIZE_PCH_STD} ${ARGN})
  endif()
endfunction()

# Unity builds (WORKSIZE_UNITY, on by default) for the libraries and the CLI: their sources are
# compiled eight to a translation unit, which cut their build from 145 s to 84 s on a 2-core
# machine (docs/testing.md, "Times"). Sources of these targets must therefore not define the same
# name twice in anonymous namespaces; shared helpers go in a header (runtime/src/support/). The
# test and example targets are not unity-built (GoogleTest's parameterized suites in anonymous
# namespaces do not combine).
option(WORKSIZE_UNITY "Compile the libraries' and the CLI's sources in batches" ON)

# worksize_unity(TARGET...): TARGETs are unity-built when WORKSIZE_UNITY is on.
function(worksize_unity)
  if(WORKSIZE_UNITY)
    set_target_properties(${ARGN} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()
