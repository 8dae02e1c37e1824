// k-means clustering on worksize: two kernels per iteration and a host step. The points stay on
// the devices; `assign` labels each point with its nearest centre; `accumulate` sums each
// work-group's points per centre in __local memory (one record per group), worksize combines
// the records on each device and then along the slices into `sums`, and rank 0's host step turns
// them into the next centres, which go to every device. Rank 0 gets the labels and the sums at
// the end. With --points local each rank makes its own slices' points (a registered generator,
// each point a function of its index): nothing of them is sent.
//   mpiexec -n 3 worksize_example_kmeans [points] [dims] [k] [iterations] [--points rank0|local]
#include <algorithm>
#include <chrono>
#include <iostream>

#include "reference.hpp"
#include "worksize/runtime/app.hpp"

using namespace worksize;

int main(int argc, char** argv) {
    // Rows [first, first + count) of the points, made on the rank that holds them.
    // args: {dims, k, seed}.
    register_generator("kmeans_points", [](const std::vector<std::int64_t>& a, std::uint64_t first, std::uint64_t count,
                                           std::span<std::byte> out) {
        const int d = int(a[0]), k = int(a[1]);
        const unsigned seed = unsigned(a[2]);
        example::kmeans_point_rows(example::kmeans_seed_centres(d, k, seed), d, k, seed, first, count,
                                   reinterpret_cast<float*>(out.data()));
    });
    const AppSpec spec{"[points] [dims] [k] [iterations]",
                       {{"points", "where the points are made: rank0 (there, then sent to each slice) or local "
                                   "(each rank its own slices', by a generator)",
                         "rank0"},
                        {"host", "rank 0's points in pinned memory (Cluster::host_vector: onto the devices without a "
                                 "copy) or pageable (a std::vector: copied through pinned halves)",
                         "pinned"}}};
    return cluster_main(argc, argv, "kmeans", spec, [](App& app) {
        const auto n = app.count(0, 20000), d = app.count(1, 4), k = app.count(2, 5), iterations = app.count(3, 10);
        const std::string where = app.option("points");
        if (where != "rank0" && where != "local")
            throw InvalidArgument("--points must be rank0 or local, not '" + where + "'");
        const bool local = where == "local";
        const std::string host = app.option("host");
        if (host != "pinned" && host != "pageable")
            throw InvalidArgument("--host must be pinned or pageable, not '" + host + "'");
        const unsigned seed = 5;
        const std::uint64_t group = 256;  // points per work-group, each summing k·(d+1) values in __local memory
        // Rank 0's copy of the points: the inputs it sends, or (local) what the CPU check reads.
        std::vector<float> points0;
        if (!local) {
            points0 = example::kmeans_points(int(n), int(d), int(k), seed);
        } else if (!example::skip_verify()) {
            points0.resize(n * d);
            example::kmeans_point_rows(example::kmeans_seed_centres(int(d), int(k), seed), int(d), int(k), seed, 0, n,
                                       points0.data());
        } else {  // the first k points only: the initial centres
            points0.resize(std::min(n, k) * d);
            example::kmeans_point_rows(example::kmeans_seed_centres(int(d), int(k), seed), int(d), int(k), seed, 0,
                                       std::min(n, k), points0.data());
        }
        const std::vector<float> centres0 = example::kmeans_initial_sums(points0, int(d), int(k));  // count 1 each
        // The job's input: rank 0's points (its own copy, which the run leaves alone).
        HostVector<float> points;
        if (!local) {
            const auto t0 = std::chrono::steady_clock::now();
            if (host == "pinned") points = app.cluster.host_vector<float>(points0.size());
            else points.resize(points0.size());
            std::copy(points0.begin(), points0.end(), points.begin());
            std::cerr << "kmeans: " << points.size() * sizeof(float) / 1048576.0 << " MiB of points in " << host
                      << " memory, made and filled in "
                      << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() << " ms\n";
        }
        std::vector<float> centres = centres0, last = centres0, sums(k * (d + 1));
        std::vector<std::int32_t> labels(n);

        DataJob job("kmeans", read_text_file(example::kernel_path(EXAMPLE_DIR, "kmeans.cl")), n);
        const auto p = local ? job.split_generated<float>("points", d, "kmeans_points",
                                                          {std::int64_t(d), std::int64_t(k), std::int64_t(seed)})
                             : job.split("points", d, points);
        const auto l = job.split("labels", 1, labels);
        job.no_init(l);  // an output: assign writes every label before accumulate reads it
        const auto c = job.shared("centres", centres), s = job.shared("sums", sums);
        job.kernel("assign", {arg::in(p), arg::origin(p), arg::all(c), arg::out(l), arg::origin(l), arg::value<int>(k),
                              arg::value<int>(d), arg::end()});
        job.kernel("accumulate", {arg::in(p), arg::origin(p), arg::in(l), arg::origin(l), arg::group_reduce(s),
                                  arg::value<int>(k), arg::value<int>(d), arg::end(), arg::local<float>(group * (d + 1))})
            .required_local({group, 1});
        job.host_step(1, {c}, [&](std::uint64_t) {
            last = centres;  // what the iteration just done read (the check's reference)
            example::kmeans_centres(sums, centres, int(d), int(k));
        });
        job.build_options("-cl-fp32-correctly-rounded-divide-sqrt");
        job.steps(iterations).gather(l).ops_per_unit(3.0 * double(k * d) + 2.0 * double(d));

        run(app.cluster, job, app.options);  // warm-up: programs built, launches compiled
        centres = centres0;
        const DataRunResult r = run(app.cluster, job, app.options);
        std::cout << format_report(r, app.cluster.devices());

        example::KmeansCheck ck{{true, "not verified (EXAMPLE_NOVERIFY=1)"}, {true, ""}};
        example::Check chain{true, ""};
        if (!example::skip_verify()) {
            ck = example::kmeans_check(points0, last, labels, sums, int(n), int(d), int(k), 1e-5);
            // The whole chain of iterations against the CPU's (its sums in another order: a
            // point near two centres may go either way).
            chain = example::compare_labels(
                labels, example::kmeans_reference(points0, centres0, int(n), int(d), int(k), 256, int(iterations)).labels,
                0.01);
        }
        const bool ok = ck.labels.ok && ck.sums.ok && chain.ok;
        std::cout << "worksize,kmeans," << n << 'x' << d << "-k" << k << "-i" << iterations << ',' << r.ranks.size()
                  << " ranks," << r.run_s << ',' << (!ok ? "FAILED" : example::skip_verify() ? "unverified" : "verified") << '\n'
                  << "labels: " << ck.labels.detail << "; sums: " << ck.sums.detail << "; against the CPU's run: "
                  << chain.detail << '\n';
        return ok ? 0 : 3;
    });
}
