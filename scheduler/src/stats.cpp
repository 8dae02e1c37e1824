// Statistics for measurement reports (see stats.hpp).
#include "worksize/scheduler/stats.hpp"

#include <algorithm>
#include <cmath>

#include "worksize/scheduler/types.hpp"

namespace worksize {

double quantile(const std::vector<double>& sorted, double q) {
    if (!(q >= 0.0 && q <= 1.0)) throw InvalidArgument("quantile: q must be in [0, 1]");
    if (sorted.empty()) return 0.0;
    const double pos = q * double(sorted.size() - 1);
    const auto lo = std::size_t(pos);
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

double sign_test_p(int wins, int losses) {
    if (wins < 0 || losses < 0) throw InvalidArgument("sign test: negative counts");
    const int n = wins + losses;
    if (n == 0) return 1.0;
    // 2 * P(X <= min(wins, losses)) for X ~ Binomial(n, 1/2), summed in logs for large n.
    const int k = std::min(wins, losses);
    double tail = 0.0;
    for (int i = 0; i <= k; ++i)
        tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
    return std::min(1.0, 2.0 * tail);
}

}  // namespace worksize
