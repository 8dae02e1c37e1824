// Plain single-device OpenCL baseline of the kmeans example: what a user writes without
// worksize. Times `iterations` x (assign, accumulate in work-groups of 256, read the groups'
// records, sum them in double, compute the centres, write them) plus the read-back of the labels
// (after a warm-up, excluding the upload of the points), verifies as the example does, prints
// one CSV line.
//   plain_kmeans n d k iterations      env: PLAIN_DEVICE, PLAIN_PROFILE=1, EXAMPLE_NOVERIFY=1, EXAMPLE_KERNEL_DIR
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "plain_cl.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
    return plain::main_guard("kmeans", "n d k iterations", [&] {
        constexpr int group = 256;
        const int n = plain::arg_int(argc, argv, 1, "n", -1, 1, INT_MAX - group);
        const int d = plain::arg_int(argc, argv, 2, "d");
        const int k = plain::arg_int(argc, argv, 3, "k");
        const int iterations = plain::arg_int(argc, argv, 4, "iterations");
        if (argc > 5) throw plain::UsageError("too many arguments");
        const int groups = (n + group - 1) / group;
        const std::size_t rec = std::size_t(k) * (d + 1);  // one group's record, also the size of the centres
        if (static_cast<long long>(n) * d > INT_MAX || static_cast<long long>(groups) * rec > INT_MAX)
            throw plain::UsageError("n*d and ceil(n/256)*k*(d+1) must fit an int (the kernels' indices)");
        if (k > n) throw plain::UsageError("k must be at most n (the first k points are the initial centres)");

        const std::vector<float> points = example::kmeans_points(n, d, k, 5);
        const std::vector<float> initial = example::kmeans_initial_sums(points, d, k);  // centres of count 1

        const cl::Device device = plain::pick_device();
        const cl::Context ctx(device);
        const cl::CommandQueue queue(ctx, device, plain::env_is("PLAIN_PROFILE", "1") ? CL_QUEUE_PROFILING_ENABLE : 0);
        const cl::Program program = plain::build(ctx, device, plain::kernel_source("kmeans.cl"));
        cl::Kernel assign(program, "assign"), accumulate(program, "accumulate");
        cl::Buffer pts(ctx, CL_MEM_READ_ONLY, points.size() * sizeof(float));
        cl::Buffer centres_buf(ctx, CL_MEM_READ_ONLY, rec * sizeof(float));
        cl::Buffer labels_buf(ctx, CL_MEM_READ_WRITE, std::size_t(n) * sizeof(int));
        cl::Buffer records_buf(ctx, CL_MEM_WRITE_ONLY, groups * rec * sizeof(float));

        const double t_upload = plain::now();
        queue.enqueueWriteBuffer(pts, CL_TRUE, 0, points.size() * sizeof(float), points.data());
        const double upload = plain::now() - t_upload;

        // assign(points, p_origin, centres, labels, l_origin, k, d, end)
        assign.setArg(0, pts), assign.setArg(1, 0), assign.setArg(2, centres_buf), assign.setArg(3, labels_buf);
        assign.setArg(4, 0), assign.setArg(5, k), assign.setArg(6, d), assign.setArg(7, n);
        // accumulate(points, p_origin, labels, l_origin, records, k, d, end, scratch)
        accumulate.setArg(0, pts), accumulate.setArg(1, 0), accumulate.setArg(2, labels_buf), accumulate.setArg(3, 0);
        accumulate.setArg(4, records_buf), accumulate.setArg(5, k), accumulate.setArg(6, d), accumulate.setArg(7, n);
        accumulate.setArg(8, cl::Local(std::size_t(group) * (d + 1) * sizeof(float)));
        const cl::NDRange global(std::size_t(groups) * group), local(group);

        std::vector<float> records(groups * rec), sums(rec), centres = initial, last = initial;
        std::vector<double> total(rec);
        std::vector<int> labels(n);
        auto iterate = [&] {
            queue.enqueueWriteBuffer(centres_buf, CL_TRUE, 0, rec * sizeof(float), centres.data());
            queue.enqueueNDRangeKernel(assign, cl::NullRange, global, local);
            queue.enqueueNDRangeKernel(accumulate, cl::NullRange, global, local);
            queue.enqueueReadBuffer(records_buf, CL_TRUE, 0, records.size() * sizeof(float), records.data());
            std::fill(total.begin(), total.end(), 0.0);
            for (int g = 0; g < groups; ++g)
                for (std::size_t e = 0; e < rec; ++e) total[e] += records[g * rec + e];
            for (std::size_t e = 0; e < rec; ++e) sums[e] = static_cast<float>(total[e]);
            last = centres;
            example::kmeans_centres(sums, centres, d, k);
        };
        iterate();  // warm-up, then the initial centres again
        centres = initial;

        const double t0 = plain::now();
        for (int it = 0; it < iterations; ++it) iterate();
        queue.enqueueReadBuffer(labels_buf, CL_TRUE, 0, labels.size() * sizeof(int), labels.data());
        const double seconds = plain::now() - t0;

        std::string status = "unverified", detail = "not verified (EXAMPLE_NOVERIFY=1)";
        if (!plain::env_is("EXAMPLE_NOVERIFY", "1")) {
            const example::KmeansCheck c = example::kmeans_check(points, last, labels, sums, n, d, k, 1e-5);
            status = c.labels.ok && c.sums.ok ? "verified" : "FAILED";
            detail = "labels " + c.labels.detail + "; sums " + c.sums.detail;
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
