#include "worksize/scheduler/format.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

namespace worksize {

std::string format_seconds(double s, int precision) {
    std::ostringstream o;
    o.precision(precision);
    o << s << " s";
    return o.str();
}

bool valid_utf8(const std::string& text) {
    try {
        (void)nlohmann::json(text).dump();
        return true;
    } catch (const nlohmann::json::type_error&) {
        return false;
    }
}

std::string printable(const std::string& text) {
    const std::string quoted = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return quoted.substr(1, quoted.size() - 2);
}

}  // namespace worksize
