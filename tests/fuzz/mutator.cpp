// The driver's mutations (mutator.hpp): byte edits, JSON tokens swapped for awkward ones, and
// edits of the JSON tree, drawn from a seeded generator so that a run can be repeated.
#include "mutator.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <random>

#include <nlohmann/json.hpp>

#include "json_depth.hpp"  // scheduler/src

namespace worksize::fuzz {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxInput = 1 << 20;

const std::vector<std::string> kNumbers = {
    "0", "-0", "1", "-1", "2", "3", "7", "8", "0.5", "-0.5", "1.5", "0.1", "1e-320", "1e308", "-1e308",
    "1e400", "-1e400", "1e-400", "255", "256", "1023", "1024", "1025", "65535", "65536", "1000003",
    "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
    "9007199254740993", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1e19", "1e20",
    "123456789012345678901234567890", "1E2", "1.0", "-1.0e+2", "2.5e-3"};

/// Not JSON: what a careless hand writes for a number.
const std::vector<std::string> kBadNumbers = {"NaN", "nan", "Infinity", "-Infinity", "inf", "0x10", "01",
                                               "1.", ".5", "-", "+1", "1e", "1e+", "--1", "1_000"};

}  // namespace

std::vector<std::string> builtin_strings() {
    return {"", "x", "width", "height", "units", "2*width", "0*width", "-1*width", "0.5*height",
            "1e308*width", "1e400*height", "nan*units", "inf*width", "*width", "width*", " width",
            "2**width", "1e20*units", "gpu", "cpu", "accelerator", "other", "model", "tuning",
            "sum", "min", "max", "prod", "float", "double", "int", "uint", "half", "split", "shared",
            "x2^10.y2^9", "x2^-1.y2^99999999999", "x2^2147483647.y2^0", "x2^.y2^", "fnv1a64:",
            "fnv1a64:0000000000000000", "saxpy.cl", "filter5x5_tiled.cl", "../filter2d/filter2d.cl",
            "no_such_kernel.cl", ".", "_comment", "\\u0000", "\\ud800", "\\\"", "\\\\",
            std::string(3000, 'a'), "\xc3\xa9", "\xff\xfe", "random", "constant", "file", "seed"};
}

class Mutator::Impl {
public:
    Impl(std::uint64_t seed, std::vector<std::string> keys, std::vector<std::string> strings)
        : rng_(seed), keys_(std::move(keys)), strings_(std::move(strings)) {
        if (keys_.empty()) keys_.push_back("x");
    }

    std::string mutate(const std::string& base, const std::vector<std::string>& pool) {
        std::string s = base;
        const auto mode = below(100);
        if (mode < 45 && worksize::json_nesting(s) <= 256) {  // the tree edits recurse
            json j = json::parse(s, nullptr, false);
            if (!j.is_discarded()) {
                const auto n = 1 + below(3);
                for (std::uint64_t i = 0; i < n; ++i) tree_edit(j, pool);
                // (invalid UTF-8 from the word list is replaced, not thrown)
                s = j.dump(below(2) ? -1 : int(below(3)), ' ', false, json::error_handler_t::replace);
                if (below(5) == 0) byte_edit(s, pool);
                return cap(s);
            }
        }
        if (mode < 75) {
            const auto n = 1 + below(3);
            for (std::uint64_t i = 0; i < n; ++i) token_edit(s);
            if (below(4) == 0) byte_edit(s, pool);
            return cap(s);
        }
        const auto n = 1 + below(4);
        for (std::uint64_t i = 0; i < n; ++i) byte_edit(s, pool);
        return cap(s);
    }

private:
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
    template <class T>
    const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }

    static std::string cap(std::string s) {
        if (s.size() > kMaxInput) s.resize(kMaxInput);
        return s;
    }

    // -- bytes --
    void byte_edit(std::string& s, const std::vector<std::string>& pool) {
        static const char kSpecial[] = "{}[]\":,0-e.\\ \n";
        switch (below(7)) {
            case 0:  // flip a bit
                if (!s.empty()) s[below(s.size())] ^= char(1u << below(8));
                break;
            case 1:  // set a byte
                if (!s.empty())
                    s[below(s.size())] = below(2) ? kSpecial[below(sizeof kSpecial - 1)] : char(below(256));
                break;
            case 2: {  // insert bytes
                std::string ins;
                for (auto n = 1 + below(8); n > 0; --n)
                    ins += below(2) ? kSpecial[below(sizeof kSpecial - 1)] : char(below(256));
                s.insert(below(s.size() + 1), ins);
                break;
            }
            case 3:  // delete a range
                if (!s.empty()) {
                    const auto at = below(s.size());
                    s.erase(at, 1 + below(std::min<std::uint64_t>(64, s.size() - at)));
                }
                break;
            case 4:  // copy a range elsewhere
                if (!s.empty()) {
                    const auto at = below(s.size());
                    const std::string chunk = s.substr(at, 1 + below(64));
                    s.insert(below(s.size() + 1), chunk);
                }
                break;
            case 5: {  // splice: this input's head, another's tail
                const std::string& other = pick(pool);
                s = s.substr(0, below(s.size() + 1)) + other.substr(below(other.size() + 1));
                break;
            }
            default:  // insert a dictionary word
                s.insert(below(s.size() + 1), "\"" + (below(2) ? pick(keys_) : pick(strings_)) + "\"");
                break;
        }
    }

    // -- JSON tokens in the text --
    struct Span {
        std::size_t at, len;
        char kind;  // 'n' number, 's' string, 'l' literal, '{' '[' ']' '}' structure
    };

    static std::vector<Span> tokens(const std::string& s) {
        std::vector<Span> out;
        for (std::size_t i = 0; i < s.size();) {
            const char c = s[i];
            if (c == '"') {
                std::size_t j = i + 1;
                while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
                j = std::min(j + 1, s.size());
                out.push_back({i, j - i, 's'});
                i = j;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                std::size_t j = i + 1;
                while (j < s.size() && std::strchr("0123456789eE.+-", s[j]) && s[j] != '\0') ++j;
                out.push_back({i, j - i, 'n'});
                i = j;
            } else if (c == 't' || c == 'f' || c == 'n') {
                std::size_t j = i;
                while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
                out.push_back({i, j - i, 'l'});
                i = j;
            } else {
                if (std::strchr("{}[]", c) && c != '\0') out.push_back({i, 1, c});
                ++i;
            }
        }
        return out;
    }

    std::string some_number() {
        switch (below(10)) {
            case 0: return pick(kBadNumbers);
            case 1: return std::to_string(std::int64_t(rng_()));
            case 2: return std::to_string(rng_());
            default: return pick(kNumbers);
        }
    }

    std::string some_string() { return "\"" + (below(3) ? pick(strings_) : pick(keys_)) + "\""; }

    std::string some_value() {
        switch (below(9)) {
            case 0: return some_number();
            case 1: return some_string();
            case 2: return below(2) ? "true" : "false";
            case 3: return "null";
            case 4: return "[]";
            case 5: return "{}";
            case 6: return "[" + some_number() + "," + some_number() + "]";
            case 7: return "{" + some_string() + ":" + some_number() + "}";
            default: {  // nesting, now and then very deep
                const std::size_t depth = below(8) == 0 ? 1 + below(100000) : 1 + below(64);
                const bool obj = below(2);
                std::string v;
                v.reserve(depth * (obj ? 8 : 2) + 8);
                for (std::size_t i = 0; i < depth; ++i) v += obj ? "{\"k\":" : "[";
                v += some_number();
                for (std::size_t i = 0; i < depth; ++i) v += obj ? '}' : ']';
                return v;
            }
        }
    }

    void token_edit(std::string& s) {
        const auto t = tokens(s);
        if (t.empty()) {
            s.insert(below(s.size() + 1), some_value());
            return;
        }
        const Span sp = pick(t);
        std::string repl;
        switch (sp.kind) {
            case 'n': repl = below(4) ? some_number() : some_value(); break;
            case 's': repl = below(4) ? some_string() : some_value(); break;
            case 'l': repl = some_value(); break;
            default:  // a bracket: drop it, double it, or turn it into the other kind
                repl = below(3) == 0 ? "" : below(2) ? std::string(2, s[sp.at]) : std::string(1, "{}[]"[below(4)]);
                break;
        }
        s.replace(sp.at, sp.len, repl);
    }

    // -- the JSON tree --
    struct Node {
        json* value;
        json* parent;
        std::string key;
        std::size_t index;
    };

    static void collect(json& j, json* parent, const std::string& key, std::size_t index, std::vector<Node>& out) {
        out.push_back({&j, parent, key, index});
        if (out.size() > 20000) return;
        if (j.is_object())
            for (auto it = j.begin(); it != j.end(); ++it) collect(it.value(), &j, it.key(), 0, out);
        else if (j.is_array())
            for (std::size_t i = 0; i < j.size(); ++i) collect(j[i], &j, "", i, out);
    }

    json some_json() {
        switch (below(10)) {
            case 0: return nullptr;
            case 1: return below(2) == 1;
            case 2: return json::array();
            case 3: return json::object();
            case 4: return below(3) ? pick(strings_) : pick(keys_);
            case 5: return std::int64_t(rng_());
            case 6: return rng_();
            default: {
                json n = json::parse(pick(kNumbers), nullptr, false);
                return n.is_discarded() ? json(0) : n;
            }
        }
    }

    json tweak_number(const json& v) {
        const double d = v.get<double>();
        // integers wrap (in unsigned arithmetic: no overflow of our own)
        const std::uint64_t u = v.is_number_float() ? 0 : v.get<std::uint64_t>();
        switch (below(8)) {
            case 0: return v.is_number_float() ? json(-d) : json(std::int64_t(0 - u));
            case 1: return v.is_number_float() ? json(d + 1) : json(std::int64_t(u + 1));
            case 2: return v.is_number_float() ? json(d - 1) : json(std::int64_t(u - 1));
            case 3: return d * 1e6;
            case 4: return d / 3;
            case 5: return 0;
            case 6: return v.is_number_unsigned() ? json(v.get<std::uint64_t>() << below(64)) : json(d * 1e300);
            default: return d + 0.5;
        }
    }

    void tree_edit(json& root, const std::vector<std::string>& pool) {
        std::vector<Node> nodes;
        collect(root, nullptr, "", 0, nodes);
        const Node n = pick(nodes);
        switch (below(10)) {
            case 0:
                *n.value = some_json();
                break;
            case 1:
                if (n.value->is_number()) *n.value = tweak_number(*n.value);
                else *n.value = some_json();
                break;
            case 2:  // remove it
                if (n.parent && n.parent->is_object()) n.parent->erase(n.key);
                else if (n.parent && n.parent->is_array()) n.parent->erase(n.index);
                break;
            case 3:  // duplicate it beside itself
                if (n.parent && n.parent->is_array()) {
                    const json copy = *n.value;
                    n.parent->insert(n.parent->begin() + std::ptrdiff_t(below(n.parent->size() + 1)), copy);
                } else if (n.parent && n.parent->is_object()) {
                    const json copy = *n.value;
                    (*n.parent)[pick(keys_)] = copy;
                }
                break;
            case 4:  // a known key added to an object
                if (n.value->is_object()) (*n.value)[pick(keys_)] = some_json();
                else if (n.value->is_array()) n.value->push_back(some_json());
                break;
            case 5: {  // another node's value copied over this one
                const json copy = *pick(nodes).value;
                *n.value = copy;
                break;
            }
            case 6:  // wrapped
                *n.value = below(2) ? json::array({*n.value}) : json{{pick(keys_), *n.value}};
                break;
            case 7:  // emptied
                if (n.value->is_structured()) n.value->clear();
                else *n.value = some_json();
                break;
            case 8: {  // grafted from another file of the pool
                const std::string& from = pick(pool);
                if (worksize::json_nesting(from) > 256) break;
                json other = json::parse(from, nullptr, false);
                if (other.is_discarded()) break;
                std::vector<Node> theirs;
                collect(other, nullptr, "", 0, theirs);
                const json graft = *pick(theirs).value;
                *n.value = graft;
                break;
            }
            default:  // array order reversed, object key renamed
                if (n.value->is_array()) {
                    std::reverse(n.value->begin(), n.value->end());
                } else if (n.parent && n.parent->is_object()) {
                    json v = std::move(*n.value);
                    n.parent->erase(n.key);
                    (*n.parent)[pick(keys_)] = std::move(v);
                }
                break;
        }
    }

    std::mt19937_64 rng_;
    std::vector<std::string> keys_, strings_;
};

Mutator::Mutator(std::uint64_t seed, std::vector<std::string> keys, std::vector<std::string> strings)
    : impl_(std::make_unique<Impl>(seed, std::move(keys), std::move(strings))) {}

Mutator::~Mutator() = default;

std::string Mutator::mutate(const std::string& base, const std::vector<std::string>& pool) {
    return impl_->mutate(base, pool);
}

void words_of(const json& j, std::vector<std::string>& keys, std::vector<std::string>& strings) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            keys.push_back(it.key());
            words_of(it.value(), keys, strings);
        }
    } else if (j.is_array()) {
        for (const auto& v : j) words_of(v, keys, strings);
    } else if (j.is_string() && j.get<std::string>().size() <= 100) {
        strings.push_back(j.get<std::string>());
    }
}

void unique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace worksize::fuzz
