// Plain single-device OpenCL host of the fdtd2d example, as PolyBench-ACC's fdtd2d.c runs its
// kernels: work-groups of 32x8, the NDRange padded to them, three launches per time step. Times
// the steps plus the read-back of the three fields (after a warm-up, excluding the upload),
// verifies against the CPU reference, prints one CSV line.
//   plain_fdtd2d nx ny tmax      env: PLAIN_DEVICE, PLAIN_PROFILE=1, EXAMPLE_NOVERIFY=1, EXAMPLE_KERNEL_DIR
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "plain_cl.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
    return plain::main_guard("fdtd2d", "nx ny tmax", [&] {
        const int nx = plain::arg_int(argc, argv, 1, "nx"), ny = plain::arg_int(argc, argv, 2, "ny");
        const int tmax = plain::arg_int(argc, argv, 3, "tmax");
        if (argc > 4) throw plain::UsageError("too many arguments");
        if (static_cast<long long>(nx) * ny > INT_MAX) throw plain::UsageError("nx*ny must fit an int (the kernels' indices)");
        const std::size_t bytes = std::size_t(nx) * std::size_t(ny) * sizeof(float);
        const example::FdtdArrays in = example::fdtd_inputs(tmax, nx, ny);

        const cl::Device device = plain::pick_device();
        const cl::Context ctx(device);
        // PLAIN_PROFILE=1: a profiling queue, as worksize's (to compare like with like).
        const cl::CommandQueue queue(ctx, device, plain::env_is("PLAIN_PROFILE", "1") ? CL_QUEUE_PROFILING_ENABLE : 0);
        const cl::Program program = plain::build(ctx, device, plain::kernel_source("fdtd2d.cl"));
        cl::Kernel k1(program, "fdtd_kernel1"), k2(program, "fdtd_kernel2"), k3(program, "fdtd_kernel3");
        cl::Buffer fict(ctx, CL_MEM_READ_WRITE, in.fict.size() * sizeof(float));
        cl::Buffer ex(ctx, CL_MEM_READ_WRITE, bytes), ey(ctx, CL_MEM_READ_WRITE, bytes), hz(ctx, CL_MEM_READ_WRITE, bytes);
        auto upload = [&] {
            queue.enqueueWriteBuffer(fict, CL_TRUE, 0, in.fict.size() * sizeof(float), in.fict.data());
            queue.enqueueWriteBuffer(ex, CL_TRUE, 0, bytes, in.ex.data());
            queue.enqueueWriteBuffer(ey, CL_TRUE, 0, bytes, in.ey.data());
            queue.enqueueWriteBuffer(hz, CL_TRUE, 0, bytes, in.hz.data());
        };
        k1.setArg(0, fict), k1.setArg(1, ex), k1.setArg(2, ey), k1.setArg(3, hz), k1.setArg(5, nx), k1.setArg(6, ny);
        for (cl::Kernel* k : {&k2, &k3}) k->setArg(0, ex), k->setArg(1, ey), k->setArg(2, hz), k->setArg(3, nx), k->setArg(4, ny);
        const cl::NDRange local(32, 8), global((ny + 31) / 32 * 32, (nx + 7) / 8 * 8);
        auto step = [&](int t) {
            k1.setArg(4, t);
            queue.enqueueNDRangeKernel(k1, cl::NullRange, global, local);
            queue.enqueueNDRangeKernel(k2, cl::NullRange, global, local);
            queue.enqueueNDRangeKernel(k3, cl::NullRange, global, local);
        };
        upload();
        step(0);  // warm-up, then the inputs again
        queue.finish();
        const double t_upload = plain::now();
        upload();
        const double upload_s = plain::now() - t_upload;

        example::FdtdArrays out = in;
        const double t0 = plain::now();
        for (int t = 0; t < tmax; ++t) step(t);
        queue.enqueueReadBuffer(ex, CL_TRUE, 0, bytes, out.ex.data());
        queue.enqueueReadBuffer(ey, CL_TRUE, 0, bytes, out.ey.data());
        queue.enqueueReadBuffer(hz, CL_TRUE, 0, bytes, out.hz.data());
        const double seconds = plain::now() - t0;

        std::string status = "unverified", detail = "not verified (EXAMPLE_NOVERIFY=1)";
        if (!plain::env_is("EXAMPLE_NOVERIFY", "1")) {
            const example::FdtdArrays want = example::fdtd_reference(in, tmax, nx, ny);
            const example::Check c =
                example::compare_fields({{"ex", out.ex, want.ex}, {"ey", out.ey, want.ey}, {"hz", out.hz, want.hz}}, 1e-4);
            status = c.ok ? "verified" : "FAILED";
            detail = c.detail;
        }
        const std::string size = std::to_string(nx) + "x" + std::to_string(ny) + " tmax=" + std::to_string(tmax);
        const std::string name = plain::device_name(device);
        plain::report("fdtd2d", size, name, seconds, status);
        std::fprintf(stderr, "plain_fdtd2d %s on %s: %.6f s (%.3f ms/step), upload %.6f s; %s: %s\n", size.c_str(),
                     name.c_str(), seconds, 1e3 * seconds / tmax, upload_s, status.c_str(), detail.c_str());
        return status == "FAILED" ? 3 : 0;
    });
}
