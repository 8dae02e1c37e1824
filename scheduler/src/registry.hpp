// Internal: a registry of named things (split strategies, local-size policies): kept in registration
// order, looked up by name (or by one of the item's aliases() where it has them), a
// registration of a known name replacing the item. Not thread-safe: registries are filled at
// start-up.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

namespace worksize {

template <class T>
class NamedRegistry {
public:
    /// `what` names the kind in errors: "unknown <what> 'x' (valid: a, b)".
    explicit NamedRegistry(std::string what) : what_(std::move(what)) {}

    /// Adds `item`, or replaces the registered item of the same name (keeping its place).
    void add(std::unique_ptr<T> item) {
        for (auto& i : items_)
            if (i->name() == item->name()) {
                i = std::move(item);
                return;
            }
        items_.push_back(std::move(item));
    }

    /// @throws InvalidArgument naming `name` and the valid names.
    const T& find(const std::string& name) const {
        for (const auto& i : items_) {
            if (i->name() == name) return *i;
            if constexpr (requires(const T& t) { t.aliases(); })
                for (const auto& a : i->aliases())
                    if (a == name) return *i;
        }
        throw InvalidArgument("unknown " + what_ + " '" + name + "' (valid: " + names_text() + ")");
    }

    std::vector<const T*> items() const {
        std::vector<const T*> out;
        for (const auto& i : items_) out.push_back(i.get());
        return out;
    }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& i : items_) out.push_back(i->name());
        return out;
    }
    /// "a, b, c"
    std::string names_text() const {
        std::string out;
        for (const auto& i : items_) out += (out.empty() ? "" : ", ") + i->name();
        return out;
    }

private:
    std::string what_;
    std::vector<std::unique_ptr<T>> items_;
};

}  // namespace worksize
