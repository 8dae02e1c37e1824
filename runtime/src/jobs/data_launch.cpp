// A data job's launches (Execution::launch, the engine's Target hook): the kernel's geometry for
// the instruction's part of its slice, its records refilled and arguments bound, and an event
// only where one is needed.
#include "jobs/data_execution.hpp"

namespace worksize::data_exec {

void Execution::launch(const Instruction& in, const std::vector<cl::Event>& wait, cl::Event* done) {
    if (failed_) return;
    const std::size_t k = std::size_t(in.kernel);
    const KernelDecl& kd = spec_.kernels[k];
    SliceState& s = at(in.slice);
    try {
        auto& kernel = s.kernels[k];
        const std::uint64_t ghost = ghost_rows(spec_, step_);
        const Geometry g =
            in.part == LaunchPart::whole && ghost == 0 ? s.geometry[k]
            : data::geometry(spec_, kd, in.part == LaunchPart::whole ? s.desc.offset : in.first,
                             in.part == LaunchPart::whole ? s.desc.units : in.rows,
                             data::launch_local(kd, s.desc.local, kernel, s.ctx->device()), ghost);
        auto& q = s.ctx->queue();
        // Per-item records are refilled before every launch; per-group ones, and a
        // slice-relative kernel's (it writes all of its own rows' records), before the
        // kernel's first launch only (every group writes its record each launch), as
        // execute_declared does.
        for (std::size_t i = 0; i < kd.args.size(); ++i)
            if (kd.args[i].kind == ArgKind::reduce &&
                ((!kd.args[i].per_group && !kd.slice_relative) || s.records_filled.insert({k, i}).second))
                data::fill_identity(q, s.records.at({k, i}), spec_.buffers[std::size_t(kd.args[i].buffer)],
                                    kd.args[i].op, data::record_count(kd.args[i], g));
        data::bind_args(
            kernel, kd, s.bufs, [&](std::size_t i) -> const cl::Buffer& { return s.records.at({k, i}); }, g,
            s.desc.offset, halo_, &s.bound[k], &s.origins,
            ExprScope{std::int64_t(step_), std::int64_t(spec_.steps), 0, 0, std::int64_t(spec_.units), nullptr},
            &values_);
        // Events only where needed: the run's first and last launch (the device's span between
        // them is the report's kernel time), the timed steps, and those the engine waits on.
        const bool first = step_ == 0 && !s.first();
        const bool last = step_ + 1 == spec_.steps;
        const bool timed = time_launches_ && step_ > 0;
        const bool traced = !timeline_path_.empty();
        const double enqueued = traced ? now_s() : 0.0;
        cl::Event ev;
        q.enqueueNDRangeKernel(kernel, g.offset, g.global, g.local, wait.empty() ? nullptr : &wait,
                               first || last || timed || done || traced ? &ev : nullptr);
        if (traced) s.timeline.push_back({step_, kd.name, enqueued, ev});
        s.last_kernel = kd.name;
        if (first) s.first = ev;
        if (last) s.last = ev;
        if (timed) s.timed.emplace_back(step_, ev);
        if (done) *done = ev;
        if (!s.guards.empty()) check_guards(s, kd);
    } catch (const cl::Error& e) {
        fail(e, "kernel '" + kd.name + "' on device '" + s.ctx->info().name + "'");
    } catch (const std::exception& e) {
        fail(e);  // an argument's value (an expression beyond its type)
    }
}

}  // namespace worksize::data_exec
