// Local work-size autotuning (placeholder until the tuner lands: keeps the paper's rule).
#include "worksize/runtime/autotune.hpp"

namespace worksize {

void apply_tuned_locals(Plan& plan, const std::vector<DeviceInfo>& devices, const KernelJob& job,
                        const std::string& db_path) {
    (void)devices;
    (void)job;
    (void)db_path;
    for (auto& a : plan.assignments)
        if (a.units > 0 && a.local_rule.rfind("paper (no tuned entry)", 0) != 0)
            a.local_rule = "paper (no tuned entry): " + a.local_rule;
}

}  // namespace worksize
