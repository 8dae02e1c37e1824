// The .npy header (npy.hpp).
#include "worksize/scheduler/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "worksize/scheduler/data_spec.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

namespace {

/// A reader of the header's Python literal: a dict of 'descr' (a string), 'fortran_order'
/// (True/False) and 'shape' (a tuple of integers), as NumPy writes it.
class Literal {
public:
    explicit Literal(std::string_view text) : t_(text) {}

    void skip_space() {
        while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
    }
    bool take(char c) {
        skip_space();
        if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
        return false;
    }
    void expect(char c, const std::string& where) {
        if (!take(c)) fail(std::string("expected '") + c + "' " + where);
    }
    std::string string(const char* what) {
        skip_space();
        if (i_ >= t_.size() || (t_[i_] != '\'' && t_[i_] != '"')) fail(std::string("expected a quoted ") + what);
        const char q = t_[i_++];
        const std::size_t end = t_.find(q, i_);
        if (end == std::string_view::npos) fail(std::string("unterminated ") + what);
        std::string s(t_.substr(i_, end - i_));
        i_ = end + 1;
        return s;
    }
    bool boolean() {
        skip_space();
        for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
            const std::string_view w(word);
            if (t_.substr(i_, w.size()) == w) {
                i_ += w.size();
                return value;
            }
        }
        fail("'fortran_order' is not True or False");
    }
    std::vector<std::uint64_t> tuple() {
        expect('(', "to open 'shape'");
        std::vector<std::uint64_t> dims;
        while (!take(')')) {
            skip_space();
            std::uint64_t v = 0;
            const auto [ptr, ec] = std::from_chars(t_.data() + i_, t_.data() + t_.size(), v);
            if (ec != std::errc() || ptr == t_.data() + i_) fail("'shape' holds something other than non-negative integers");
            i_ = std::size_t(ptr - t_.data());
            dims.push_back(v);
            if (!take(',')) {
                expect(')', "to close 'shape'");
                break;
            }
        }
        return dims;
    }
    bool at_end() {
        skip_space();
        return i_ == t_.size();
    }
    [[noreturn]] static void fail(const std::string& why) {
        throw InvalidArgument("its .npy header is not the dict NumPy writes: " + why);
    }

private:
    std::string_view t_;
    std::size_t i_ = 0;
};

std::uint64_t little_endian(std::string_view bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = bytes.size(); i-- > 0;) v = v << 8 | std::uint8_t(bytes[i]);
    return v;
}

void parse_dict(std::string_view text, NpyHeader& h) {
    Literal lit(text);
    lit.expect('{', "at the start");
    bool descr = false, order = false, shape = false;
    while (!lit.take('}')) {
        const std::string key = lit.string("key");
        lit.expect(':', "after '" + key + "'");
        if (key == "descr") {
            h.descr = lit.string("'descr'");
            descr = true;
        } else if (key == "fortran_order") {
            h.fortran_order = lit.boolean();
            order = true;
        } else if (key == "shape") {
            h.shape = lit.tuple();
            shape = true;
        } else {
            Literal::fail("unknown key '" + key + "' (NumPy writes 'descr', 'fortran_order' and 'shape')");
        }
        if (!lit.take(',')) {
            lit.expect('}', "to close the dict");
            break;
        }
    }
    if (!lit.at_end()) Literal::fail("text after the dict");
    if (!descr || !order || !shape) Literal::fail("it lacks " + std::string(!descr ? "'descr'" : !order ? "'fortran_order'" : "'shape'"));
}

}  // namespace

std::uint64_t NpyHeader::elements() const {
    std::uint64_t n = 1;
    for (const std::uint64_t d : shape) {
        if (d != 0 && n > UINT64_MAX / d) return 0;
        n *= d;
    }
    return n;
}

std::string NpyHeader::shape_text() const {
    std::string t = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) t.append(i ? ", " : "").append(std::to_string(shape[i]));
    return t.append(shape.size() == 1 ? ",)" : ")");
}

bool is_npy(std::string_view head) { return head.substr(0, 6) == "\x93NUMPY"; }

std::size_t npy_prefix_size(std::string_view head) {
    if (head.size() < 8) return 0;
    return head[6] == 1 ? 10 : 12;
}

NpyHeader parse_npy_header(std::string_view head, std::uint64_t file_size) {
    if (!is_npy(head)) throw InvalidArgument("it does not start with the .npy magic \\x93NUMPY");
    if (head.size() < 8 || file_size < 8) throw InvalidArgument("a .npy of " + std::to_string(file_size) + " bytes has no version");
    const int major = std::uint8_t(head[6]);
    if (major < 1 || major > 3)
        throw InvalidArgument(".npy version " + std::to_string(major) + "." + std::to_string(std::uint8_t(head[7])) +
                              " is not one NumPy writes (1.0, 2.0, 3.0)");
    const std::size_t prefix = npy_prefix_size(head);
    if (file_size < prefix || head.size() < prefix)
        throw InvalidArgument("a .npy of version " + std::to_string(major) + " needs " + std::to_string(prefix) +
                              " bytes before its header; the file has " + std::to_string(file_size));
    const std::uint64_t length = little_endian(head.substr(8, prefix - 8));
    NpyHeader h;
    h.data_offset = prefix + length;
    if (h.data_offset > file_size)
        throw InvalidArgument("its .npy header says it is " + std::to_string(length) + " bytes long; the file has only " +
                              std::to_string(file_size - prefix) + " after the " + std::to_string(prefix) + "-byte prefix");
    if (head.size() < h.data_offset) throw InvalidArgument("its .npy header was not read whole");
    parse_dict(head.substr(prefix, length), h);
    return h;
}

std::string npy_descr(std::string_view type_name) {
    if (type_name == "float") return "<f4";
    if (type_name == "double") return "<f8";
    if (type_name == "int") return "<i4";
    if (type_name == "uint") return "<u4";
    if (type_name == "long") return "<i8";
    return "";
}

namespace {

/// The type name of a descr as job files spell it ("<f4" -> "float"), else the descr itself.
std::string descr_name(const std::string& descr) {
    for (const char* t : {"float", "double", "int", "uint", "long"})
        if (npy_descr(t) == descr) return std::string(t) + " (" + descr + ")";
    return descr;
}

/// The header of the .npy at `path` (`size` bytes), read without its data.
NpyHeader read_npy_header(const std::string& path, std::uint64_t size) {
    std::ifstream f(path, std::ios::binary);
    auto read = [&](std::uint64_t n) {
        std::string head(std::size_t(std::min(n, size)), '\0');
        if (!f.seekg(0) || !f.read(head.data(), std::streamsize(head.size())))
            throw InvalidArgument("cannot read it: " + std::string(std::strerror(errno)));
        return head;
    };
    const std::string prefix = read(12);
    const std::size_t n = npy_prefix_size(prefix);
    if (n > 0 && prefix.size() >= n) {  // else parse_npy_header says what is missing
        std::uint64_t length = 0;
        for (std::size_t i = n; i-- > 8;) length = length << 8 | std::uint8_t(prefix[i]);
        if (length > kNpyHeaderLimit && n + length <= size)
            throw InvalidArgument("its .npy header says it is " + std::to_string(length) + " bytes long; headers of at most " +
                                  std::to_string(kNpyHeaderLimit) + " bytes are read");
        if (n + length <= size) return parse_npy_header(read(n + length), size);
    }
    return parse_npy_header(prefix, size);
}

/// The shapes buffer `d` takes: (count,) shared; (rows·pitch,) or (rows, pitch) split.
std::vector<std::vector<std::uint64_t>> buffer_shapes(const BufferDecl& d, std::uint64_t rows) {
    if (d.layout == BufferLayout::shared) return {{d.count}};
    if (d.pitch == 1) return {{rows}, {rows, 1}};
    return {{rows * d.pitch}, {rows, d.pitch}};
}

std::string shapes_text(const std::vector<std::vector<std::uint64_t>>& shapes) {
    std::string t;
    for (const auto& s : shapes) {
        NpyHeader h;
        h.shape = s;
        t.append(t.empty() ? "" : " or ").append(h.shape_text());
    }
    return t;
}

}  // namespace

InputFile check_input_file(const std::string& path, const BufferDecl& d, std::optional<std::uint64_t> rows) {
    namespace fs = std::filesystem;
    auto fail = [&](const std::string& why) -> void { throw InvalidArgument("'" + path + "' " + why); };
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (!fs::exists(st)) fail("does not exist");
    // Not /dev/zero (read until memory ran out) nor a FIFO (blocked forever).
    if (!fs::is_regular_file(st)) fail("is not a regular file");
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec) fail("has no size: " + ec.message());
    const std::uint64_t elements = !rows ? 0 : d.layout == BufferLayout::shared ? d.count : *rows * d.pitch;
    const std::uint64_t need = elements * elem_size(d.type);
    if (rows && size > need + kNpyHeaderLimit)
        fail("is " + std::to_string(size) + " bytes: more than buffer '" + d.name + "' takes (" + std::to_string(need) +
             " bytes of data and at most " + std::to_string(kNpyHeaderLimit) + " bytes of .npy header)");
    InputFile in{0, size};
    std::string head(6, '\0');
    std::ifstream(path, std::ios::binary).read(head.data(), 6);
    if (size >= 6 && is_npy(head)) {
        NpyHeader h;
        try {
            h = read_npy_header(path, size);
        } catch (const InvalidArgument& e) {
            throw InvalidArgument("'" + path + "': " + e.what());
        }
        const std::string want = npy_descr(to_string(d.type));
        if (h.descr != want)
            fail("is a .npy of " + descr_name(h.descr) + "; buffer '" + d.name + "' is " + descr_name(want));
        if (h.fortran_order)
            fail("is a Fortran-order .npy; buffer '" + d.name + "' needs C order (numpy.ascontiguousarray)");
        in = {h.data_offset, size - h.data_offset};
        if (!rows) return in;
        const auto shapes = buffer_shapes(d, *rows);
        if (std::find(shapes.begin(), shapes.end(), h.shape) == shapes.end())
            fail("is a .npy of shape " + h.shape_text() + "; buffer '" + d.name + "' takes " + shapes_text(shapes));
        if (in.bytes != need)
            fail("holds " + std::to_string(in.bytes) + " bytes of data after its .npy header; its shape " + h.shape_text() +
                 " of " + h.descr + " needs " + std::to_string(need));
        return in;
    }
    if (rows && size != need)
        fail("holds " + std::to_string(size) + " bytes of data; buffer '" + d.name + "' needs " + std::to_string(need));
    return in;
}

}  // namespace worksize
