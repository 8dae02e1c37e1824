// A job of several ranks in one process, for the opencl tests: rank 0 and its workers are
// threads over the in-process communicator (local_comms), each with its own Cluster over the
// local OpenCL devices, so that the cluster's protocols run without mpiexec.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "worksize/runtime/cluster.hpp"
#include "worksize/runtime/comm.hpp"
#include "worksize/runtime/devices.hpp"

namespace worksize::test {

/// What each rank of a local job ended with.
struct Outcome {
    std::optional<int> code;        ///< serve()'s exit code (workers) or the master's
    std::string error;              ///< what() of the exception that ended it
    ErrorReason reason = ErrorReason::generic;
    bool aborted = false;           ///< it was a JobAborted
};

/// Runs `n` ranks over local_comms: rank 0 builds its Cluster and calls `master` (its return
/// value is the exit code sent to the workers, 1 if it throws); the others serve.
inline std::vector<Outcome> run_local(int n, const DeviceSelection& sel, const std::function<int(Cluster&)>& master,
                               const std::function<void(Cluster&)>& setup = {}) {
    // The OpenCL ICD loader's first platform query is not safe from several threads at once:
    // discover once here, before the ranks' threads discover again.
    static const bool warm = !all_local_devices().empty();
    EXPECT_TRUE(warm);
    auto comms = local_comms(n, 60.0);
    std::vector<Outcome> out(static_cast<std::size_t>(n));
    auto body = [&](int r) {
        auto& o = out[static_cast<std::size_t>(r)];
        try {
            Cluster c(*comms[static_cast<std::size_t>(r)], sel);
            if (setup) setup(c);
            if (r != 0) {
                o.code = c.serve();
                return;
            }
            int code = 1;
            try {
                code = master(c);
            } catch (...) {
                c.finish(1);
                throw;
            }
            c.finish(code);
            o.code = code;
        } catch (const JobAborted& e) {
            o.aborted = true;
            o.error = e.what();
            o.reason = e.reason();
        } catch (const std::exception& e) {
            o.error = e.what();
            o.reason = reason_of(e);
        }
    };
    std::vector<std::thread> threads;
    for (int r = 1; r < n; ++r) threads.emplace_back(body, r);
    body(0);
    for (auto& t : threads) t.join();
    return out;
}

}  // namespace worksize::test
