// The out-of-line parts of a rank's data-job Execution (data_execution.hpp): setup, the steps,
// generated inputs, the bounds checks and the reductions.
#include "jobs/data_execution.hpp"
#include "jobs/data_transfer.hpp"
#include "jobs/job_util.hpp"
#include "transport/pieces.hpp"
#include "worksize/runtime/declared_job.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>

namespace worksize::data_exec {

void Execution::setup() {
    // A thread per device when the rank drives several: each makes its buffers, generated inputs
    // and program beside the others (one after the other, the programs' builds added up).
    // WORKSIZE_SETUP_THREADS=0: one after the other (a comparison).
    std::vector<std::vector<SliceState*>> by_device;
    for (auto& s : mine_) {
        auto it = std::find_if(by_device.begin(), by_device.end(), [&](const auto& g) { return g.front()->ctx == s.ctx; });
        if (it == by_device.end()) by_device.push_back({&s});
        else it->push_back(&s);
    }
    const double t0 = now_s();
    struct Took {
        double t0, &into;
        ~Took() { into = now_s() - t0; }
    } took{t0, setup_own_s_};
    const char* v = std::getenv("WORKSIZE_SETUP_THREADS");
    const auto each = [this](const std::vector<SliceState*>& group) {
        for (SliceState* s : group)
            if (!failed_) setup_slice(*s);
    };
    if (by_device.size() < 2 || (v && std::string(v) == "0")) {
        for (const auto& g : by_device) each(g);
        return;
    }
    std::vector<std::future<void>> threads;
    for (const auto& g : by_device) threads.push_back(std::async(std::launch::async, each, std::cref(g)));
    for (auto& t : threads) t.get();  // setup_slice catches its own failures
}

void Execution::setup_slice(SliceState& s) {
    const std::string where = "device '" + (s.ctx ? s.ctx->info().name : std::string("?")) + "'";
    try {
        const double t0 = now_s();
        make_buffers(s);
        const double t1 = now_s();
        const cl::Program program =
            s.ctx->program_from_source(spec_.source, data::program_options(spec_.build_options));
        const double t2 = now_s();
        make_kernels(s, program);
        s.setup_times[0] = t1 - t0;
        s.setup_times[1] = t2 - t1;
        s.setup_times[2] = now_s() - t2;
    } catch (const cl::Error& e) {
        try {
            rethrow_cl(e, where);
        } catch (const std::exception& x) {
            fail(x);
        }
    } catch (const std::exception& e) {
        fail(e);
    }
}

void Execution::make_buffers(SliceState& s) {
    auto& ctx = *s.ctx;
    for (std::size_t b = 0; b < spec_.buffers.size(); ++b) {
        const auto& d = spec_.buffers[b];
        const std::uint64_t elems = held_elements(spec_, int(b), s.desc.units);
        // A shared buffer's tail of kRunTail bytes: what a read past its end finds.
        const std::uint64_t most = ctx.info().max_alloc_bytes, data_bytes = elems * elem_size(d.type);
        const std::uint64_t tail = data::tail_bytes(d, data_bytes, most), bytes = data_bytes + tail;
        if (most && bytes > most)
            throw Error(ErrorReason::device_limit,
                        "data job '" + spec_.name + "', buffer '" + d.name + "': " + std::to_string(bytes) +
                            " bytes on device '" + ctx.info().name +
                            "', more than its CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(most) + ")");
        s.origins.push_back(first_held_unit(spec_, int(b), s.desc.offset));
        if (check_bounds_) {  // guard zones; a shared buffer's tail first in the zone after
            s.guards.push_back(bounds::make_for(ctx, spec_, int(b), data_bytes, kRunTail));
            s.bufs.push_back(s.guards.back().view);
        } else {
            s.bufs.emplace_back(ctx.context(), CL_MEM_READ_WRITE, bytes);
            if (tail) data::write_tail(ctx.queue(), s.bufs.back(), data_bytes, tail, kRunTail);
        }
        if (!d.generator.empty())
            generate(s, int(b));
        else if (!d.input)
            data::initial_fill(ctx.queue(), s.bufs.back(), d, elems * elem_size(d.type));
    }
}

void Execution::make_kernels(SliceState& s, const cl::Program& program) {
    auto& ctx = *s.ctx;
    for (std::size_t k = 0; k < spec_.kernels.size(); ++k) {
        const auto& kd = spec_.kernels[k];
        s.kernels.push_back(data::make_kernel(program, kd));
        s.bound.emplace_back();
        s.geometry.push_back(data::geometry(spec_, kd, s.desc.offset, s.desc.units,
                                            data::launch_local(kd, s.desc.local, s.kernels.back(), ctx.device())));
        data::check_required_local(kd, s.geometry.back(), s.kernels.back(), ctx.device());
        // One record per launched item, or per work-group (no ghost zones with reductions:
        // every step launches this geometry).
        for (std::size_t i = 0; i < kd.args.size(); ++i)
            if (kd.args[i].kind == ArgKind::reduce) {
                const auto& d = spec_.buffers[std::size_t(kd.args[i].buffer)];
                const std::uint64_t bytes =
                    data::record_count(kd.args[i], s.geometry.back()) * d.count * elem_size(d.type);
                s.records.emplace(std::pair{k, i},
                                  cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, std::max<std::uint64_t>(bytes, 1)));
            }
    }
}

void Execution::generate(SliceState& s, int b) {
    const BufferDecl& d = spec_.buffers[std::size_t(b)];
    const Generator* g = find_generator(d.generator);
    if (!g)
        throw InvalidArgument("data job '" + spec_.name + "', buffer '" + d.name + "': no generator '" +
                              d.generator + "' on rank " + std::to_string(me_) +
                              " (register_generator() it on every rank before cluster_main())");
    if (d.layout == BufferLayout::shared) {
        Bytes* all = nullptr;
        {
            // Made once per rank, by the first device's setup thread; the others wait for it.
            std::lock_guard lock(generated_mutex_);
            all = &generated_[b];
            if (all->empty()) {
                all->resize(d.count * elem_size(d.type));
                (*g)(d.generator_args, 0, d.count, *all);
            }
        }
        upload(s, b, 0, *all);
        return;
    }
    // Made piece by piece into two pinned halves, each uploaded while the next one is made: no
    // pageable copy of the whole slice (its pages cost more to touch than to fill, and a write
    // from pageable memory is slow).
    const auto [first, n] = input_rows(spec_, b, s.desc.offset, s.desc.units);
    // Nothing between the pieces: a worker sets up in a thread beside its heartbeats, and MPI is
    // funneled (only the main thread calls it).
    Stager stage(*this, s.ctx->host_memory(), [] {});
    const std::uint64_t row = row_bytes(b), per = piece_rows(row) * kGeneratedPieces;
    for (std::uint64_t p = 0; p < n && !failed_; p += per) {
        const std::uint64_t m = std::min(per, n - p);
        (*g)(d.generator_args, first + p, m, stage.next(m * row));
        stage.upload(s, b, first + p);
    }
    stage.finish();
}

void Execution::prepare_steps() {
    // The staging slots and copy queues of the first steps' lists (both parities, and a whole
    // exchange period with ghost zones), and the gathers' pinned slots (pinning them in the
    // first gather cost k-means' 32 MiB one about 7 ms on an H100 node). Every rank makes them
    // before it says it is set up: made after the go, a worker's 48 MiB of gather slots held up
    // its first halo, and rank 0's steps took 18-27 ms longer on two H200s.
    engine::Executor& executor = this->executor();
    StepCompiler ahead(spec_, layout_, me_, program_options());
    const std::uint64_t n = std::min<std::uint64_t>(spec_.steps, 2 * std::max<std::uint64_t>(1, spec_.exchange_every) + 2);
    for (std::uint64_t step = 0; step < n; ++step) executor.prepare(ahead.compile_step(step));
    executor.prepare(ahead.compile_gather(spec_.steps, true));
}

void Execution::run_steps(const std::function<void(std::uint64_t)>& gather_point,
                          const std::function<void(std::uint64_t)>& host_point,
                          const std::function<void()>& before_finish) {
    StepCompiler compiler(spec_, layout_, me_, program_options());
    timeline_path_ = rank_file("WORKSIZE_TIMELINE", me_);
    if (!step_log_path_.empty()) step_starts_.reserve(spec_.steps);
    engine::Executor& executor = this->executor();  // its staging made by prepare_steps()
    report_.sent_per_step.assign(spec_.steps, 0);
    report_.halo_per_step.assign(spec_.steps, 0);
    report_.records_per_step.assign(spec_.steps, 0);
    const double t0 = now_s();
    double t1 = t0;
    double step_start = t0;
    for (std::uint64_t step = 0; step < spec_.steps; ++step) {
        step_ = step;
        // A worker's device waits run beside heartbeats once a step is slow (the first
        // always), or once the host has run ahead of its devices (steps enqueued that no wait
        // has seen end: the next wait lasts as long as all of them): a wait longer than
        // --rank-timeout is not taken for a lost rank. (filter2d's 100,000 steps without an
        // exchange were enqueued in a blink; the one silent wait at the end had a healthy
        // worker declared lost.)
        const double now = now_s();
        if (!step_log_path_.empty()) step_starts_.push_back(now);
        slow_ = step == 0 || now - step_start > 0.1 || step > waited_steps_;
        step_start = now;
        comm_.pulse();  // a worker's heartbeat when one is due; rank 0 hears the workers
        if (beats_ && step == (spec_.steps > 1 ? 1u : 0u)) fault::hang_data(fault_, "steps");
        if (step == 1 && time_launches_) {
            finish_queues();  // the first step's launches end before the timed steps start
            t1 = now_s();
        }
        // The step's instructions (StepCompiler: launches, halo rows read back, sent,
        // received and written, reductions), run by the executor. With ghost zones, halos
        // move only every exchange_every steps (k times as deep), and the launches in
        // between cover the rows the next steps will read.
        executor.run(compiler.compile_step(step));
        after_step(executor, step, gather_point, host_point);
    }
    executor.drain();
    mark("drained");
    if (before_finish && !failed_) before_finish();
    mark("final reads enqueued");
    finish_queues();
    mark("queues finished");
    // The steps end where the last launches end: rank 0's own final reads behind them are the
    // gather's (the run's gather_s), as a worker's sends are.
    const double end = now_s() - final_reads_tail();
    report_.steps_s = end - t0;
    write_timeline(t0);
    write_step_log(t0, end);
    if (time_launches_ && spec_.steps > 1) report_.timed_steps_s = end - t1;
    report_device_times();
}

void Execution::after_step(engine::Executor& executor, std::uint64_t step,
                           const std::function<void(std::uint64_t)>& gather_point,
                           const std::function<void(std::uint64_t)>& host_point) {
    if (beats_ && fault_.slow_s > 0 && !mine_.empty())
        wait_devices([&] { std::this_thread::sleep_for(std::chrono::duration<double>(fault_.slow_s)); });
    for (auto& s : mine_)
        for (const auto& [a, b] : spec_.swaps) std::swap(s.bufs[std::size_t(a)], s.bufs[std::size_t(b)]);
    for (auto& s : mine_)
        if (!s.guards.empty())
            for (const auto& [a, b] : spec_.swaps) std::swap(s.guards[std::size_t(a)], s.guards[std::size_t(b)]);
    if (spec_.gather_every && (step + 1) % spec_.gather_every == 0 && step + 1 < spec_.steps) {
        executor.drain();
        gather_point(step + 1);
    }
    if (spec_.host_every && (step + 1) % spec_.host_every == 0 && host_point) {
        executor.drain();
        host_point(step + 1);
    }
}

void Execution::report_device_times() {
    for (const auto& s : mine_) {
        if (failed_ || !s.first() || !s.last()) continue;
        try {
            report_.kernel_s += double(s.last.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                       s.first.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
                                1e-9;
        } catch (const cl::Error&) {
        }
    }
    if (!time_launches_) return;
    // Per device: its launches' time in each timed step; the median step (robust to a
    // step that another process's burst slowed down).
    for (const auto& s : mine_) {
        std::vector<double> steps;
        if (!failed_) try {
                for (std::size_t i = 0; i < s.timed.size(); ++i) {
                    if (i == 0 || s.timed[i].first != s.timed[i - 1].first) steps.push_back(0.0);
                    const cl::Event& ev = s.timed[i].second;
                    steps.back() += double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                           ev.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
                                    1e-9;
                }
            } catch (const cl::Error&) {
                steps.clear();
            }
        double median = 0;
        if (!steps.empty()) {
            std::sort(steps.begin(), steps.end());
            median = steps.size() % 2 ? steps[steps.size() / 2]
                                      : (steps[steps.size() / 2 - 1] + steps[steps.size() / 2]) / 2;
        }
        report_.launch_s.push_back(median);
        report_.reduce_s.push_back(spec_.steps > 1 ? s.reduce_s / double(spec_.steps - 1) : 0.0);
    }
}

/// WORKSIZE_TIMELINE=FILE (a diagnosis of gaps between launches): one CSV row per launch of the
/// run, appended to FILE (rank 0) or FILE.rankN: its slice, step and kernel, the host's time of
/// its enqueue (µs from the first step) and the device's queued, submit, start and end times (µs
/// from the slice's first launch queued). A write that fails is reported on stderr, not fatal.
void Execution::write_timeline(double t0) const {
    if (timeline_path_.empty() || failed_) return;
    std::FILE* f = std::fopen(timeline_path_.c_str(), "a");
    if (!f) {
        std::fprintf(stderr, "worksize: warning: cannot write the timeline to '%s'\n",
                     timeline_path_.c_str());
        return;
    }
    try {
        std::fprintf(f, "rank,slice,device,step,kernel,host_us,queued_us,submit_us,start_us,end_us\n");
        for (const auto& s : mine_) {
            if (s.timeline.empty()) continue;
            const double base = double(s.timeline.front().ev.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>());
            for (const auto& l : s.timeline) {
                const auto at = [&](cl_profiling_info what) {
                    cl_ulong v = 0;
                    l.ev.getProfilingInfo(what, &v);
                    return (double(v) - base) * 1e-3;
                };
                std::fprintf(f, "%d,%zu,\"%s\",%llu,%s,%.3f,%.3f,%.3f,%.3f,%.3f\n", me_, std::size_t(s.index),
                             s.ctx->info().name.c_str(), static_cast<unsigned long long>(l.step),
                             l.what.c_str(), (l.host_s - t0) * 1e6,
                             at(CL_PROFILING_COMMAND_QUEUED), at(CL_PROFILING_COMMAND_SUBMIT),
                             at(CL_PROFILING_COMMAND_START), at(CL_PROFILING_COMMAND_END));
            }
        }
        for (const auto& [what, at] : marks_)
            std::fprintf(f, "%d,,,%llu,mark:%s,%.3f,,,,\n", me_, static_cast<unsigned long long>(step_), what.c_str(),
                         (at - t0) * 1e6);
    } catch (const cl::Error& e) {
        std::fprintf(stderr, "worksize: warning: the timeline's profiling times: %s\n", e.what());
    }
    if (std::fclose(f) != 0)
        std::fprintf(stderr, "worksize: warning: cannot write the timeline to '%s'\n",
                     timeline_path_.c_str());
}

/// WORKSIZE_STEP_LOG=FILE (where a whole run's steps go, without the timeline's events): one
/// CSV row per step appended to FILE (rank 0) or FILE.rankN: the host's moment at its start (µs
/// from the first step's) and how long the host took until the next step's (or the steps' end).
/// A write that fails is reported on stderr, not fatal.
void Execution::write_step_log(double t0, double end) const {
    if (step_log_path_.empty() || failed_) return;
    std::FILE* f = std::fopen(step_log_path_.c_str(), "a");
    bool ok = f != nullptr;
    if (f) {
        std::fprintf(f, "# setup of rank %d: %.3f ms, of which the slices' buffers, programs and kernels %.3f ms (the rest: inputs, messages)\n",
                     me_, 1e3 * report_.setup_s, 1e3 * setup_own_s_);
        for (const auto& s : mine_)
            std::fprintf(f, "# setup of rank %d's slice %zu on '%s': buffers and generated inputs %.3f ms, program %.3f ms, "
                         "kernels %.3f ms, rank 0's writes of its inputs %.3f ms\n",
                         me_, s.index, s.ctx->info().name.c_str(), 1e3 * s.setup_times[0], 1e3 * s.setup_times[1],
                         1e3 * s.setup_times[2], 1e3 * s.setup_times[3]);
        for (const auto& s : mine_)
            for (const auto& w : s.write_notes) std::fprintf(f, "# rank %d's slice %zu: %s\n", me_, s.index, w.c_str());
        std::fprintf(f, "rank,step,start_us,host_us\n");
        for (std::size_t i = 0; i < step_starts_.size(); ++i) {
            const double next = i + 1 < step_starts_.size() ? step_starts_[i + 1] : end;
            std::fprintf(f, "%d,%zu,%.3f,%.3f\n", me_, i, (step_starts_[i] - t0) * 1e6, (next - step_starts_[i]) * 1e6);
        }
        ok = std::fclose(f) == 0;
    }
    if (!ok) std::fprintf(stderr, "worksize: warning: cannot write the step log to '%s'\n", step_log_path_.c_str());
}

/// Halo traffic in the timeline: reads and writes beside the launches of their slice
/// ("halo-read:<buffer>", "halo-write:<buffer>"), sends and arrivals as host moments.
void Execution::trace(const Instruction& in, const cl::Event& ev, double host_s) {
    if (ev()) {
        const std::string what = std::string(in.kind == InstrKind::read_rows ? "halo-read:" : "halo-write:") +
                                 spec_.buffers[std::size_t(in.buffer)].name;
        at(in.slice).timeline.push_back({step_, what, host_s, ev});
        return;
    }
    marks_.emplace_back((in.kind == InstrKind::send ? "sent to " : "arrived from ") + std::to_string(in.peer) + " step " +
                            std::to_string(step_),
                        host_s);
}

void Execution::join_each_device(std::vector<std::future<void>>& threads, const std::string& what) {
    const auto w = watch(mine_.front());
    for (std::size_t i = 0; i < threads.size(); ++i) {
        try {
            threads[i].get();
        } catch (const cl::Error& e) {
            if (!failed_) fail(e, "device '" + mine_[i].ctx->info().name + "', " + what);
        } catch (const std::exception& e) {
            if (!failed_) fail(e);
        }
    }
}

double Execution::final_reads_tail() const {
    double tail = -1;
    for (const auto& s : mine_) {
        if (failed_ || !s.last() || !s.final_read()) continue;
        try {
            const auto end = s.final_read.getProfilingInfo<CL_PROFILING_COMMAND_END>(),
                       last = s.last.getProfilingInfo<CL_PROFILING_COMMAND_END>();
            const double d = end > last ? double(end - last) * 1e-9 : 0.0;
            tail = tail < 0 ? d : std::min(tail, d);
        } catch (const cl::Error&) {
            return 0.0;  // a queue without profiling
        }
    }
    return std::max(tail, 0.0);
}

void Execution::download(SliceState& s, int b, std::span<std::byte> dest) {
    if (failed_) return;
    try {
        const auto& d = spec_.buffers[std::size_t(b)];
        const std::uint64_t at = d.layout == BufferLayout::split ? device_row(s, b, s.desc.offset) * row_bytes(b) : 0;
        const auto w = watch(s);
        wait_devices(
            [&] { s.ctx->queue().enqueueReadBuffer(s.bufs[std::size_t(b)], CL_TRUE, at, dest.size(), dest.data()); });
    } catch (const cl::Error& e) {
        try {
            rethrow_cl(e, "device '" + s.ctx->info().name + "', reading '" +
                              spec_.buffers[std::size_t(b)].name + "'");
        } catch (const std::exception& x) {
            fail(x);
        }
    }
}

void Execution::check_guards(SliceState& s, const KernelDecl& kd) {
    bounds::check_writes(s.ctx->queue(), spec_, kd, s.guards, " on device '" + s.ctx->info().name + "'",
                         "; a kernel that indexes whole arrays by global ids needs whole_arrays() (job "
                         "files: \"arrays\": \"whole\")");
}

std::vector<double> Execution::local_total(std::size_t k, std::size_t i) {
    const ArgDecl& a = spec_.kernels[k].args[i];
    const BufferDecl& d = spec_.buffers[std::size_t(a.buffer)];
    const std::size_t R = d.count;
    std::vector<double> total(R, data::identity(a.op));
    // This rank's slices, records in item order.
    if (!failed_) {
        guarded(
            [&] {
                // Every device's read first, then the sums: the devices' reads overlap. Each
                // device keeps its own pinned buffer (read at DMA speed); one buffer shared
                // by a rank's devices was re-pinned at each switch, twice per iteration with
                // two GPUs: k-means on one rank driving two H200s ran 0.67x one GPU.
                // Per-group records are first tree-combined on the device down to one per
                // slice (data::combine_on_device): a step reads back one record of the
                // shared buffer's size per device (k-means: k·(d+1) sums).
                std::vector<cl::Event> reads(mine_.size());
                std::vector<std::uint64_t> count(mine_.size());
                std::vector<double> combine_s(mine_.size(), 0.0);
                for (std::size_t j = 0; j < mine_.size(); ++j) {
                    auto& s = mine_[j];
                    cl::Buffer records = s.records.at({k, i});
                    const data::Geometry& g = s.geometry[k];
                    count[j] = g.relative ? g.own_items : data::record_count(a, g);
                    if (a.per_group || g.relative) {  // (a slice_relative launch: its own rows' records)
                        data::CombineCache& cache = s.combines[{k, i}];
                        cache.timed = time_launches_ && step_ >= 1;
                        data::combine_on_device(*s.ctx, records, count[j], d, a.op, combine_s[j], 1,
                                                g.relative ? g.own_first : 0, &cache);
                    }
                    if (s.host_records.get_allocator().resource() != s.ctx->staging_memory())
                        s.host_records = bytes_with(s.ctx->staging_memory());  // pinned, though small
                    s.host_records.resize(count[j] * R * elem_size(d.type));
                    if (!s.host_records.empty())
                        s.ctx->queue().enqueueReadBuffer(records, CL_FALSE, 0, s.host_records.size(),
                                                         s.host_records.data(), nullptr, &reads[j]);
                    report_.records_per_step[step_] += s.host_records.size();
                }
                const bool timed = time_launches_ && step_ >= 1;
                wait_devices([&] {
                    for (auto& s : mine_) {
                        const auto w = watch(s);
                        s.ctx->queue().finish();
                    }
                });
                for (std::size_t j = 0; j < mine_.size(); ++j) {
                    auto& s = mine_[j];
                    const double c0 = now_s();
                    data::combine_records(a.op, d.type, s.host_records.data(), count[j], total);
                    // The records' combination and read: work that grows with the slice.
                    if (timed)
                        s.reduce_s +=
                            now_s() - c0 + combine_s[j] + (reads[j]() ? event_seconds(reads[j]) : 0.0);
                }
            },
            [&] { return "reduction into '" + d.name + "'"; });
    }
    return total;
}

void Execution::reduce(std::size_t k, std::size_t i) {
    const ArgDecl& a = spec_.kernels[k].args[i];
    const BufferDecl& d = spec_.buffers[std::size_t(a.buffer)];
    const std::size_t R = d.count;
    std::vector<double> total = local_total(k, i);
    // Along the ranks in slice order: running totals go right, the grand total comes back.
    const int left = rank_left(), right = rank_right();
    const std::size_t bytes = R * sizeof(double);
    auto send = [&](int dest) {
        const std::uint64_t status = failed_ ? kStatusFailed : kStatusOk;
        std::span<const std::byte> parts[2] = {
            std::as_bytes(std::span(&status, 1)),
            failed_ ? std::span<const std::byte>() : std::as_bytes(std::span(total))};
        with_peers(dest, Comm::none, [&] { comm_.send_parts(parts, dest, kReduce); });
        if (!failed_) report_.sent_per_step[step_] += bytes;
    };
    if (left != Comm::none) {
        with_peers(Comm::none, left, [&] { comm_.recv_bytes_into(inbox_, left, kReduce); });
        if (accept(inbox_, left, bytes)) {
            std::vector<double> before(R);
            std::memcpy(before.data(), inbox_.data() + 8, bytes);
            for (std::size_t j = 0; j < R; ++j) total[j] = data::combine(a.op, before[j], total[j]);
        }
    }
    if (right != Comm::none) {
        send(right);
        with_peers(Comm::none, right, [&] { comm_.recv_bytes_into(inbox_, right, kReduce); });
        if (accept(inbox_, right, bytes)) std::memcpy(total.data(), inbox_.data() + 8, bytes);
    }
    if (left != Comm::none) send(left);
    if (failed_) return;
    Bytes& result = results_[a.buffer];
    result.resize(R * elem_size(d.type));
    for (std::size_t j = 0; j < R; ++j) data::store(result.data(), d.type, j, total[j]);
    for (auto& s : mine_) upload(s, a.buffer, 0, result, false);  // queued before the next launches
}

}  // namespace worksize::data_exec
