// Plain single-device OpenCL baseline of the filter2d example (5x5 filter, edge-replicating):
// what a user writes without worksize. Times `reps` launches plus the read-back (after a warm-up,
// excluding the upload), verifies against the CPU reference, prints one CSV line.
//   plain_filter2d width height [reps=10]      env: PLAIN_DEVICE, EXAMPLE_NOVERIFY=1, EXAMPLE_KERNEL_DIR
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "plain_cl.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
    return plain::main_guard("filter2d", "width height [reps=10]", [&] {
        const int width = plain::arg_int(argc, argv, 1, "width");
        const int height = plain::arg_int(argc, argv, 2, "height");
        const int reps = plain::arg_int(argc, argv, 3, "reps", 10);
        if (argc > 4) throw plain::UsageError("too many arguments");
        if (static_cast<long long>(width) * height > INT_MAX)
            throw plain::UsageError("width*height must fit an int (the kernel's indices)");
        const std::size_t cells = std::size_t(width) * height, bytes = cells * sizeof(float);

        const std::vector<float> image = example::random_image(width, height, 1);
        const std::vector<float> weights = example::gaussian5x5();

        const cl::Device device = plain::pick_device();
        const cl::Context ctx(device);
        const cl::CommandQueue queue(ctx, device);
        const cl::Program program = plain::build(ctx, device, plain::kernel_source("filter2d.cl"));
        cl::Kernel kernel(program, "filter");
        cl::Buffer in(ctx, CL_MEM_READ_ONLY, bytes), out(ctx, CL_MEM_WRITE_ONLY, bytes);
        cl::Buffer w(ctx, CL_MEM_READ_ONLY, weights.size() * sizeof(float));

        const double t_upload = plain::now();
        queue.enqueueWriteBuffer(in, CL_TRUE, 0, bytes, image.data());
        queue.enqueueWriteBuffer(w, CL_TRUE, 0, weights.size() * sizeof(float), weights.data());
        const double upload = plain::now() - t_upload;

        int a = 0;
        kernel.setArg(a++, in);
        kernel.setArg(a++, 0);  // in_origin
        kernel.setArg(a++, w);
        kernel.setArg(a++, out);
        kernel.setArg(a++, 0);  // out_origin
        kernel.setArg(a++, width);
        kernel.setArg(a++, height);
        kernel.setArg(a++, height);  // end
        const cl::NDRange global(width, height);
        queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NullRange);  // warm-up
        queue.finish();

        std::vector<float> result(cells);
        const double t0 = plain::now();
        for (int r = 0; r < reps; ++r) queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NullRange);
        queue.enqueueReadBuffer(out, CL_TRUE, 0, bytes, result.data());
        const double seconds = plain::now() - t0;

        std::string status = "unverified", detail = "not verified (EXAMPLE_NOVERIFY=1)";
        if (!plain::env_is("EXAMPLE_NOVERIFY", "1")) {
            const example::Check c =
                example::compare(result, example::filter2d_reference(image, weights, width, height), 1e-5);
            status = c.ok ? "verified" : "FAILED";
            detail = c.detail;
        }
        const std::string size = std::to_string(width) + "x" + std::to_string(height) + " reps=" + std::to_string(reps);
        const std::string name = plain::device_name(device);
        plain::report("filter2d", size, name, seconds, status);
        std::fprintf(stderr, "plain_filter2d %s on %s: %.6f s (%.3f ms/launch incl. read-back), upload %.6f s; %s: %s\n",
                     size.c_str(), name.c_str(), seconds, 1e3 * seconds / reps, upload, status.c_str(), detail.c_str());
        return status == "FAILED" ? 3 : 0;
    });
}
