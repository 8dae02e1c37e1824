// What the job-file tests share (test_job_file.cpp, test_job_file_refusals.cpp): the filter5x5
// example's declaration and a temporary directory.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "source_dir.hpp"

namespace worksize::test {

inline std::string filter_cl() { return (test::source_dir() / "examples" / "filter2d" / "filter2d.cl").string(); }

/// The filter5x5 example's declaration with its source given by an absolute path.
inline nlohmann::json filter_json() {
    auto j = nlohmann::json::parse(R"({
      "name": "filter5x5",
      "description": "5x5 neighbourhood filter",
      "build_options": "-DR=2",
      "dims": 2,
      "size": [2048, 2048],
      "ops_per_unit": "50*width",
      "buffers": [
        {"name": "in", "type": "float", "pitch": "width", "init": {"random": [0, 1], "seed": 3}},
        {"name": "weights", "layout": "shared", "count": 25, "init": {"constant": 0.04}},
        {"name": "out", "pitch": "width", "output": true}
      ],
      "kernels": [{"name": "filter", "args": [
        {"halo": "in", "depth": 2}, {"origin": "in"}, {"all": "weights"}, {"out": "out"},
        {"origin": "out"}, {"int": "width"}, {"int": "height"}, {"end": true}]}],
      "verify": {"tolerance": 1e-5}
    })");
    j["source"] = filter_cl();
    return j;
}

/// A temporary directory, removed at the end of the test.
class TempDir {
public:
    TempDir() {
        path_ = std::filesystem::temp_directory_path() /
                ("worksize_job_file_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    void write(const std::string& name, const std::string& text) const {
        std::ofstream(path_ / name, std::ios::binary) << text;
    }

private:
    std::filesystem::path path_;
};

}  // namespace worksize::test
