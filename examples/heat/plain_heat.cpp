// Plain single-device OpenCL baseline of the heat example (explicit 5-point diffusion): what a
// user writes without worksize. Times `steps` launches alternating two temperature buffers plus
// the read-back (after a warm-up, excluding the upload), verifies against the CPU reference,
// prints one CSV line.
//   plain_heat width height steps      env: PLAIN_DEVICE, EXAMPLE_NOVERIFY=1, EXAMPLE_KERNEL_DIR
// Experiments (issue 26, the cost of a split step without any exchange): PLAIN_SPLIT=1 launches
// each step as two launches, the first row and then the rest, as the engine's overlap does for a
// slice with one neighbour; PLAIN_EVENTS=1 asks an event of every launch, as the engine keeps.
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "plain_cl.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
    return plain::main_guard("heat", "width height steps", [&] {
        const int width = plain::arg_int(argc, argv, 1, "width");
        const int height = plain::arg_int(argc, argv, 2, "height");
        const int steps = plain::arg_int(argc, argv, 3, "steps");
        if (argc > 4) throw plain::UsageError("too many arguments");
        if (static_cast<long long>(width) * height > INT_MAX)
            throw plain::UsageError("width*height must fit an int (the kernel's indices)");
        const std::size_t cells = std::size_t(width) * height, bytes = cells * sizeof(float);

        const example::HeatInputs h = example::heat_inputs(width, height, 1);

        const cl::Device device = plain::pick_device();
        const cl::Context ctx(device);
        // PLAIN_PROFILE=1: a profiling queue, as worksize's (to compare like with like).
        const cl::CommandQueue queue(ctx, device, plain::env_is("PLAIN_PROFILE", "1") ? CL_QUEUE_PROFILING_ENABLE : 0);
        const cl::Program program = plain::build(ctx, device, plain::kernel_source("heat.cl"));
        cl::Kernel kernel(program, "heat_step");
        cl::Buffer t[2] = {cl::Buffer(ctx, CL_MEM_READ_WRITE, bytes), cl::Buffer(ctx, CL_MEM_READ_WRITE, bytes)};
        cl::Buffer power(ctx, CL_MEM_READ_ONLY, bytes);

        const double t_upload = plain::now();
        queue.enqueueWriteBuffer(t[0], CL_TRUE, 0, bytes, h.t.data());
        queue.enqueueWriteBuffer(power, CL_TRUE, 0, bytes, h.power.data());
        const double upload = plain::now() - t_upload;

        kernel.setArg(1, 0);  // t_origin (args 0 and 4, t and t_next, are set per step)
        kernel.setArg(2, power);
        kernel.setArg(3, 0);  // p_origin
        kernel.setArg(5, 0);  // n_origin
        kernel.setArg(6, width);
        kernel.setArg(7, height);
        kernel.setArg(8, height);  // end
        kernel.setArg(9, h.cx);
        kernel.setArg(10, h.cy);
        kernel.setArg(11, h.cp);
        const cl::NDRange global(width, height);
        const bool split = plain::env_is("PLAIN_SPLIT", "1") && height > 1, events = plain::env_is("PLAIN_EVENTS", "1");
        cl::Event ev;
        auto step = [&](int s) {  // step s reads t[s % 2] and writes the other
            kernel.setArg(0, t[s % 2]);
            kernel.setArg(4, t[1 - s % 2]);
            if (!split) {
                queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NullRange, nullptr, events ? &ev : nullptr);
                return;
            }
            queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(width, 1), cl::NullRange, nullptr,
                                       events ? &ev : nullptr);
            queue.enqueueNDRangeKernel(kernel, cl::NDRange(0, 1), cl::NDRange(width, height - 1), cl::NullRange, nullptr,
                                       events ? &ev : nullptr);
        };
        step(0);  // warm-up: writes t[1] only, which step 0 overwrites
        queue.finish();

        std::vector<float> result(cells);
        const double t0 = plain::now();
        for (int s = 0; s < steps; ++s) step(s);
        queue.enqueueReadBuffer(t[steps % 2], CL_TRUE, 0, bytes, result.data());
        const double seconds = plain::now() - t0;

        std::string status = "unverified", detail = "not verified (EXAMPLE_NOVERIFY=1)";
        if (!plain::env_is("EXAMPLE_NOVERIFY", "1")) {
            const example::Check c = example::compare(
                result, example::heat_reference(h.t, h.power, width, height, steps, h.cx, h.cy, h.cp), 1e-5);
            status = c.ok ? "verified" : "FAILED";
            detail = c.detail;
        }
        const std::string size = std::to_string(width) + "x" + std::to_string(height) + " steps=" + std::to_string(steps);
        const std::string name = plain::device_name(device);
        plain::report("heat", size, name, seconds, status);
        std::fprintf(stderr, "plain_heat %s on %s: %.6f s (%.3f ms/step), upload %.6f s; %s: %s\n", size.c_str(),
                     name.c_str(), seconds, 1e3 * seconds / steps, upload, status.c_str(), detail.c_str());
        return status == "FAILED" ? 3 : 0;
    });
}
