// NumPy's .npy format (versions 1, 2 and 3): the header of a job file's input file, read and
// checked before any data is, so that a damaged or foreign file gives one line naming what is
// wrong (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace worksize {

struct BufferDecl;

/// A .npy header: the array's dtype as NumPy writes it ("<f4"), its order and shape, and where
/// its data starts.
struct NpyHeader {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::uint64_t> shape;  ///< empty: a scalar (one element)
    std::uint64_t data_offset = 0;     ///< bytes before the data: magic, version, length, header

    /// Elements the shape holds (1 for a scalar); 0 when the product overflows 64 bits.
    std::uint64_t elements() const;
    /// "(64, 48)", "(25,)", "()": as NumPy prints a shape.
    std::string shape_text() const;
};

/// Does `head` (a file's first bytes) start with the .npy magic "\x93NUMPY"?
bool is_npy(std::string_view head);

/// The bytes of a .npy file's start that hold its header's length: 10 (version 1), else 12.
/// Reads the version in head[6]; 0 where `head` is shorter than 8 bytes.
std::size_t npy_prefix_size(std::string_view head);

/// Parse the header at the start of `head` (at least the whole header: npy_prefix_size() plus
/// the length it holds), of a file of `file_size` bytes. Throws InvalidArgument saying what is
/// wrong (without the file's name): an unknown version, a header longer than the file, a header
/// that is not the dict NumPy writes ({'descr': ..., 'fortran_order': ..., 'shape': (...)}).
NpyHeader parse_npy_header(std::string_view head, std::uint64_t file_size);

/// NumPy's little-endian descr of a job file's element type name ("float" -> "<f4", "double"
/// -> "<f8", "int" -> "<i4", "uint" -> "<u4", "long" -> "<i8"); "" for another.
std::string npy_descr(std::string_view type_name);

/// The most bytes of .npy header an input file may have (NumPy writes 64 to 128; version 1
/// allows 65535).
inline constexpr std::uint64_t kNpyHeaderLimit = 1 << 20;

/// Where an input file's data starts and how many bytes it holds.
struct InputFile {
    std::uint64_t offset = 0, bytes = 0;
};

/// Check `path` as the initial contents of buffer `d` (a job file's {"file": PATH}) before
/// reading its data: a regular file; a .npy's header valid, its dtype the buffer's
/// (npy_descr), in C order. With `rows` (the split buffer's rows at the problem's size; shared
/// buffers ignore it): the file's size at most the buffer's bytes + kNpyHeaderLimit, a .npy's
/// shape the buffer's ((count,) shared; (rows·pitch,) or (rows, pitch) split) and its data, or
/// a raw file, exactly the buffer's bytes. Throws InvalidArgument "'PATH' ...: why".
InputFile check_input_file(const std::string& path, const BufferDecl& d, std::optional<std::uint64_t> rows);

}  // namespace worksize
