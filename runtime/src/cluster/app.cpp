// cluster_main(): see app.hpp.
#include "worksize/runtime/app.hpp"

#include <algorithm>
#include <charconv>
#include <iostream>
#include <sstream>
#include <string>

#include "worksize/runtime/mpi.hpp"
#include "worksize/runtime/options.hpp"
#include "worksize/scheduler/log.hpp"

namespace worksize {

namespace po = boost::program_options;

std::uint64_t App::count(std::size_t i, std::uint64_t fallback, std::uint64_t min) const {
    if (i >= args.size()) return fallback;
    const std::string& a = args[i];
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), v);
    if (a.empty() || ec != std::errc() || end != a.data() + a.size())
        throw InvalidArgument("argument " + std::to_string(i + 1) + ": '" + a + "' is not a count");
    if (v < min) throw InvalidArgument("argument " + std::to_string(i + 1) + ": " + a + " is below " + std::to_string(min));
    return v;
}

const std::string& App::option(const std::string& name) const {
    const auto it = values.find(name);
    if (it == values.end()) throw InvalidArgument("--" + name + " is not an option of this application");
    return it->second;
}

std::uint64_t App::count_option(const std::string& name, std::uint64_t min, std::uint64_t max) const {
    const std::string& text = option(name);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
        throw InvalidArgument("--" + name + " must be an integer in [" + std::to_string(min) + ", " +
                              std::to_string(max) + "], got '" + text + "'");
    return v;
}

bool App::flag(const std::string& name) const {
    const auto it = switches.find(name);
    if (it == switches.end()) throw InvalidArgument("--" + name + " is not a switch of this application");
    return it->second;
}

namespace {

/// The command line as every rank reads it (the same on all).
struct CommandLine {
    DeviceSelection selection;
    DataRunOptions options;
    std::vector<std::string> args;
    std::map<std::string, std::string> values;
    std::map<std::string, bool> switches;
    bool help = false;
    std::string help_text;
    bool kernel_timeout_given = false;
};

/// `--instructions json` as `--instructions=json` (its value is optional: Boost would take
/// `json` for a positional argument).
std::vector<std::string> joined_arguments(int argc, char** argv) {
    std::vector<std::string> out;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--instructions" && i + 1 < argc && (std::string(argv[i + 1]) == "text" || std::string(argv[i + 1]) == "json"))
            out.push_back(a + "=" + argv[++i]);
        else
            out.push_back(a);
    }
    return out;
}

po::options_description run_options(std::string& strategy, std::string& local, std::string& overlap,
                                    std::string& instructions, bool& help) {
    po::options_description d("Running a job");
    d.add_options()
        ("strategy", po::value(&strategy)->default_value("paper"), "the split: paper, even, pe-ratio or model")
        ("local", po::value(&local)->default_value("paper"),
         "the local-size policy: null (the driver's), paper (the paper's rule) or tuned (the database's entry, "
         "else the paper's rule; data jobs are not tuned yet)")
        ("overlap", po::value(&overlap)->default_value("on"), "halo exchanges beside the interior launches: on or off")
        ("instructions", po::value(&instructions)->implicit_value("text"),
         "print each rank's instruction lists for the first two steps (text or json) and stop")
        ("help,h", po::bool_switch(&help), "this help, then exit");
    return d;
}

CommandLine parse_command_line(int argc, char** argv, const std::string& name, const AppSpec& spec) {
    CommandLine c;
    std::string strategy, local, overlap, instructions;
    po::options_description own(name + "'s options");
    for (const auto& o : spec.options)
        if (o.is_switch) c.switches[o.name] = false;
    for (const auto& o : spec.options) {
        if (o.is_switch)
            own.add_options()(o.name.c_str(), po::bool_switch(&c.switches[o.name]), o.help.c_str());
        else
            own.add_options()(o.name.c_str(), po::value(&c.values[o.name])->default_value(o.fallback), o.help.c_str());
    }
    po::options_description hidden;
    hidden.add_options()("args", po::value(&c.args));
    po::options_description visible;
    if (!spec.options.empty()) visible.add(own);
    visible.add(run_options(strategy, local, overlap, instructions, c.help))
        .add(options::selection_options(c.selection));
    po::options_description all;
    all.add(visible).add(hidden);
    po::positional_options_description pos;
    pos.add("args", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(joined_arguments(argc, argv))
                      .options(all)
                      .positional(pos)
                      .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                      .run(),
                  vm);  // whole option names only (no guessing from a prefix)
        po::notify(vm);
    } catch (const po::error& e) {
        throw InvalidArgument(e.what());
    }
    std::ostringstream h;
    h << "usage: mpiexec -n RANKS " << name << " [options]" << (spec.usage.empty() ? "" : " " + spec.usage) << "\n"
      << visible;
    c.help_text = h.str();
    c.options.strategy = strategy;
    c.options.check_bounds = c.selection.check_bounds;
    if (local == "null") c.options.local = LocalPolicy::null;
    else if (local == "paper") c.options.local = LocalPolicy::paper;
    else if (local == "tuned") c.options.local = LocalPolicy::tuned;
    else throw InvalidArgument("--local takes null, paper or tuned, not '" + local + "'");
    if (overlap != "on" && overlap != "off") throw InvalidArgument("--overlap takes on or off, not '" + overlap + "'");
    c.options.overlap = overlap == "on";
    if (vm.count("instructions")) {
        if (instructions != "text" && instructions != "json")
            throw InvalidArgument("--instructions takes text or json, not '" + instructions + "'");
        c.options.instructions = instructions;
    }
    c.kernel_timeout_given = !vm["kernel-timeout"].defaulted();
    return c;
}

}  // namespace

int cluster_main(int argc, char** argv, const std::string& name, const std::function<int(App&)>& body) {
    return cluster_main(argc, argv, name, AppSpec{}, body);
}

int cluster_main(int argc, char** argv, const std::string& name, const AppSpec& spec,
                 const std::function<int(App&)>& body) {
    mpi::Environment env(argc, argv);
    CommandLine line;
    std::string bad;
    try {
        line = parse_command_line(argc, argv, name, spec);
        if (const auto level = log::level_from_env()) log::set_level(*level);
    } catch (const std::exception& e) {
        bad = e.what();
    }
    if (!bad.empty()) {
        if (env.rank() == 0) std::cerr << name << ": error: " << bad << '\n';
        return 2;
    }
    if (line.help) {
        if (env.rank() == 0) std::cout << line.help_text;
        return 0;
    }
    try {
        Cluster cluster(env, line.selection);
        if (!cluster.is_master()) return cluster.serve();
        int code = 1;
        try {
            App app{cluster, line.args, line.options, line.values, line.switches};
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
