// MPI's error codes as worksize errors, for the MPI wrappers (mpi.cpp, mpi_environment.cpp).
#pragma once

#include <mpi.h>

#include <string>

#include "worksize/runtime/mpi.hpp"

namespace worksize::mpi {

/// MPI's text for the error code `rc`.
inline std::string mpi_error_text(int rc) {
    char msg[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return std::string(msg, static_cast<std::size_t>(len));
}

/// Throws MpiError naming `call` unless `rc` is MPI_SUCCESS.
inline void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    throw MpiError(std::string(call) + " failed: " + mpi_error_text(rc));
}

}  // namespace worksize::mpi
