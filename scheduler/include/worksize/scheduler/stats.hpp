// Small statistics for measurement reports (bench's spread and paired comparison). Pure C++.
#pragma once

#include <vector>

namespace worksize {

/// Quantile q in [0, 1] of `sorted` (ascending), linear interpolation between neighbours; 0 for
/// an empty vector. @throws InvalidArgument if q is outside [0, 1] or not finite.
double quantile(const std::vector<double>& sorted, double q);

/// Two-sided sign test: the probability of a split of paired comparisons at least as uneven as
/// `wins` against `losses` (ties left out) if each side were equally likely to win every pair.
/// 1 when there are no pairs. @throws InvalidArgument for negative counts.
double sign_test_p(int wins, int losses);

}  // namespace worksize
