#include "worksize/scheduler/format.hpp"

#include <sstream>

namespace worksize {

std::string format_seconds(double s, int precision) {
    std::ostringstream o;
    o.precision(precision);
    o << s << " s";
    return o.str();
}

}  // namespace worksize
