// cluster_main(): see app.hpp.
#include "worksize/runtime/app.hpp"

#include <iostream>
#include <string>

#include "worksize/runtime/mpi.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize {

std::uint64_t App::count(std::size_t i, std::uint64_t fallback, std::uint64_t min) const {
    if (i >= args.size()) return fallback;
    const std::string& a = args[i];
    std::uint64_t v = 0;
    try {
        if (a.empty() || a.find_first_not_of("0123456789") != std::string::npos) throw std::invalid_argument(a);
        v = std::stoull(a);
    } catch (const std::exception&) {
        throw InvalidArgument("argument " + std::to_string(i + 1) + ": '" + a + "' is not a count");
    }
    if (v < min) throw InvalidArgument("argument " + std::to_string(i + 1) + ": " + a + " is below " + std::to_string(min));
    return v;
}

namespace {

/// `text` as --rank-timeout's seconds, in (0, 3600] like the command line's option.
bool rank_timeout(const std::string& text, double& seconds) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        return false;
    }
    if (used != text.size() || !(v > 0 && v <= 3600)) return false;
    seconds = v;
    return true;
}

}  // namespace

int cluster_main(int argc, char** argv, const std::string& name, const std::function<int(App&)>& body) {
    mpi::Environment env(argc, argv);
    DeviceSelection selection;
    DataRunOptions options;
    std::vector<std::string> args;
    std::string bad;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                bad = a + " needs a value";
                return {};
            }
            return argv[++i];
        };
        if (a == "--select")
            selection.spec = value();
        else if (a == "--rank-timeout") {
            const std::string v = value();
            if (!rank_timeout(v, selection.rank_timeout_s) && bad.empty())
                bad = "--rank-timeout takes seconds in (0, 3600], not '" + v + "'";
        } else if (a == "--allow-shared-device")
            selection.shared = DeviceSelection::Shared::count_once;
        else if (a == "--strategy")
            options.strategy = value();
        else if (a == "--local") {
            const std::string v = value();
            if (v == "null")
                options.local = LocalPolicy::null;
            else if (v == "paper")
                options.local = LocalPolicy::paper;
            else if (bad.empty())
                bad = "--local takes null or paper, not '" + v + "'";
        } else if (a == "--overlap") {
            const std::string v = value();
            if (v == "on" || v == "off")
                options.overlap = v == "on";
            else if (bad.empty())
                bad = "--overlap takes on or off, not '" + v + "'";
        } else if (a == "--instructions") {
            options.instructions = "text";
            if (i + 1 < argc && (std::string(argv[i + 1]) == "text" || std::string(argv[i + 1]) == "json"))
                options.instructions = argv[++i];
        } else if (a.rfind("--", 0) == 0 && bad.empty())
            bad = "unknown option '" + a +
                  "' (--select, --allow-shared-device, --strategy, --local, --rank-timeout, --overlap, --instructions)";
        else
            args.push_back(a);
    }
    try {
        if (const auto level = log::level_from_env()) log::set_level(*level);
    } catch (const std::exception& e) {
        if (bad.empty()) bad = e.what();
    }
    if (!bad.empty()) {
        if (env.rank() == 0) std::cerr << name << ": error: " << bad << '\n';
        return 2;
    }
    try {
        Cluster cluster(env, selection);
        if (!cluster.is_master()) return cluster.serve();
        int code = 1;
        try {
            App app{cluster, args, options};
            code = body(app);
        } catch (const DryRunDone&) {
            code = 0;
        } catch (const std::exception& e) {
            // The workers exit with rank 0's code: mpiexec ORs the ranks' codes (2 | 1 would be 3).
            cluster.finish(dynamic_cast<const InvalidArgument*>(&e) ? 2 : 1);
            throw;
        } catch (...) {
            cluster.finish(1);
            throw;
        }
        cluster.finish(code);
        return code;
    } catch (const JobAborted&) {
        return 1;
    } catch (const std::exception& e) {
        std::cerr << name;
        if (env.rank() != 0) std::cerr << "[rank " << env.rank() << "]";
        std::cerr << ": error: " << e.what() << '\n';
        const bool bad_input = dynamic_cast<const InvalidArgument*>(&e) != nullptr;
        if (env.rank() != 0) env.abort(1);
        // A rank is lost (it stopped answering): MPI_Finalize would wait for it forever.
        if (mpi::lost_peer()) env.end_after_loss(1);
        return bad_input ? 2 : 1;
    }
}

}  // namespace worksize
