// Test-only fault injection (docs/testing.md): WORKSIZE_FAULT, read once per process, makes this
// rank fail in one chosen way so that the tests can check that every failure ends the job with
// one clear line and no hang. Without the variable every hook does nothing.
#pragma once

#include <string>

#include "worksize/runtime/kernel_job.hpp"

namespace worksize::fault {

/// "execute": this rank's device executions fail like a launch error; "crash": the rank dies
/// in the middle of a job.
void before_execute(const DeviceInfo& dev);
/// "wrong-local:N": a slice run with local size x == N returns a wrong result (its first two
/// floats become 1e30, a first double about 1e237), so that the verification fails.
void after_execute(const SliceSpec& spec, std::span<std::byte> out);
/// "scale-local:N:F": a slice run with local size x == N (0: NULL) reports its kernel time
/// multiplied by F, so that the tuner's baseline check sees NULL (or a local size) faster or
/// slower than it is.
void scale_times(const SliceSpec& spec, SliceTimes& times);
/// "pack-throw": rank 0's packing of a worker's slice input throws, after the worker was sent
/// its command.
void before_pack();
/// "inventory-version" / "inventory-garbage": this rank's inventory message (`text`, from
/// `msg`) is of another version or malformed.
std::string inventory_text(nlohmann::json msg);
/// "as-gpu": this rank reports its devices as GPUs with a PCI bus id made from their index
/// (0000:01:00.<index>), so that ranks of one host emulate two ranks driving one GPU.
void device_identity(DeviceInfo& dev);

/// The data-job hooks, read at each data job (not once per process, so that an in-process test
/// can set them): "hang-data:<phase>[:<seconds>]": a worker rank of a data job stops answering
/// in <phase> for <seconds> (default 600: until rank 0 ends the job), then throws: "scatter"
/// (before it takes its inputs), "steps" (at the start of its second step, or of its only one),
/// "gather" (before its report and final outputs); "links": a worker of `calibrate --links`,
/// before its first ping-pong. "slow-data:<seconds>": every step of a worker
/// rank waits <seconds> longer on its devices, as a slow kernel would. "slow-link:<seconds>":
/// every halo message a worker rank sends leaves <seconds> late, as over a slow link.
struct DataFault {
    std::string hang;  ///< the phase, or empty
    double hang_s = 600.0;
    double slow_s = 0.0;
    double link_s = 0.0;
};
DataFault data_fault();
/// Sleeps `f.hang_s` without a word, then throws, when `f.hang` is `phase`.
void hang_data(const DataFault& f, const std::string& phase);

}  // namespace worksize::fault
