// Plain single-device OpenCL host of the srad example, as Rodinia's kernel_gpu_opencl_wrapper.c
// runs its kernels: extract; per iteration prepare, the reduce kernel's passes (each reducing
// NUMBER_THREADS sums per group, until one group is left), a blocking read of both sums, q0sqr on
// the host, srad and srad2; then compress. Times the iterations plus the read-back of the image
// (after a warm-up, excluding the upload), verifies against the CPU reference, prints one CSV line.
//   plain_srad rows cols iterations     env: PLAIN_DEVICE, PLAIN_TIMELINE, EXAMPLE_NOVERIFY=1, EXAMPLE_KERNEL_DIR
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "plain_cl.hpp"
#include "reference.hpp"

int main(int argc, char** argv) {
    return plain::main_guard("srad", "rows cols iterations", [&] {
        const int nr = plain::arg_int(argc, argv, 1, "rows"), nc = plain::arg_int(argc, argv, 2, "cols");
        const int niter = plain::arg_int(argc, argv, 3, "iterations");
        if (argc > 4) throw plain::UsageError("too many arguments");
        if (static_cast<long long>(nr) * nc > INT_MAX) throw plain::UsageError("rows*cols must fit an int");
        const float lambda = 0.5f;
        const long ne = long(nr) * nc;
        const std::vector<float> image = example::srad_image(nr, nc, 7);
        std::vector<int> in(static_cast<std::size_t>(nr)), is(static_cast<std::size_t>(nr));
        std::vector<int> je(static_cast<std::size_t>(nc)), jw(static_cast<std::size_t>(nc));
        for (int i = 0; i < nr; ++i) in[std::size_t(i)] = std::max(i - 1, 0), is[std::size_t(i)] = std::min(i + 1, nr - 1);
        for (int j = 0; j < nc; ++j) jw[std::size_t(j)] = std::max(j - 1, 0), je[std::size_t(j)] = std::min(j + 1, nc - 1);

        const cl::Device device = plain::pick_device();
        const cl::Context ctx(device);
        // PLAIN_TIMELINE=FILE: every timed launch's times, as worksize's WORKSIZE_TIMELINE.
        const char* timeline = std::getenv("PLAIN_TIMELINE");
        const bool traced = timeline && *timeline;
        const cl::CommandQueue queue(ctx, device, traced ? CL_QUEUE_PROFILING_ENABLE : 0);
        std::vector<std::pair<double, cl::Event>> launches;
        auto launch = [&](const cl::Kernel& k, const cl::NDRange& global) {
            cl::Event ev;
            const double at = plain::now();
            queue.enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(256), nullptr, traced ? &ev : nullptr);
            if (traced) launches.emplace_back(at, ev);
        };
        const cl::Program program =
            plain::build(ctx, device, plain::kernel_source("kernel_gpu_opencl.cl"), "-I " + plain::kernel_dir());
        cl::Kernel extract(program, "extract_kernel"), prepare(program, "prepare_kernel");
        cl::Kernel reduce(program, "reduce_kernel"), srad(program, "srad_kernel"), srad2(program, "srad2_kernel");
        cl::Kernel compress(program, "compress_kernel");
        const std::size_t bytes = std::size_t(ne) * sizeof(float);
        auto buffer = [&](std::size_t n) { return cl::Buffer(ctx, CL_MEM_READ_WRITE, n); };
        cl::Buffer d_i = buffer(bytes), d_in = buffer(in.size() * 4), d_is = buffer(is.size() * 4);
        cl::Buffer d_je = buffer(je.size() * 4), d_jw = buffer(jw.size() * 4);
        cl::Buffer d_dn = buffer(bytes), d_ds = buffer(bytes), d_dw = buffer(bytes), d_de = buffer(bytes), d_c = buffer(bytes);
        cl::Buffer d_sums = buffer(bytes), d_sums2 = buffer(bytes);
        queue.enqueueWriteBuffer(d_in, CL_TRUE, 0, in.size() * 4, in.data());
        queue.enqueueWriteBuffer(d_is, CL_TRUE, 0, is.size() * 4, is.data());
        queue.enqueueWriteBuffer(d_je, CL_TRUE, 0, je.size() * 4, je.data());
        queue.enqueueWriteBuffer(d_jw, CL_TRUE, 0, jw.size() * 4, jw.data());

        const std::size_t local = 256;  // main.h's NUMBER_THREADS
        const int blocks = int((ne + long(local) - 1) / long(local));
        const cl::NDRange global(std::size_t(blocks) * local), group(local);
        extract.setArg(0, ne), extract.setArg(1, d_i), compress.setArg(0, ne), compress.setArg(1, d_i);
        prepare.setArg(0, ne), prepare.setArg(1, d_i), prepare.setArg(2, d_sums), prepare.setArg(3, d_sums2);
        reduce.setArg(0, ne), reduce.setArg(3, d_sums), reduce.setArg(4, d_sums2);
        for (cl::Kernel* k : {&srad, &srad2}) {
            k->setArg(0, lambda), k->setArg(1, nr), k->setArg(2, nc), k->setArg(3, ne);
            k->setArg(4, d_in), k->setArg(5, d_is), k->setArg(6, d_je), k->setArg(7, d_jw);
            k->setArg(8, d_dn), k->setArg(9, d_ds), k->setArg(10, d_de), k->setArg(11, d_dw);
        }
        srad.setArg(13, d_c), srad.setArg(14, d_i), srad2.setArg(12, d_c), srad2.setArg(13, d_i);

        float total = 0, total2 = 0;
        auto sums = [&] {  // prepare, the reduce kernel's passes, the two sums read back
            launch(prepare, global);
            long no = ne;
            int mul = 1, work = blocks;
            while (work != 0) {
                reduce.setArg(1, no), reduce.setArg(2, mul), reduce.setArg(5, work);
                launch(reduce, cl::NDRange(std::size_t(work) * local));
                no = work;
                if (work == 1) {
                    work = 0;
                } else {
                    mul *= int(local);
                    work = (work + int(local) - 1) / int(local);
                }
            }
            queue.enqueueReadBuffer(d_sums, CL_TRUE, 0, sizeof(float), &total);
            queue.enqueueReadBuffer(d_sums2, CL_TRUE, 0, sizeof(float), &total2);
        };
        auto run = [&] {  // Rodinia's loop
            queue.enqueueNDRangeKernel(extract, cl::NullRange, global, group);
            for (int iter = 0; iter < niter; ++iter) {
                sums();
                srad.setArg(12, example::srad_q0sqr(total, total2, double(ne)));
                launch(srad, global);
                launch(srad2, global);
            }
            queue.enqueueNDRangeKernel(compress, cl::NullRange, global, group);
        };
        queue.enqueueWriteBuffer(d_i, CL_TRUE, 0, bytes, image.data());
        run();  // warm-up, then the input again
        queue.finish();
        const double t_upload = plain::now();
        queue.enqueueWriteBuffer(d_i, CL_TRUE, 0, bytes, image.data());
        const double upload_s = plain::now() - t_upload;

        std::vector<float> out(image.size());
        launches.clear();  // the timed run's only
        const double t0 = plain::now();
        run();
        queue.enqueueReadBuffer(d_i, CL_TRUE, 0, bytes, out.data());
        const double seconds = plain::now() - t0;
        if (traced) plain::write_timeline(timeline, launches, t0);

        std::string status = "unverified", detail = "not verified (EXAMPLE_NOVERIFY=1)";
        if (!plain::env_is("EXAMPLE_NOVERIFY", "1")) {
            const example::Check c = example::compare(out, example::srad_reference(image, nr, nc, niter, lambda), 1e-3);
            status = c.ok ? "verified" : "FAILED";
            detail = c.detail;
            // Where it fails, the reduction alone: on some devices (PoCL's CPU device here)
            // reduce_kernel's barriers, in loops under branches, do not sum (ORIGIN.md).
            double want = 0;
            for (float v : image) want += std::exp(v / 255);
            queue.enqueueWriteBuffer(d_i, CL_TRUE, 0, bytes, image.data());
            queue.enqueueNDRangeKernel(extract, cl::NullRange, global, group);
            sums();
            if (!c.ok && std::abs(total - want) > 1e-3 * want) {
                status = "wrong-reduce";
                detail = "Rodinia's reduce_kernel summed the extracted image to " + std::to_string(total) +
                         " on this device, not " + std::to_string(want) + "; the image then differs (" + c.detail + ")";
            }
        }
        const std::string size = std::to_string(nr) + "x" + std::to_string(nc) + " iterations=" + std::to_string(niter);
        const std::string name = plain::device_name(device);
        plain::report("srad", size, name, seconds, status);
        std::fprintf(stderr, "plain_srad %s on %s: %.6f s, upload %.6f s; %s: %s\n", size.c_str(), name.c_str(), seconds,
                     upload_s, status.c_str(), detail.c_str());
        return status == "FAILED" || status == "wrong-reduce" ? 3 : 0;
    });
}
