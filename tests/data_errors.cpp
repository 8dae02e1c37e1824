// A data job that is wrong in one way per case, run through cluster_main() and run(), so that
// tests/mpi/data_jobs.sh can check every mistake ends the job on every rank with one line on
// stderr naming it, a non-zero exit (2 for bad input) and no hang.
//
//   mpiexec -n 3 worksize_test_data_errors CASE [--select SPEC]
//
// Cases:
//   ok          the correct job (a 1-D copy with a halo): exit 0, "data_errors: ok"
//   overlap     two out() of the same buffer in one kernel            (validate, rank 0)
//   halo-write  halo(a) and out(a) in one kernel                       (validate, rank 0)
//   past-end    rank 0's host vector shorter than units x pitch        (run, rank 0)
//   deep-halo   12 units over 3 slices, halo 6: deeper than a slice    (check_slices, rank 0;
//               needs --select all so that every rank drives a device)
//   arg-count   the job declares fewer arguments than the kernel takes (each rank's build)
//   no-kernel   a kernel name the source lacks                         (each rank's build)
//   step-int    a step argument (an int) of 2e9 per step over 3 steps  (validate, rank 0)
//   whole-ghost a kernel of whole arrays with ghost zones              (validate, rank 0)
//   expr-name   an expression argument naming an undeclared constant   (validate, rank 0)
//   expr-range  an expression (an int) beyond an int in step 2          (each rank's launch)
//   host-split  a host step that writes a split buffer                 (validate, rank 0)
//   relative    a slice-relative kernel without its work-group size    (validate, rank 0)
//   value-split value_of() of a split buffer                           (validate, rank 0)
//   spin        a kernel that never ends (run with --kernel-timeout: the job ends, exit != 0)
#include <iostream>
#include <string>
#include <vector>

#include "worksize/runtime/app.hpp"

using namespace worksize;

namespace {

// b[y] = a[y-1] + a[y] + a[y+1] (clamped at 0 and n-1); `ao`, `bo`: the global unit in row 0
// of a and b on this device; `end`: one past the slice's last item; `n`: the units in all.
// (Not named `step`: that is an OpenCL C built-in, and PoCL renames such a kernel `_cl_step`.)
const char* kSource = R"CL(
__kernel void smooth(__global const float* a, const int ao, __global float* b, const int bo, const int end,
                   const int n) {
    const int y = get_global_id(0);
    if (y >= end) return;
    const int lo = y > 0 ? y - 1 : y, hi = y + 1 < n ? y + 1 : y;
    b[y - bo] = a[lo - ao] + a[y - ao] + a[hi - ao];
}
// Never ends (the spin case, --kernel-timeout): each item waits for a value nothing writes.
__kernel void spin(__global const float* a, const int ao, __global float* b, const int bo, const int end,
                   const int n) {
    const int y = get_global_id(0);
    if (y >= end) return;
    volatile __global float* p = b + (y - bo);
    while (*p == 0.0f) {
    }
    b[y - bo] = a[y - ao] + 0.0f * n;
}
__kernel void copy(__global const float* a, const int ao, __global float* b, const int bo, const int end,
                   const int n) {
    const int y = get_global_id(0);
    if (y >= end) return;
    b[y - bo] = a[y - ao] + 0.0f * n;
}
)CL";

const std::string kCases = "ok, overlap, halo-write, past-end, deep-halo, arg-count, no-kernel, step-int, whole-ghost, expr-name, expr-range, host-split, relative, value-split, spin";

int run_case(App& app) {
    if (app.args.size() != 1) throw InvalidArgument("usage: worksize_test_data_errors CASE (" + kCases + ")");
    const std::string c = app.args[0];
    const std::uint64_t units = c == "deep-halo" ? 12 : 1000;
    std::vector<float> a(c == "past-end" ? units - 1 : units), b(units, 0.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 17);

    const ArgDecl N = arg::value<int>(int(units));
    DataJob job("errors-" + c, kSource, units);
    const auto ba = job.split("a", 1, a), bb = job.split("b", 1, b);
    if (c == "ok" || c == "past-end") {
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N});
    } else if (c == "overlap") {
        job.kernel("copy", {arg::out(bb), arg::origin(bb), arg::out(bb), arg::origin(bb), arg::end(), N});
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N});
    } else if (c == "halo-write") {
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(ba), arg::origin(ba), arg::end(), N});
        job.kernel("copy", {arg::in(ba), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N});
    } else if (c == "deep-halo") {
        job.kernel("smooth", {arg::halo(ba, 6), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N});
    } else if (c == "arg-count") {
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end()});
    } else if (c == "no-kernel") {
        job.kernel("stencil", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N});
    } else if (c == "step-int") {
        job.kernel("copy", {arg::in(ba), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::step(2000000000), N});
    } else if (c == "expr-name") {
        job.kernel("copy", {arg::in(ba), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::expr("end + n"), N});
    } else if (c == "expr-range") {
        job.kernel("copy", {arg::in(ba), arg::origin(ba), arg::out(bb), arg::origin(bb),
                            arg::expr("end + step * big", {{"big", 1500000000}}), N});
    } else if (c == "host-split") {
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N});
        job.host_step(1, {ba}, [](std::uint64_t) {});
    } else if (c == "relative") {
        job.kernel("copy", {arg::in(ba), arg::value<int>(0), arg::out(bb), arg::value<int>(0), arg::value<int>(1000), N})
            .slice_relative();
    } else if (c == "spin") {
        job.kernel("spin", {arg::in(ba), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N});
    } else if (c == "value-split") {
        job.kernel("copy", {arg::in(ba), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::value_of(ba), N});
    } else if (c == "whole-ghost") {
        job.kernel("smooth", {arg::halo(ba, 1), arg::origin(ba), arg::out(bb), arg::origin(bb), arg::end(), N})
            .whole_arrays();
        job.swap(ba, bb).exchange_every(2);
    } else {
        throw InvalidArgument("unknown case '" + c + "' (" + kCases + ")");
    }
    job.steps(3).gather(bb);

    const DataRunResult r = run(app.cluster, job, app.options);
    // Only the correct job gets here: b is one step of the stencil over a (the steps rewrite it).
    for (std::size_t y = 0; y < units; ++y) {
        const std::size_t lo = y > 0 ? y - 1 : y, hi = y + 1 < units ? y + 1 : y;
        if (b[y] != a[lo] + a[y] + a[hi]) {
            std::cerr << "data_errors: error: b[" << y << "] = " << b[y] << ", expected " << a[lo] + a[y] + a[hi] << '\n';
            return 3;
        }
    }
    std::cout << "data_errors: ok, " << r.ranks.size() << " rank(s) ran slices\n";
    return c == "ok" ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) { return cluster_main(argc, argv, "data_errors", run_case); }
