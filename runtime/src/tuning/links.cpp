// `calibrate --links` on every rank (see links.hpp): MPI ping-pongs along link_pairs(), then
// each rank's devices' copies, one rank at a time (rank 0 gives the turns and takes each
// worker's results). A worker sends rank 0 its signs of life (wire::kAlive) while it waits and
// measures, so that rank 0's waits, patient for --rank-timeout, end only for a rank that is
// gone; a worker's own failure reaches rank 0 as its answer.
#include "worksize/runtime/links.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "cluster/cluster_impl.hpp"
#include "worksize/scheduler/log.hpp"
#include "worksize/scheduler/stats.hpp"

namespace worksize {

namespace {

double link_median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return quantile(v, 0.5);
}

/// Between two polls of an untimed wait: ranks waiting for their turn sleep, so that they leave
/// the cores to the pair being timed (ranks of one node share them).
void idle(bool timed) {
    if (!timed) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

/// Whether `peer` has been silent for the communicator's patience since `start`: a wait on it
/// then throws Error(lost_rank), whichever communicator (the in-process one polls without it).
void check_alive(Comm& comm, int peer, double start) {
    if (comm.patience() > 0 && comm.silent(peer, start, comm.patience()))
        throw Error(ErrorReason::lost_rank, "rank " + std::to_string(peer) + " answered nothing for " +
                                                format_seconds(comm.patience(), 3) + " (--rank-timeout)");
}

/// Send `data` to `peer` and wait until it has gone (MPI progressed by polling; `timed`: without
/// sleeping).
void link_send(Comm& comm, std::span<const std::byte> data, int peer, bool timed) {
    const std::size_t id = comm.isend_short(data, peer, wire::kLinks);
    std::uint64_t polls = 0;
    for (const double start = now_s(); !comm.test_send(id); idle(timed)) {
        if (timed && ++polls % 4096) continue;  // a timed wait looks at the clock seldom
        try {
            check_alive(comm, peer, start);
        } catch (...) {
            comm.abandon_send(id);
            throw;
        }
        comm.pulse();
    }
}

void link_recv(Comm& comm, std::span<std::byte> into, int peer, bool timed) {
    const std::size_t id = comm.irecv_short(peer, wire::kLinks, into);
    std::size_t got = 0;
    std::uint64_t polls = 0;
    for (const double start = now_s(); !comm.test_short(id, &got); idle(timed))
        if (!timed || ++polls % 4096 == 0) check_alive(comm, peer, start);
    if (got != into.size())
        throw Error("calibrate --links: rank " + std::to_string(peer) + " sent " + std::to_string(got) +
                    " bytes where " + std::to_string(into.size()) + " were due");
}

/// The medians of one series, for WORKSIZE_LOG_LEVEL=debug.
void log_series(const std::string& what, const std::vector<double>& bytes, const std::vector<double>& seconds) {
    if (!log::enabled(log::Level::debug)) return;
    std::ostringstream line;  // (a chain of + made GCC 12 warn of a memcpy's bound, -Wstringop-overflow)
    line << "links: " << what << " medians:";
    for (std::size_t i = 0; i < bytes.size(); ++i)
        line << ' ' << (std::uint64_t(bytes[i]) >> 10) << " KiB " << format_seconds(seconds[i], 3) << ';';
    log::debug(line.str());
}

/// The one-way time of a message between this rank and `peer` (half the round trip's median),
/// per size of the ladder; `first` sends first.
LinkFit ping_pong(Comm& comm, int peer, bool first, const LinkOptions& o, Bytes& buffer) {
    const auto sizes = link_ladder(o, o.max_bytes);
    buffer.resize(sizes.back());
    std::vector<double> bytes, seconds;
    for (const std::uint64_t n : sizes) {
        const std::span<std::byte> msg(buffer.data(), n);
        std::vector<double> t;
        for (int r = 0; r <= o.repeats; ++r) {  // the first round trip (untimed) waits for the peer
            const double t0 = now_s();
            if (first) {
                link_send(comm, msg, peer, r > 0);
                link_recv(comm, msg, peer, r > 0);
            } else {
                link_recv(comm, msg, peer, r > 0);
                link_send(comm, msg, peer, r > 0);
            }
            if (r > 0) t.push_back((now_s() - t0) / 2);
        }
        bytes.push_back(double(n));
        seconds.push_back(link_median(t));
    }
    log_series("MPI one way with rank " + std::to_string(peer), bytes, seconds);
    return fit_link(bytes, seconds);
}

/// A device's blocking copies between pinned host memory and a device buffer, per size.
DeviceLink measure_device(DeviceContext& ctx, const LinkOptions& o, const std::function<void()>& beat) {
    const DeviceInfo& d = ctx.info();
    std::uint64_t cap = o.max_bytes;
    if (d.max_alloc_bytes) cap = std::min(cap, d.max_alloc_bytes);
    if (d.global_mem_bytes) cap = std::min(cap, d.global_mem_bytes / 4);
    const auto sizes = link_ladder(o, cap);
    Bytes host = bytes_with(ctx.host_memory());
    host.resize(sizes.back());
    cl::Buffer buf(ctx.context(), CL_MEM_READ_WRITE, sizes.back());
    cl::CommandQueue& q = ctx.queue();
    q.enqueueWriteBuffer(buf, CL_TRUE, 0, sizes.back(), host.data());  // the buffer is placed
    std::vector<double> bytes, h2d, d2h;
    for (const std::uint64_t n : sizes) {
        std::vector<double> up, down;
        for (int r = 0; r <= o.repeats; ++r) {
            double t0 = now_s();
            q.enqueueWriteBuffer(buf, CL_TRUE, 0, n, host.data());
            const double t1 = now_s();
            q.enqueueReadBuffer(buf, CL_TRUE, 0, n, host.data());
            if (r > 0) {
                up.push_back(t1 - t0);
                down.push_back(now_s() - t1);
            }
        }
        bytes.push_back(double(n));
        h2d.push_back(link_median(up));
        d2h.push_back(link_median(down));
        beat();
    }
    log_series("device '" + d.name + "' host->device", bytes, h2d);
    log_series("device '" + d.name + "' device->host", bytes, d2h);
    return {fit_link(bytes, h2d), fit_link(bytes, d2h)};
}

/// Rank 0 runs `check` and tells the workers whether to go on; a failure is rethrown on rank 0
/// after that, and a worker told to stop returns false.
bool go_ahead(Comm& comm, const std::function<void()>& check, double patience_s) {
    if (comm.rank() != 0) {
        const PatienceScope patience(comm, patience_s);
        return comm.recv_json(0, wire::kLinks).at("go").get<bool>();
    }
    std::exception_ptr failed;
    try {
        if (check) check();
    } catch (...) {
        failed = std::current_exception();
    }
    for (int r = 1; r < comm.size(); ++r) comm.send_json({{"go", !failed}}, r, wire::kLinks);
    if (failed) std::rethrow_exception(failed);
    return true;
}

/// Runs `work` and, on a worker, turns its failure into this rank's answer (`mine`); rank 0
/// rethrows. A worker that failed skips the rest of its work.
void on_worker(int me, nlohmann::json& mine, const std::function<void()>& work) {
    if (me != 0 && !mine.at("ok").get<bool>()) return;
    try {
        work();
    } catch (const std::exception& e) {
        if (me == 0) throw;
        mine = {{"ok", false}};
        wire::put_failure(mine, wire::failure_of(e));
    }
}

void measure_devices(nlohmann::json& mine, std::map<int, std::unique_ptr<DeviceContext>>& contexts,
                     const LinkOptions& options, const std::function<void()>& beat) {
    for (auto& [index, ctx] : contexts)
        mine["devices"].push_back({{"index", index}, {"link", to_json(measure_device(*ctx, options, beat))}});
}

/// Rank 0: every rank's answer as links, devices indexed as in `devices`.
LinkCalibration decode_answers(const std::vector<nlohmann::json>& answers,
                               const std::vector<DeviceInfo>& devices,
                               const std::vector<std::string>& hosts) {
    LinkCalibration out;
    for (std::size_t r = 0; r < answers.size(); ++r) {
        for (const auto& j : answers[r].at("ranks")) {
            MeasuredRankLink l{
                j.at("a").get<int>(), j.at("b").get<int>(), {}, {}, link_fit_from_json(j.at("fit"))};
            l.host_a = hosts.at(std::size_t(l.a));
            l.host_b = hosts.at(std::size_t(l.b));
            out.ranks.push_back(std::move(l));
        }
        for (const auto& j : answers[r].at("devices")) {
            const int index = j.at("index").get<int>();
            const auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) {
                return d.rank == int(r) && d.index == index;
            });
            if (it != devices.end())
                out.devices.push_back({int(it - devices.begin()), device_link_from_json(j.at("link"))});
        }
    }
    std::sort(out.devices.begin(), out.devices.end(),
              [](const auto& x, const auto& y) { return x.device < y.device; });
    return out;
}

using Contexts = std::map<int, std::unique_ptr<DeviceContext>>;
/// A rank that failed or went silent: rank 0 names it lost (and rethrows); the others rethrow.
using LostFn = std::function<void(int, const Error&)>;

/// Every MPI pair this rank is in, timed by ping-pong; the pairs it leads into `mine["ranks"]`.
void measure_pairs(Comm& comm, const std::vector<std::pair<int, int>>& pairs, const LinkOptions& options,
                   nlohmann::json& mine, const LostFn& lost) {
    const int me = comm.rank();
    Bytes buffer;
    for (const auto& [a, b] : pairs) {
        if (a != me && b != me) continue;
        const int peer = a == me ? b : a;
        LinkFit fit;
        try {
            fit = ping_pong(comm, peer, a == me, options, buffer);
        } catch (const Error& e) {
            lost(peer, e);
        }
        if (a == me) mine["ranks"].push_back({{"a", a}, {"b", b}, {"fit", to_json(fit)}});
    }
}

/// A worker: its pairs' answer, then, on its turn, its devices' (a failure, once rank 0 has it,
/// ends this rank as any rank's does: JobAborted).
void worker_answers(Comm& comm, nlohmann::json& mine, Contexts& contexts, const LinkOptions& options,
                    const std::function<void()>& beat) {
    auto answer = [&] {
        comm.send_json(mine, 0, wire::kLinks);
        if (mine.at("ok").get<bool>()) return;
        const auto f = wire::failure_from_json(mine);
        throw JobAborted(f.reason, f.message);
    };
    answer();  // its pairs are done
    (void)comm.recv_json(0, wire::kLinks);  // this rank's turn
    mine = {{"ok", true}, {"devices", nlohmann::json::array()}};
    on_worker(comm.rank(), mine, [&] { measure_devices(mine, contexts, options, beat); });
    answer();
}

/// Rank 0: every worker's pairs, its own devices, then each worker's devices in turn.
std::vector<nlohmann::json> rank0_answers(Comm& comm, const nlohmann::json& mine, Contexts& contexts,
                                          const LinkOptions& options, const std::function<void()>& beat,
                                          const LostFn& lost) {
    auto answer = [&](int r) {  // each worker's answer, or its failure raised with its rank
        nlohmann::json a;
        try {
            a = comm.recv_json(r, wire::kLinks);
        } catch (const Error& e) {
            lost(r, e);
        }
        if (!a.at("ok").get<bool>()) {
            auto f = wire::failure_from_json(a);
            f.message = "rank " + std::to_string(r) + ": " + f.message;
            f.raise();
        }
        return a;
    };
    std::vector<nlohmann::json> answers{mine};
    for (int r = 1; r < comm.size(); ++r) answers.push_back(answer(r));  // every pair is done
    measure_devices(answers.front(), contexts, options, beat);
    for (int r = 1; r < comm.size(); ++r) {
        try {
            comm.send_json({{"turn", true}}, r, wire::kLinks);
        } catch (const Error& e) {
            lost(r, e);
        }
        answers[std::size_t(r)]["devices"] = answer(r).at("devices");
    }
    return answers;
}

}  // namespace

LinkCalibration Cluster::calibrate_links(const LinkOptions& options, const std::function<void()>& check) {
    Comm& comm = *impl_->comm;
    const int me = comm.rank();
    const double t0 = now_s();
    LinkCalibration out;
    if (!go_ahead(comm, check, impl_->rank_timeout_s)) return out;
    const auto pairs = link_pairs(comm.size());
    // Rank 0 waits --rank-timeout on a worker's silence; a worker waits on its partners and its
    // turn at most that per pair and rank before its own.
    const PatienceScope patience(
        comm, impl_->rank_timeout_s * (me == 0 ? 1.0 : double(pairs.size() + std::size_t(comm.size()))));
    double beat_at = now_s();
    auto beat = [&] {
        if (me == 0 || now_s() - beat_at < comm.heartbeat()) return;
        beat_at = now_s();  // first: the send's own waits call the pulse again
        comm.send_json(nlohmann::json::object(), 0, wire::kAlive);
    };
    struct PulseScope {
        Comm& comm;
        ~PulseScope() { comm.set_pulse({}); }
    } pulse{comm};
    comm.set_pulse(beat);
    // Called in the handler of `e`: `throw;` rethrows it as it was thrown.
    const LostFn lost = [&](int r, const Error& e) {
        if (me != 0 || e.reason() != ErrorReason::lost_rank) throw;
        impl_->lost.push_back(r);
        mpi::note_lost_peer();
        throw Error(ErrorReason::lost_rank, describe_rank(r) + " is lost: " + e.what());
    };
    nlohmann::json mine = {
        {"ok", true}, {"devices", nlohmann::json::array()}, {"ranks", nlohmann::json::array()}};
    // Every pair first (each worker tells rank 0 when its pairs are done), then the devices one
    // rank at a time (rank 0 gives the turns), so that nothing else runs on a node's cores
    // while a link is timed.
    on_worker(me, mine, [&] {
        if (me != 0) fault::hang_data(fault::data_fault(), "links");
        measure_pairs(comm, pairs, options, mine, lost);
    });
    if (me != 0) {
        worker_answers(comm, mine, impl_->contexts, options, beat);
        return out;
    }
    const auto answers = rank0_answers(comm, mine, impl_->contexts, options, beat, lost);
    comm.drain_alive();
    out = decode_answers(answers, impl_->devices, impl_->hosts);
    out.seconds = now_s() - t0;
    return out;
}

}  // namespace worksize
