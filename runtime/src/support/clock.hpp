// The one clock of the runtime's timings and deadlines: seconds of the steady clock.
#pragma once

#include <chrono>

namespace worksize {

inline double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace worksize
