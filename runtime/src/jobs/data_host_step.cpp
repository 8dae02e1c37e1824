// Host steps of a data job: data_host_step.hpp.
#include "jobs/data_host_step.hpp"

#include <cstring>

namespace worksize::data_exec {

namespace {

std::vector<int> host_written_buffers(const DataJobSpec& spec) {
    std::vector<int> v;
    for (std::size_t b = 0; b < spec.buffers.size(); ++b)
        if (spec.buffers[b].host_written) v.push_back(int(b));
    return v;
}

}  // namespace

void host_step_master(DataJob& job, Execution& x, Comm& comm, Watch& watch, const std::vector<int>& workers,
                      int sender, std::uint64_t done) {
    const DataJobSpec& spec = job.spec();
    for (int b : shared_outputs(spec)) {
        const Bytes* result = x.last_result(b);
        if (x.participates() && result && result->size() == job.host(b).size()) {
            std::memcpy(job.host(b).data(), result->data(), result->size());  // no read from a device
        } else if (x.participates()) {
            x.download(x.mine_mutable().front(), b, job.host(b));
        } else if (sender >= 0) {
            watch.await(sender, wire::kData);
            comm.recv_bytes_exact(job.host(b), sender, wire::kData);
        }
    }
    std::uint64_t status = x.failed() ? kStatusFailed : kStatusOk;
    if (status == kStatusOk && job.on_host_step()) {
        try {
            job.on_host_step()(done);
        } catch (const std::exception& e) {
            x.fail(Error(std::string("the host step after step ") + std::to_string(done) + ": " + e.what()));
            status = kStatusFailed;
        }
    }
    if (done >= spec.steps) return;  // nothing reads them after the last step
    for (int b : host_written_buffers(spec)) {
        const std::span<const std::byte> contents = job.host(b);
        std::span<const std::byte> parts[2] = {std::as_bytes(std::span(&status, 1)), contents};
        for (int r : workers) comm.send_parts(parts, r, wire::kData);
        if (status == kStatusOk)  // (rank 0's memory of b is kept until the next host step)
            for (auto& s : x.mine_mutable()) x.upload(s, b, 0, contents, false);
    }
}

void host_step_worker(Execution& x, const DataJobSpec& spec, Comm& comm, bool sends_shared, Bytes& staging,
                      std::uint64_t done) {
    if (sends_shared)
        for (int b : shared_outputs(spec)) {
            staging.resize(spec.buffers[std::size_t(b)].count * elem_size(spec.buffers[std::size_t(b)].type));
            if (const Bytes* result = x.last_result(b); result && result->size() == staging.size())
                std::memcpy(staging.data(), result->data(), result->size());
            else
                x.download(x.mine_mutable().front(), b, staging);
            comm.send_bytes(staging, 0, wire::kData);
        }
    if (done >= spec.steps) return;
    for (int b : host_written_buffers(spec)) {
        comm.recv_bytes_into(staging, 0, wire::kData);
        std::uint64_t status = kStatusFailed;
        if (staging.size() >= 8) std::memcpy(&status, staging.data(), 8);
        if (status != kStatusOk) {
            x.peer_failed(0);
            continue;
        }
        const std::span<const std::byte> contents(staging.data() + 8, staging.size() - 8);
        for (auto& s : x.mine_mutable()) x.upload(s, b, 0, contents);
    }
}

}  // namespace worksize::data_exec
