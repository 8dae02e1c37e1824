// A job file: a user's OpenCL kernel described in JSON, so that `worksize plan|run|tune|bench|
// calibrate --job FILE` can plan, tune and run it like a sample kernel. It is a data-job
// declaration (data_spec.hpp) of one step, with buffers and arguments named instead of indexed,
// sizes that may follow the problem's, and how rank 0 makes each input.
//
//   {
//     "name": "filter5x5",
//     "description": "5x5 neighbourhood filter",
//     "source": "filter2d.cl",                    // relative to the job file
//     "build_options": "",
//     "dims": 2, "size": [4096, 4096],            // 1-D: "size": 1000000
//     "ops_per_unit": "50*width",                 // optional: a number, or N*width
//     "buffers": [
//       {"name": "in", "type": "float", "pitch": "width", "init": {"random": [0, 1], "seed": 3}},
//       {"name": "weights", "layout": "shared", "count": 25, "init": {"constant": 0.04}},
//       {"name": "out", "pitch": "width", "output": true}
//     ],
//     "kernels": [{"name": "filter", "args": [
//       {"halo": "in", "depth": 2}, {"origin": "in"}, {"all": "weights"}, {"out": "out"},
//       {"origin": "out"}, {"int": "width"}, {"int": "height"}, {"end": true}]}],
//     "verify": {"tolerance": 1e-5}               // optional: against a single-device run
//   }
//
// Arguments: {"in"|"out"|"inout"|"all"|"origin": BUFFER}, {"halo": BUFFER, "depth": N},
// {"reduce": BUFFER, "op": "sum"|"min"|"max", "per": "item"|"group"}, {"float"|"double"|"int"|"uint": VALUE}
// where VALUE is a number or "width", "height" or "units" (the problem's), {"begin": true},
// {"end": true}. A kernel may add "units_per_item" and "required_local": [x, y].
// Inits: {"random": [lo, hi], "seed": S}, {"constant": V}, {"file": PATH} (raw little-endian
// elements or a .npy of the buffer's type, relative to the job file), or none (zeros).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worksize/scheduler/data_spec.hpp"

namespace worksize {

struct BufferInit {
    enum class Kind { zero, random, constant, file } kind = Kind::zero;
    double lo = 0.0, hi = 1.0;   ///< random: uniform in [lo, hi) (integers: [lo, hi])
    std::uint64_t seed = 1;      ///< random: added to the run's --seed
    double value = 0.0;          ///< constant
    std::string path;            ///< file: absolute
};

/// A job file, read and checked. `spec` is for the file's own size; spec_for() gives it for
/// another (--size).
struct JobFile {
    std::string path;            ///< the file as given
    DataJobSpec spec;            ///< steps = 1
    std::vector<BufferInit> init;  ///< per buffer of spec
    std::string description;
    double tolerance = -1.0;     ///< < 0: no verification
    nlohmann::json raw;          ///< the file's JSON (sizes are re-resolved from it)

    /// The declaration at problem size `size` ({items} or {width, rows}): pitches, scalar
    /// values and ops that follow the problem's size are resolved again.
    /// @throws InvalidArgument naming the field.
    DataJobSpec spec_for(GlobalSize size) const;
    GlobalSize size() const;     ///< the file's own size
};

/// Read a job file and its kernel source. @throws InvalidArgument "job file 'f.json': <field>: why"
/// for anything missing, malformed or inconsistent (the declaration is validated too).
JobFile read_job_file(const std::string& path);

/// The same, from JSON already read; `dir` is where relative paths start.
JobFile job_file_from_json(const nlohmann::json& j, const std::string& path, const std::string& dir);

/// The same, from the file's text: `path` names it in messages. @throws InvalidArgument as
/// read_job_file (text that is not JSON too).
JobFile parse_job_file(const std::string& text, const std::string& path, const std::string& dir);

}  // namespace worksize
