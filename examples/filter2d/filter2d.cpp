// A 2-D neighbourhood filter on worksize: each device receives its rows of the image plus the
// filter's radius of halo rows around them, and the 5x5 weights once per rank; rank 0 gathers
// the filtered rows and checks them against the CPU reference.
//   mpiexec -n 3 worksize_example_filter2d [width] [height] [repetitions]
#include <iostream>

#include "reference.hpp"
#include "worksize/runtime/app.hpp"

using namespace worksize;

int main(int argc, char** argv) {
    return cluster_main(argc, argv, "filter2d", [](App& app) {
        const auto width = app.count(0, 512), height = app.count(1, 384), reps = app.count(2, 10);
        std::vector<float> image = example::random_image(int(width), int(height), 11), weights = example::gaussian5x5();
        std::vector<float> out(image.size());

        DataJob job("filter2d", read_text_file(example::kernel_path(EXAMPLE_DIR, "filter2d.cl")), {width, height}, 2);
        const auto in = job.split("in", width, image), w = job.shared("weights", weights);
        const auto o = job.split("out", width, out);
        job.no_init(o);  // an output: every pixel is written before the gather, none is sent
        job.kernel("filter", {arg::halo(in, 2), arg::origin(in), arg::all(w), arg::out(o), arg::origin(o),
                              arg::value<int>(width), arg::value<int>(height), arg::end()});
        // Each step filters the same image again: `reps` launches, as a benchmark would time them.
        job.steps(reps).gather(o).ops_per_unit(50.0 * double(width));

        run(app.cluster, job, app.options);  // warm-up: programs built, launches compiled
        const DataRunResult r = run(app.cluster, job, app.options);
        std::cout << format_report(r, app.cluster.devices());

        const auto check = example::skip_verify() ? example::Check{true, "not verified (EXAMPLE_NOVERIFY=1)"}
                           : example::compare(out, example::filter2d_reference(image, weights, int(width), int(height)), 1e-5);
        std::cout << "worksize,filter2d," << width << 'x' << height << ',' << r.ranks.size() << " ranks,"
                  << r.run_s << ',' << (!check.ok ? "FAILED" : example::skip_verify() ? "unverified" : "verified") << '\n'
                  << check.detail << '\n';
        return check.ok ? 0 : 3;
    });
}
