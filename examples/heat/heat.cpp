// Heat diffusion on worksize: a 5-point stencil iterated over time steps. The temperature stays
// on the devices for the whole run; between steps each slice swaps one halo row with each
// neighbour (directly, not through rank 0); rank 0 gathers the result at the end and checks it
// against the CPU reference.   mpiexec -n 3 worksize_example_heat [width] [height] [steps] [k]
// With k > 1 the halos move every k steps, k rows deep (ghost zones), the rows between computed twice.
// --host pageable holds the arrays in a std::vector's memory instead of pinned memory.
#include <algorithm>
#include <iostream>
#include <vector>

#include "reference.hpp"
#include "worksize/runtime/app.hpp"

using namespace worksize;

int main(int argc, char** argv) {
    const AppSpec spec{"[width] [height] [steps] [k]",
                       {{"host", "the arrays in pinned memory (Cluster::host_vector: onto the devices in one write, "
                                 "the gather straight into it) or pageable (a std::vector's)",
                         "pinned"}}};
    return cluster_main(argc, argv, "heat", spec, [](App& app) {
        const auto width = app.count(0, 512), height = app.count(1, 512), steps = app.count(2, 200);
        const auto every = app.count(3, 1);  // ghost zones: halos every k steps, k rows deep
        const std::string host = app.option("host");
        if (host != "pinned" && host != "pageable")
            throw InvalidArgument("--host must be pinned or pageable, not '" + host + "'");
        const auto in = example::heat_inputs(int(width), int(height), 7);
        HostVector<float> temp, power;
        if (host == "pinned") {
            temp = app.cluster.host_vector<float>(in.t.size());
            power = app.cluster.host_vector<float>(in.power.size());
        } else {
            temp.resize(in.t.size());
            power.resize(in.power.size());
        }
        std::copy(in.t.begin(), in.t.end(), temp.begin());
        std::copy(in.power.begin(), in.power.end(), power.begin());

        DataJob job("heat", read_text_file(example::kernel_path(EXAMPLE_DIR, "heat.cl")), {width, height}, 2);
        const auto t = job.split("t", width, temp), next = job.split<float>("next", width);
        const auto p = job.split("power", width, power);
        job.kernel("heat_step", {arg::halo(t, 1), arg::origin(t), arg::in(p), arg::origin(p), arg::out(next),
                                 arg::origin(next), arg::value<int>(width), arg::value<int>(height), arg::end(),
                                 arg::value(in.cx), arg::value(in.cy), arg::value(in.cp)});
        job.swap(t, next).steps(steps).exchange_every(every).gather(t).ops_per_unit(12.0 * double(width));

        run(app.cluster, job, app.options);  // warm-up: programs built, launches compiled
        std::copy(in.t.begin(), in.t.end(), temp.begin());
        const DataRunResult r = run(app.cluster, job, app.options);
        std::cout << format_report(r, app.cluster.devices());

        const auto check = example::skip_verify() ? example::Check{true, "not verified (EXAMPLE_NOVERIFY=1)"}
                           : example::compare(std::vector<float>(temp.begin(), temp.end()), example::heat_reference(in.t, in.power, int(width), int(height),
                                                                            int(steps), in.cx, in.cy, in.cp), 1e-5);
        std::cout << "worksize,heat," << width << 'x' << height << 'x' << steps << ',' << r.ranks.size() << " ranks,"
                  << r.run_s << ',' << (!check.ok ? "FAILED" : example::skip_verify() ? "unverified" : "verified") << '\n'
                  << check.detail << '\n';
        return check.ok ? 0 : 3;
    });
}
