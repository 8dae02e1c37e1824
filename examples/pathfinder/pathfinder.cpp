// Rodinia's pathfinder on worksize with its OpenCL kernel as published (kernels.cl, byte-identical;
// ORIGIN.md): dynamic programming down a wall of weights, a pyramid of `height` rows per launch.
// Each work-group of 256 items covers 256 - 2·height columns (the pyramid's borders are computed
// twice: groups()), the kernel indexes whole arrays by column (whole_arrays()), and its step-
// dependent arguments are expressions (arg::expr). worksize splits the columns across devices
// and ranks and swaps `height` border columns with each neighbour per launch.
//   mpiexec -n 3 worksize_example_pathfinder [cols] [rows] [height] [--block N]   (--help: every option)
#include <iostream>

#include "reference.hpp"
#include "worksize/runtime/app.hpp"

using namespace worksize;

int main(int argc, char** argv) {
    // Rows 1.. of the wall, made on every rank (the kernel reads all of it on every device):
    // nothing of it is sent. args: {cols, seed}; element e is cell cols + e.
    register_generator("pathfinder_wall", [](const std::vector<std::int64_t>& a, std::uint64_t first, std::uint64_t count,
                                             std::span<std::byte> out) {
        auto* w = reinterpret_cast<int*>(out.data());
        for (std::uint64_t e = 0; e < count; ++e)
            w[e] = example::pathfinder_weight(std::uint64_t(a[0]) + first + e, unsigned(a[1]));
    });
    const AppSpec spec{"[cols] [rows] [height]",
                       {{"block", "work-items per group (Rodinia: the kernel's largest; 256 here)", "256"}}};
    return cluster_main(argc, argv, "pathfinder", spec, [](App& app) {
        const auto cols = app.count(0, 10000), rows = app.count(1, 100, 2), height = app.count(2, 20);
        const int block = int(app.count_option("block", 2, 1024));
        if (2 * height >= std::uint64_t(block)) throw InvalidArgument("height must be below " + std::to_string(block / 2));
        // The kernel marks outputBuffer[sum] (Rodinia's debug buffer of 16384 ints): sums stay below 9·rows.
        if (9 * rows >= 16384) throw InvalidArgument("rows must be below 1821 (the kernel's debug buffer)");
        std::vector<int> src(cols);
        for (std::uint64_t c = 0; c < cols; ++c) src[c] = example::pathfinder_weight(c, 9);  // row 0
        const std::vector<int> src0 = src;

        DataJob job("pathfinder", read_text_file(example::kernel_path(EXAMPLE_DIR, "kernels.cl")), cols);
        const auto w = job.shared_generated<int>("gpuWall", (rows - 1) * cols, "pathfinder_wall",
                                                 {std::int64_t(cols), 9});
        const auto s = job.split("gpuSrc", 1, src), r = job.split<int>("gpuResults", 1);
        const auto debug = job.scratch<int>("outputBuffer", 16384);
        const int h = int(height);
        // dynproc_kernel(iteration, gpuWall, gpuSrc, gpuResults, cols, rows, startStep, border, HALO,
        //                prev, result, outputBuffer)
        job.kernel("dynproc_kernel",
                   {arg::expr("min(h, rows - 1 - step * h)", {{"h", h}, {"rows", std::int64_t(rows)}}), arg::all(w),
                    arg::halo(s, height), arg::out(r), arg::value<int>(int(cols)), arg::value<int>(int(rows)),
                    arg::step(h), arg::expr("h - begin", {{"h", h}}), arg::value<int>(1), arg::local<int>(block),
                    arg::local<int>(block), arg::scratch(debug)})
            .whole_arrays()
            .groups(block, std::uint64_t(block - 2 * h));
        job.swap(s, r).steps((rows - 2) / height + 1).gather(s).ops_per_unit(4.0 * double(height));

        run(app.cluster, job, app.options);  // warm-up: programs built, launches compiled
        src = src0;
        const DataRunResult res = run(app.cluster, job, app.options);
        std::cout << format_report(res, app.cluster.devices());

        example::Check c{true, "not verified (EXAMPLE_NOVERIFY=1)"};
        if (!example::skip_verify()) {
            const std::vector<int> want =
                example::pathfinder_reference(example::pathfinder_wall(int(rows), int(cols), 9), int(rows), int(cols));
            c = example::compare_labels(src, want, 0.0, "sums");
        }
        std::cout << "worksize,pathfinder," << cols << 'x' << rows << "-h" << height << ',' << res.ranks.size()
                  << " ranks," << res.run_s << ',' << (!c.ok ? "FAILED" : example::skip_verify() ? "unverified" : "verified")
                  << '\n'
                  << c.detail << '\n';
        return c.ok ? 0 : 3;
    });
}
