// Rodinia 3.1's OpenCL srad (speckle-reducing anisotropic diffusion) on worksize's data jobs, its
// kernel file and header as published (kernel_gpu_opencl.cl, main.h; ORIGIN.md). The kernels
// index from their buffers' start by group ids (slice_relative()); a unit of the job is a column
// of the column-major image. Each device holds its columns and one more on each side, with the
// east and west neighbour tables made for its own columns (generated on every rank); the image's
// sums are reduced on the devices and the host step turns them into the next iteration's q0sqr.
//   mpiexec -n RANKS srad [rows] [cols] [iterations] [--lambda L]     env: EXAMPLE_NOVERIFY=1
#include <cmath>
#include <iostream>
#include <string>

#include "reference.hpp"
#include "worksize/runtime/app.hpp"

using namespace worksize;

/// Rodinia's west (`step` -1) or east (+1) column table for held columns [first, first + count),
/// relative to the first: the image's edges clamp to themselves, a held edge column to itself.
void neighbour_columns(int step, std::int64_t cols, std::uint64_t first, std::uint64_t count, std::span<std::byte> out) {
    auto* j = reinterpret_cast<int*>(out.data());
    for (std::uint64_t c = 0; c < count; ++c) {
        const std::int64_t g = std::clamp<std::int64_t>(std::int64_t(first + c) + step, 0, cols - 1);
        j[c] = int(std::clamp<std::int64_t>(g - std::int64_t(first), 0, std::int64_t(count) - 1));
    }
}

int main(int argc, char** argv) {
    register_generator("srad_west", [](const std::vector<std::int64_t>& a, std::uint64_t first, std::uint64_t n,
                                       std::span<std::byte> out) { neighbour_columns(-1, a[0], first, n, out); });
    register_generator("srad_east", [](const std::vector<std::int64_t>& a, std::uint64_t first, std::uint64_t n,
                                       std::span<std::byte> out) { neighbour_columns(+1, a[0], first, n, out); });
    const AppSpec spec{"[rows] [cols] [iterations]", {{"lambda", "update step size (Rodinia's -l)", "0.5"}}};
    return cluster_main(argc, argv, "srad", spec, [](App& app) {
        const auto nr = app.count(0, 502, 2), nc = app.count(1, 458, 2), niter = app.count(2, 10);
        const float lambda = std::stof(app.option("lambda"));
        if (!(lambda >= 0 && lambda <= 1)) throw InvalidArgument("--lambda must be in [0, 1]");
        if (nr * nc > std::uint64_t(INT32_MAX)) throw InvalidArgument("rows x cols must fit an int (the kernels' ei)");
        const int r = int(nr), c = int(nc);
        std::vector<float> image = example::srad_image(r, c, 7);
        const std::vector<float> original = image;
        std::vector<int> north(nr), south(nr);  // Rodinia's iN and iS: the rows above and below
        for (int i = 0; i < r; ++i) north[std::size_t(i)] = std::max(i - 1, 0), south[std::size_t(i)] = std::min(i + 1, r - 1);
        std::vector<float> total{0}, total2{0}, q0sqr{0};

        DataJob job("srad", read_text_file(example::kernel_path(EXAMPLE_DIR, "kernel_gpu_opencl.cl")), nc);
        job.build_options("-I " + example::kernel_path(EXAMPLE_DIR, ""));  // its #include "./main.h"
        const auto I = job.split("d_I", nr, image);
        const auto iN = job.shared("d_iN", north), iS = job.shared("d_iS", south);
        const auto jE = job.split_generated<int>("d_jE", 1, "srad_east", {std::int64_t(nc)});
        const auto jW = job.split_generated<int>("d_jW", 1, "srad_west", {std::int64_t(nc)});
        const auto dN = job.split<float>("d_dN", nr), dS = job.split<float>("d_dS", nr);
        const auto dE = job.split<float>("d_dE", nr), dW = job.split<float>("d_dW", nr), C = job.split<float>("d_c", nr);
        const auto sums = job.shared("d_sums", total), sums2 = job.shared("d_sums2", total2), q0 = job.shared("q0sqr", q0sqr);
        for (const auto b : {dN, dS, dE, dW, C}) job.no_init(b);
        const auto ne = arg::expr<std::int64_t>("(end - begin) * nr", {{"nr", std::int64_t(nr)}});  // elements held
        const LocalSize group{256, 1};  // main.h's NUMBER_THREADS
        // Step 0 extracts and sums; steps 1..niter update and sum again (the host step's q0sqr
        // from those sums feeds the next update); the last compresses.
        job.kernel("extract_kernel", {ne, arg::inout(I)}).slice_relative().required_local(group).first_step_only();
        const ArgDecl l = arg::value<float>(lambda), rows = arg::value<int>(r), cols = arg::value<int>(c);
        job.kernel("srad_kernel", {l, rows, cols, ne, arg::all(iN), arg::all(iS), arg::in(jE), arg::in(jW), arg::out(dN),
                                   arg::out(dS), arg::out(dE), arg::out(dW), arg::value_of(q0), arg::out(C), arg::halo(I, 1)})
            .slice_relative().required_local(group).after_first_step();
        job.kernel("srad2_kernel", {l, rows, cols, ne, arg::all(iN), arg::all(iS), arg::in(jE), arg::in(jW), arg::in(dN),
                                    arg::in(dS), arg::in(dE), arg::in(dW), arg::halo(C, 1), arg::inout(I)})
            .slice_relative().required_local(group).after_first_step();
        job.kernel("prepare_kernel", {ne, arg::in(I), arg::reduce(sums), arg::reduce(sums2)})
            .slice_relative().required_local(group);
        job.kernel("compress_kernel", {ne, arg::inout(I)}).slice_relative().required_local(group).last_step_only();
        job.host_step(1, {q0}, [&](std::uint64_t) { q0sqr[0] = example::srad_q0sqr(total[0], total2[0], double(nr * nc)); });
        job.steps(niter + 1).gather(I).ops_per_unit(60.0 * double(nr));

        run(app.cluster, job, app.options);  // warm-up: programs built, launches compiled
        image = original;
        const DataRunResult res = run(app.cluster, job, app.options);
        std::cout << format_report(res, app.cluster.devices());

        example::Check check{true, "not verified (EXAMPLE_NOVERIFY=1)"};
        if (!example::skip_verify())
            check = example::compare(image, example::srad_reference(original, r, c, int(niter), lambda), 1e-3);
        std::cout << "worksize,srad," << nr << 'x' << nc << 'x' << niter << ',' << res.ranks.size() << " ranks,"
                  << res.run_s << ',' << (!check.ok ? "FAILED" : example::skip_verify() ? "unverified" : "verified")
                  << '\n'
                  << check.detail << '\n';
        return check.ok ? 0 : 3;
    });
}
