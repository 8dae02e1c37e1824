// Plain single-device OpenCL baseline of the kmeans example: what a user writes without
// worksize. Times `iterations` x (assign, accumulate, read the chunk records, combine them in
// double in chunk order, write the new sums) plus the read-back of labels and sums (after a
// warm-up, excluding the upload of the points), verifies against the CPU reference, prints one
// CSV line.
//   plain_kmeans n d k iterations      env: PLAIN_DEVICE, EXAMPLE_NOVERIFY=1, EXAMPLE_KERNEL_DIR
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "plain_cl.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
    return plain::main_guard("kmeans", "n d k iterations", [&] {
        constexpr int chunk = 256;
        const int n = plain::arg_int(argc, argv, 1, "n", -1, 1, INT_MAX - chunk);
        const int d = plain::arg_int(argc, argv, 2, "d");
        const int k = plain::arg_int(argc, argv, 3, "k");
        const int iterations = plain::arg_int(argc, argv, 4, "iterations");
        if (argc > 5) throw plain::UsageError("too many arguments");
        const int chunks = (n + chunk - 1) / chunk;
        const std::size_t rec = std::size_t(k) * (d + 1);  // one chunk's record, also the size of sums
        if (static_cast<long long>(n) * d > INT_MAX || static_cast<long long>(chunks) * rec > INT_MAX)
            throw plain::UsageError("n*d and ceil(n/256)*k*(d+1) must fit an int (the kernels' indices)");
        if (k > n) throw plain::UsageError("k must be at most n (the first k points are the initial centres)");

        const std::vector<float> points = example::kmeans_points(n, d, k, 1);
        const std::vector<float> initial = example::kmeans_initial_sums(points, d, k);

        const cl::Device device = plain::pick_device();
        const cl::Context ctx(device);
        const cl::CommandQueue queue(ctx, device);
        const cl::Program program = plain::build(ctx, device, plain::kernel_source("kmeans.cl"));
        cl::Kernel assign(program, "assign"), accumulate(program, "accumulate");
        cl::Buffer pts(ctx, CL_MEM_READ_ONLY, points.size() * sizeof(float));
        cl::Buffer sums_buf(ctx, CL_MEM_READ_ONLY, rec * sizeof(float));
        cl::Buffer labels_buf(ctx, CL_MEM_READ_WRITE, std::size_t(n) * sizeof(int));
        cl::Buffer records_buf(ctx, CL_MEM_WRITE_ONLY, chunks * rec * sizeof(float));

        const double t_upload = plain::now();
        queue.enqueueWriteBuffer(pts, CL_TRUE, 0, points.size() * sizeof(float), points.data());
        queue.enqueueWriteBuffer(sums_buf, CL_TRUE, 0, rec * sizeof(float), initial.data());
        const double upload = plain::now() - t_upload;

        // assign(points, p_origin, sums, labels, l_origin, k, d, end)
        assign.setArg(0, pts), assign.setArg(1, 0), assign.setArg(2, sums_buf), assign.setArg(3, labels_buf);
        assign.setArg(4, 0), assign.setArg(5, k), assign.setArg(6, d), assign.setArg(7, n);
        // accumulate(points, p_origin, labels, l_origin, records, begin, k, d, chunk, n_end)
        accumulate.setArg(0, pts), accumulate.setArg(1, 0), accumulate.setArg(2, labels_buf), accumulate.setArg(3, 0);
        accumulate.setArg(4, records_buf), accumulate.setArg(5, 0), accumulate.setArg(6, k), accumulate.setArg(7, d);
        accumulate.setArg(8, chunk), accumulate.setArg(9, n);
        auto launch = [&] {
            queue.enqueueNDRangeKernel(assign, cl::NullRange, cl::NDRange(n), cl::NullRange);
            queue.enqueueNDRangeKernel(accumulate, cl::NullRange, cl::NDRange(chunks), cl::NullRange);
        };
        launch();  // warm-up: sums stay the initial ones
        queue.finish();

        std::vector<float> records(chunks * rec), sums(rec);
        std::vector<double> total(rec);
        std::vector<int> labels(n);
        const double t0 = plain::now();
        for (int it = 0; it < iterations; ++it) {
            launch();
            queue.enqueueReadBuffer(records_buf, CL_TRUE, 0, records.size() * sizeof(float), records.data());
            std::fill(total.begin(), total.end(), 0.0);
            for (int g = 0; g < chunks; ++g)
                for (std::size_t e = 0; e < rec; ++e) total[e] += records[g * rec + e];
            for (std::size_t e = 0; e < rec; ++e) sums[e] = static_cast<float>(total[e]);
            queue.enqueueWriteBuffer(sums_buf, CL_TRUE, 0, rec * sizeof(float), sums.data());
        }
        queue.enqueueReadBuffer(labels_buf, CL_TRUE, 0, labels.size() * sizeof(int), labels.data());
        queue.enqueueReadBuffer(sums_buf, CL_TRUE, 0, rec * sizeof(float), sums.data());
        const double seconds = plain::now() - t0;

        std::string status = "unverified", detail = "not verified (EXAMPLE_NOVERIFY=1)";
        if (!plain::env_is("EXAMPLE_NOVERIFY", "1")) {
            const example::KmeansResult want = example::kmeans_reference(points, initial, n, d, k, chunk, iterations);
            const example::Check s = example::compare(sums, want.sums, 1e-5);
            const example::Check l = example::compare_labels(labels, want.labels, 0.0);
            status = s.ok && l.ok ? "verified" : "FAILED";
            detail = "sums " + s.detail + "; " + l.detail;
        }
        const std::string size = "n=" + std::to_string(n) + " d=" + std::to_string(d) + " k=" + std::to_string(k) +
                                 " it=" + std::to_string(iterations);
        const std::string name = plain::device_name(device);
        plain::report("kmeans", size, name, seconds, status);
        std::fprintf(stderr, "plain_kmeans %s on %s: %.6f s (%.3f ms/iteration), upload %.6f s; %s: %s\n",
                     size.c_str(), name.c_str(), seconds, 1e3 * seconds / iterations, upload, status.c_str(),
                     detail.c_str());
        return status == "FAILED" ? 3 : 0;
    });
}
