// Command-line options that both the `worksize` CLI and applications on cluster_main() (app.hpp)
// take, with Boost.Program_options: the device selection, and checked numeric values. One
// definition, so that an application's --select, --rank-timeout or --devices-per-rank mean what
// the CLI's do.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "worksize/runtime/device_selection.hpp"

namespace worksize::options {

namespace po = boost::program_options;

/// Checked numeric options. Boost would read "-5" into an unsigned as 18446744073709551611 and
/// "nan" into a double; these take the option's text instead and, in po::notify, store it in
/// `target` only if it is a number of the target's type in the given range, else throw
/// InvalidArgument with one line naming the option, the range and the text. Integers take
/// digits only (no sign, no fraction); reals must be finite. The default is *target, shown as
/// the shortest text that reads back as it (never "0.20000000000000001").
po::typed_value<std::string>* count_value(const std::string& option, std::uint64_t* target, std::uint64_t min = 0,
                                          std::uint64_t max = UINT64_MAX);
po::typed_value<std::string>* count_value(const std::string& option, int* target, int min = 0, int max = INT32_MAX);
/// Which ends of a real option's range are open: (lo, hi], [lo, hi), ...
enum class Open { none, low, high, both };
po::typed_value<std::string>* real_value(const std::string& option, double* target, double lo, double hi,
                                         Open open = Open::none);
/// An optional real (no default): set only when given.
po::typed_value<std::string>* real_value(const std::string& option, std::optional<double>* target, double lo,
                                         double hi, Open open = Open::none);
/// The text a default double is shown with: the shortest that reads back as `v`.
std::string default_text(double v);

/// Options selecting devices (--select, --filter, --master-works, --devices-per-rank,
/// --allow-shared-device, --rank-timeout) into `sel`.
po::options_description selection_options(DeviceSelection& sel, const char* default_select = "auto");

}  // namespace worksize::options
