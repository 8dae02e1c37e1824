// Plain single-device OpenCL host of the pathfinder example, as Rodinia's OpenCL pathfinder runs
// its kernel: one launch per pyramid of `height` rows, work-groups of 256 items, two result
// buffers swapped. One change: the NDRange is ceil(cols / (256 - 2·height)) groups, which
// Rodinia's main.cpp computes in a comment (it launches rows·cols items, whose surplus groups do
// nothing). Times the launches plus the read-back (after a warm-up, excluding the upload),
// verifies against the CPU reference, prints one CSV line.
//   plain_pathfinder cols rows height      env: PLAIN_DEVICE, PLAIN_PROFILE=1, EXAMPLE_NOVERIFY=1, EXAMPLE_KERNEL_DIR
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "plain_cl.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
    return plain::main_guard("pathfinder", "cols rows height", [&] {
        const int cols = plain::arg_int(argc, argv, 1, "cols"), rows = plain::arg_int(argc, argv, 2, "rows", -1, 2, 1820);
        const int height = plain::arg_int(argc, argv, 3, "height", -1, 1, 127);
        if (argc > 4) throw plain::UsageError("too many arguments");
        if (static_cast<long long>(rows) * cols > INT_MAX) throw plain::UsageError("rows*cols must fit an int");
        const int block = 256, small = block - 2 * height, groups = (cols + small - 1) / small;
        const std::vector<int> wall = example::pathfinder_wall(rows, cols, 9);

        const cl::Device device = plain::pick_device();
        const cl::Context ctx(device);
        // PLAIN_PROFILE=1: a profiling queue, as worksize's (to compare like with like).
        // PLAIN_TIMELINE=FILE: every timed launch's times, as worksize's WORKSIZE_TIMELINE.
        const char* timeline = std::getenv("PLAIN_TIMELINE");
        const bool traced = timeline && *timeline;
        const cl::CommandQueue queue(ctx, device,
                                     plain::env_is("PLAIN_PROFILE", "1") || traced ? CL_QUEUE_PROFILING_ENABLE : 0);
        std::vector<std::pair<double, cl::Event>> launches;
        const cl::Program program = plain::build(ctx, device, plain::kernel_source("kernels.cl"));
        cl::Kernel kernel(program, "dynproc_kernel");
        const std::size_t row_bytes = std::size_t(cols) * sizeof(int);
        cl::Buffer d_wall(ctx, CL_MEM_READ_ONLY, wall.size() * sizeof(int) - row_bytes);
        cl::Buffer result[2] = {cl::Buffer(ctx, CL_MEM_READ_WRITE, row_bytes), cl::Buffer(ctx, CL_MEM_READ_WRITE, row_bytes)};
        cl::Buffer debug(ctx, CL_MEM_READ_WRITE, 16384 * sizeof(int));
        auto upload = [&] {
            queue.enqueueWriteBuffer(d_wall, CL_TRUE, 0, wall.size() * sizeof(int) - row_bytes, wall.data() + cols);
            queue.enqueueWriteBuffer(result[0], CL_TRUE, 0, row_bytes, wall.data());
            queue.enqueueFillBuffer(debug, 0, 0, 16384 * sizeof(int));
        };
        kernel.setArg(1, d_wall), kernel.setArg(4, cols), kernel.setArg(5, rows), kernel.setArg(7, height);
        kernel.setArg(8, 1), kernel.setArg(9, cl::Local(block * sizeof(int))), kernel.setArg(10, cl::Local(block * sizeof(int)));
        kernel.setArg(11, debug);
        int src = 1, dst = 0;
        auto run = [&] {  // every pyramid, as Rodinia's loop: the buffers swap before each launch
            src = 1, dst = 0;
            for (int t = 0; t < rows - 1; t += height) {
                std::swap(src, dst);
                kernel.setArg(0, std::min(height, rows - t - 1)), kernel.setArg(2, result[src]);
                kernel.setArg(3, result[dst]), kernel.setArg(6, t);
                cl::Event ev;
                const double at = plain::now();
                queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(std::size_t(groups) * block),
                                           cl::NDRange(block), nullptr, traced ? &ev : nullptr);
                if (traced) launches.emplace_back(at, ev);
            }
        };
        upload();
        run();  // warm-up, then the inputs again
        queue.finish();
        const double t_upload = plain::now();
        upload();
        const double upload_s = plain::now() - t_upload;

        std::vector<int> sums(std::size_t(cols), 0);
        launches.clear();  // the timed run's only
        const double t0 = plain::now();
        run();
        cl::Event read;
        const double read_at = plain::now();
        queue.enqueueReadBuffer(result[dst], CL_TRUE, 0, row_bytes, sums.data(), nullptr, traced ? &read : nullptr);
        const double seconds = plain::now() - t0;
        if (traced) {
            const std::size_t first_read = launches.size();
            launches.emplace_back(read_at, read);
            plain::write_timeline(timeline, launches, t0, first_read);
            std::FILE* f = std::fopen(timeline, "a");
            if (f) std::fprintf(f, "0,,,,mark:read done,%.3f,,,,\n", seconds * 1e6), std::fclose(f);
        }

        std::string status = "unverified", detail = "not verified (EXAMPLE_NOVERIFY=1)";
        if (!plain::env_is("EXAMPLE_NOVERIFY", "1")) {
            const example::Check c = example::compare_labels(sums, example::pathfinder_reference(wall, rows, cols), 0.0, "sums");
            status = c.ok ? "verified" : "FAILED";
            detail = c.detail;
        }
        const std::string size = std::to_string(cols) + "x" + std::to_string(rows) + " height=" + std::to_string(height);
        const std::string name = plain::device_name(device);
        plain::report("pathfinder", size, name, seconds, status);
        std::fprintf(stderr, "plain_pathfinder %s on %s: %.6f s, upload %.6f s; %s: %s\n", size.c_str(), name.c_str(),
                     seconds, upload_s, status.c_str(), detail.c_str());
        return status == "FAILED" ? 3 : 0;
    });
}
