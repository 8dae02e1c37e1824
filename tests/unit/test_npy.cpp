// The .npy header and a job file's input-file check (npy.hpp): what NumPy writes reads back,
// and each damaged or foreign file is refused with a line saying what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "worksize/scheduler/data_spec.hpp"
#include "worksize/scheduler/npy.hpp"
#include "worksize/scheduler/types.hpp"

using namespace worksize;
namespace fs = std::filesystem;

namespace {

/// A .npy as NumPy writes it: version 1 (or 2), the header padded with spaces to 64 bytes,
/// then `data` bytes.
std::string npy(const std::string& dict, std::size_t data, int version = 1) {
    const std::size_t prefix = version == 1 ? 10 : 12;
    std::string header = dict;
    header += std::string(64 - (prefix + header.size() + 1) % 64, ' ') + "\n";
    std::string s = "\x93NUMPY";
    s += char(version);
    s += '\0';
    for (std::size_t i = 0; i < prefix - 8; ++i) s += char((header.size() >> (8 * i)) & 0xff);
    return s + header + std::string(data, '\0');
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "(no error)";
}

class NpyFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("worksize_npy_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string write(const std::string& bytes) const {
        const std::string p = (dir_ / "x.npy").string();
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    }
    fs::path dir_;
};

BufferDecl shared_floats(std::uint64_t count) {
    BufferDecl d;
    d.name = "weights";
    d.layout = BufferLayout::shared;
    d.count = count;
    return d;
}

BufferDecl split_floats(std::uint64_t pitch) {
    BufferDecl d;
    d.name = "in";
    d.pitch = pitch;
    return d;
}

}  // namespace

TEST(Npy, HeadersAsNumPyWritesThem) {
    const std::string f = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }", 0);
    const NpyHeader h = parse_npy_header(f, f.size());
    EXPECT_EQ(h.descr, "<f4");
    EXPECT_FALSE(h.fortran_order);
    EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{48, 64}));
    EXPECT_EQ(h.data_offset, 128u);  // padded to a multiple of 64
    EXPECT_EQ(h.elements(), 3072u);
    EXPECT_EQ(h.shape_text(), "(48, 64)");
    const std::string v2 = npy("{'descr': '<i4', 'fortran_order': True, 'shape': (25,), }", 0, 2);
    const NpyHeader h2 = parse_npy_header(v2, v2.size());
    EXPECT_EQ(h2.shape_text(), "(25,)");
    EXPECT_TRUE(h2.fortran_order);
    const std::string scalar = npy("{'descr': '<f8', 'fortran_order': False, 'shape': ()}", 8);
    EXPECT_EQ(parse_npy_header(scalar, scalar.size()).elements(), 1u);
    EXPECT_EQ(npy_descr("long"), "<i8");
    EXPECT_EQ(npy_descr("char"), "");
}

TEST(Npy, DamagedHeadersSayWhatIsWrong) {
    std::string f = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (25,), }", 100);
    // A header longer than the file (its length field 0xff00): said with both numbers, not as
    // a negative count of data bytes.
    std::string long_header = f.substr(0, 40);
    long_header[8] = '\0';
    long_header[9] = '\xff';
    EXPECT_EQ(error_of([&] { parse_npy_header(long_header, long_header.size()); }),
              "its .npy header says it is 65280 bytes long; the file has only 30 after the 10-byte prefix");
    // Version 2 needs 12 bytes before its header.
    const std::string v2 = std::string("\x93NUMPY\x02\x00\x10\x00", 10);
    EXPECT_EQ(error_of([&] { parse_npy_header(v2, v2.size()); }),
              "a .npy of version 2 needs 12 bytes before its header; the file has 10");
    const std::string v9 = std::string("\x93NUMPY\x09\x00\x10\x00", 10);
    EXPECT_EQ(error_of([&] { parse_npy_header(v9, v9.size()); }),
              ".npy version 9.0 is not one NumPy writes (1.0, 2.0, 3.0)");
    for (const auto& [dict, why] : std::vector<std::pair<std::string, std::string>>{
             {"{'descr': '<f4', 'shape': (25,)}", "it lacks 'fortran_order'"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "'shape' holds something other"},
             {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", "'fortran_order' is not True or False"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unknown key 'x'"},
             {"['<f4']", "expected '{' at the start"},
             {"{'descr: '<f4'}", "expected ':' after"}}) {
        const std::string g = npy(dict, 0);
        EXPECT_NE(error_of([&] { parse_npy_header(g, g.size()); }).find(why), std::string::npos) << dict;
    }
}

TEST_F(NpyFile, DtypeShapeAndOrderCheckedAgainstTheBuffer) {
    const BufferDecl w = shared_floats(25);
    const std::string ok = write(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (25,), }", 100));
    const InputFile in = check_input_file(ok, w, 1);
    EXPECT_EQ(in.offset, 128u);
    EXPECT_EQ(in.bytes, 100u);
    // The same 100 bytes as 25 ints, as a 5x5 array, as doubles or in Fortran order: refused.
    auto refused = [&](const std::string& dict, std::size_t data, const BufferDecl& d, std::uint64_t rows) {
        const std::string p = write(npy(dict, data));
        return error_of([&] { check_input_file(p, d, rows); }).substr(p.size() + 3);
    };
    EXPECT_EQ(refused("{'descr': '<i4', 'fortran_order': False, 'shape': (25,), }", 100, w, 1),
              "is a .npy of int (<i4); buffer 'weights' is float (<f4)");
    EXPECT_EQ(refused("{'descr': '<f4', 'fortran_order': False, 'shape': (5, 5), }", 100, w, 1),
              "is a .npy of shape (5, 5); buffer 'weights' takes (25,)");
    EXPECT_EQ(refused("{'descr': '>f4', 'fortran_order': False, 'shape': (25,), }", 100, w, 1),
              "is a .npy of >f4; buffer 'weights' is float (<f4)");
    EXPECT_EQ(refused("{'descr': '<f4', 'fortran_order': True, 'shape': (25,), }", 100, w, 1),
              "is a Fortran-order .npy; buffer 'weights' needs C order (numpy.ascontiguousarray)");
    EXPECT_EQ(refused("{'descr': '<f4', 'fortran_order': False, 'shape': (25,), }", 96, w, 1),
              "holds 96 bytes of data after its .npy header; its shape (25,) of <f4 needs 100");
    // A split buffer: (rows, pitch) or (rows * pitch,), not transposed.
    const BufferDecl image = split_floats(64);
    const std::string rows = write(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }", 48 * 64 * 4));
    EXPECT_EQ(check_input_file(rows, image, 48).bytes, 48u * 64 * 4);
    EXPECT_EQ(refused("{'descr': '<f4', 'fortran_order': False, 'shape': (64, 48), }", 48 * 64 * 4, image, 48),
              "is a .npy of shape (64, 48); buffer 'in' takes (3072,) or (48, 64)");
    // Without a problem size (a job file read, not run): header, dtype and order only.
    const std::string p = write(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (5, 5), }", 100));
    EXPECT_EQ(check_input_file(p, w, std::nullopt).offset, 128u);
}

TEST_F(NpyFile, RawFilesRegularAndWithinTheBuffersSize) {
    const BufferDecl w = shared_floats(25);
    const std::string p = write(std::string(12, '\0'));
    EXPECT_EQ(error_of([&] { check_input_file(p, w, 1); }), "'" + p + "' holds 12 bytes of data; buffer 'weights' needs 100");
    // Checked by its size before anything is read, with the limit in the message.
    const std::string big = write(std::string(100 + kNpyHeaderLimit + 1, '\0'));
    EXPECT_EQ(error_of([&] { check_input_file(big, w, 1); }),
              "'" + big + "' is " + std::to_string(100 + kNpyHeaderLimit + 1) +
                  " bytes: more than buffer 'weights' takes (100 bytes of data and at most 1048576 bytes of .npy header)");
    EXPECT_EQ(error_of([&] { check_input_file("/dev/zero", w, 1); }), "'/dev/zero' is not a regular file");
    EXPECT_EQ(error_of([&] { check_input_file(dir_.string(), w, 1); }), "'" + dir_.string() + "' is not a regular file");
    // A 10-byte version-2 .npy (substr threw std::out_of_range before).
    const std::string v2 = write(std::string("\x93NUMPY\x02\x00\x10\x00", 10));
    EXPECT_EQ(error_of([&] { check_input_file(v2, w, 1); }),
              "'" + v2 + "': a .npy of version 2 needs 12 bytes before its header; the file has 10");
}
