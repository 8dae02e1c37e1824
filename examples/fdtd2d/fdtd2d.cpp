// FDTD-2D on worksize with PolyBench-ACC's OpenCL kernels as published (fdtd2d.cl, byte-identical;
// ORIGIN.md): three kernels per time step update the fields ey, ex and hz of nx rows by ny
// columns in place, indexing whole arrays by global ids. worksize splits the rows across the
// devices and ranks, holds each array whole on every device (whole_arrays()), keeps each slice's
// rows and one halo row current, and gathers the fields at the end.
//   mpiexec -n 3 worksize_example_fdtd2d [nx] [ny] [tmax]
#include <iostream>

#include "reference.hpp"
#include "worksize/runtime/app.hpp"

using namespace worksize;

int main(int argc, char** argv) {
    return cluster_main(argc, argv, "fdtd2d", [](App& app) {
        const auto nx = app.count(0, 512), ny = app.count(1, 512), tmax = app.count(2, 100);
        const example::FdtdArrays in = example::fdtd_inputs(int(tmax), int(nx), int(ny));
        example::FdtdArrays a = in;

        DataJob job("fdtd2d", read_text_file(example::kernel_path(EXAMPLE_DIR, "fdtd2d.cl")), {ny, nx}, 2);
        const auto fict = job.shared("_fict_", a.fict);
        const auto ex = job.split("ex", ny, a.ex), ey = job.split("ey", ny, a.ey), hz = job.split("hz", ny, a.hz);
        const auto n = arg::value<int>(int(nx)), m = arg::value<int>(int(ny));
        const LocalSize polybench{32, 8};  // the work-group PolyBench's host launches
        // fdtd_kernel1(_fict_, ex, ey, hz, t, nx, ny): ey from hz and the row above
        job.kernel("fdtd_kernel1", {arg::all(fict), arg::in(ex), arg::inout(ey), arg::halo(hz, 1), arg::step(), n, m})
            .whole_arrays()
            .required_local(polybench);
        // fdtd_kernel2(ex, ey, hz, nx, ny): ex from hz in the same row
        job.kernel("fdtd_kernel2", {arg::inout(ex), arg::in(ey), arg::in(hz), n, m}).whole_arrays().required_local(polybench);
        // fdtd_kernel3(ex, ey, hz, nx, ny): hz from ex and ey of the row below
        job.kernel("fdtd_kernel3", {arg::in(ex), arg::halo(ey, 1), arg::inout(hz), n, m}).whole_arrays().required_local(polybench);
        job.steps(tmax).gather(ex).gather(ey).gather(hz).ops_per_unit(11.0 * double(ny));

        run(app.cluster, job, app.options);  // warm-up: programs built, launches compiled
        a = in;
        const DataRunResult r = run(app.cluster, job, app.options);
        std::cout << format_report(r, app.cluster.devices());

        example::Check c{true, "not verified (EXAMPLE_NOVERIFY=1)"};
        if (!example::skip_verify()) {
            const auto want = example::fdtd_reference(in, int(tmax), int(nx), int(ny));
            c = example::compare_fields({{"ex", a.ex, want.ex}, {"ey", a.ey, want.ey}, {"hz", a.hz, want.hz}}, 1e-4);
        }
        std::cout << "worksize,fdtd2d," << nx << 'x' << ny << 'x' << tmax << ',' << r.ranks.size() << " ranks,"
                  << r.run_s << ',' << (!c.ok ? "FAILED" : example::skip_verify() ? "unverified" : "verified") << '\n'
                  << c.detail << '\n';
        return c.ok ? 0 : 3;
    });
}
