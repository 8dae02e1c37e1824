// k-means clustering on worksize: two kernels and a reduction per iteration. The points stay on
// the devices; `assign` labels each point with its nearest centre, `accumulate` sums each chunk
// of 256 points into a record per centre, and worksize combines the records of all devices along
// the slices into the new sums, which every device reads next iteration. Rank 0 gets the labels
// and the sums at the end.   mpiexec -n 3 worksize_example_kmeans [points] [dims] [k] [iterations]
#include <iostream>

#include "reference.hpp"
#include "worksize/runtime/app.hpp"

using namespace worksize;

int main(int argc, char** argv) {
    return cluster_main(argc, argv, "kmeans", [](App& app) {
        const auto n = app.count(0, 20000), d = app.count(1, 4), k = app.count(2, 5), iterations = app.count(3, 10);
        const int chunk = 256;
        const std::vector<float> points0 = example::kmeans_points(int(n), int(d), int(k), 5);
        std::vector<float> points = points0, sums = example::kmeans_initial_sums(points0, int(d), int(k));
        const std::vector<float> sums0 = sums;
        std::vector<std::int32_t> labels(n);

        DataJob job("kmeans", read_text_file(example::kernel_path(EXAMPLE_DIR, "kmeans.cl")), n);
        const auto p = job.split("points", d, points), l = job.split("labels", 1, labels);
        const auto s = job.shared("sums", sums);
        job.kernel("assign", {arg::in(p), arg::origin(p), arg::all(s), arg::out(l), arg::origin(l),
                              arg::value<int>(k), arg::value<int>(d), arg::end()});
        job.kernel("accumulate", {arg::in(p), arg::origin(p), arg::in(l), arg::origin(l), arg::reduce(s), arg::begin(),
                                  arg::value<int>(k), arg::value<int>(d), arg::value(chunk), arg::value<int>(n)})
            .units_per_item(chunk);
        job.build_options("-cl-fp32-correctly-rounded-divide-sqrt");  // centres as the CPU divides
        job.steps(iterations).gather(l).ops_per_unit(3.0 * double(k * d) + 2.0 * double(d));

        run(app.cluster, job, app.options);  // warm-up: programs built, launches compiled
        sums = sums0;
        const DataRunResult r = run(app.cluster, job, app.options);
        std::cout << format_report(r, app.cluster.devices());

        example::Check c1{true, "not verified (EXAMPLE_NOVERIFY=1)"}, c2{true, ""};
        if (!example::skip_verify()) {
            const auto want = example::kmeans_reference(points0, sums0, int(n), int(d), int(k), chunk, int(iterations));
            c1 = example::compare(sums, want.sums, 1e-5);
            c2 = example::compare_labels(labels, want.labels, 1e-4);
        }
        std::cout << "worksize,kmeans," << n << 'x' << d << "-k" << k << "-i" << iterations << ',' << r.ranks.size()
                  << " ranks," << r.run_s << ',' << (!(c1.ok && c2.ok) ? "FAILED" : example::skip_verify() ? "unverified" : "verified") << '\n'
                  << "sums: " << c1.detail << "; labels: " << c2.detail << '\n';
        return c1.ok && c2.ok ? 0 : 3;
    });
}
