// Declared jobs (declared_job.hpp): rank 0's side from the declaration. A slice on its device:
// declared_slice.cpp.
#include "worksize/runtime/declared_job.hpp"

#include <algorithm>
#include <cstring>

#include "jobs/data_kernels.hpp"
#include "jobs/job_util.hpp"
#include "worksize/runtime/opencl.hpp"
#include "worksize/scheduler/slice_program.hpp"

namespace worksize {

namespace {

const BufferDecl& reduced_buffer(const DataJobSpec& s, std::pair<std::size_t, std::size_t> r) {
    return s.buffers[std::size_t(s.kernels[r.first].args[r.second].buffer)];
}

/// The only split output of a job without reductions, else -1.
int sole_split_output(const DataJobSpec& s) {
    if (!reductions(s).empty()) return -1;
    int found = -1;
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
        if (!s.buffers[b].output) continue;
        if (s.buffers[b].layout != BufferLayout::split || found >= 0) return -1;
        found = int(b);
    }
    return found;
}

}  // namespace

void DeclaredJob::partition(std::vector<Assignment>& assignments) {
    align_slices(declaration(), assignments);
    check_slices(declaration(), assignments);
}

std::vector<std::span<const std::byte>> DeclaredJob::input_parts(const Assignment& a) const {
    const DataJobSpec& spec = declaration();
    std::vector<std::span<const std::byte>> parts;
    for (const auto& p : slice_input_parts(spec, a.offset, a.units)) {
        const auto& d = spec.buffers[std::size_t(p.buffer)];
        const auto host = host_input(p.buffer);
        if (p.first + p.bytes > host.size())
            throw Error("job '" + spec.name + "': buffer '" + d.name + "' holds " + std::to_string(host.size()) +
                        " bytes on rank 0; the slice at unit " + std::to_string(a.offset) + " needs " +
                        std::to_string(p.first + p.bytes));
        parts.push_back(host.subspan(p.first, p.bytes));
    }
    if (parts.empty()) parts.emplace_back();  // nothing to send: one empty part
    return parts;
}

void DeclaredJob::make_slice_input(const Assignment& a, Bytes& in) const {
    const auto parts = slice_input_parts(declaration(), a.offset, a.units);
    std::uint64_t n = 0;
    for (const auto& p : parts) n += p.bytes;
    in.resize(n);
    std::uint64_t at = 0;
    for (const auto& p : parts) {
        fill_input(p.buffer, p.first, std::span(in.data() + at, p.bytes));
        at += p.bytes;
    }
}

void DeclaredJob::fill_input(int b, std::uint64_t first, std::span<std::byte> out) const {
    (void)b;
    (void)first;
    (void)out;
    throw InvalidArgument("job '" + declaration().name + "' cannot make its inputs on each rank");
}

Bytes DeclaredJob::slice_input(const Assignment& a) const {
    Bytes b;
    for (const auto& p : input_parts(a)) b.insert(b.end(), p.begin(), p.end());
    return b;
}

std::span<std::byte> DeclaredJob::output_target(const Assignment& a) {
    const DataJobSpec& spec = declaration();
    const int b = sole_split_output(spec);
    if (b < 0) return {};
    const auto row = row_bytes(spec.buffers[std::size_t(b)]);
    const auto host = host_output(b);
    const auto [first, n] = own_rows(spec, b, a.offset, a.units);
    if ((first + n) * row > host.size()) return {};  // accept_output names the problem
    return host.subspan(first * row, n * row);
}

void DeclaredJob::accept_output(const Assignment& a, std::span<const std::byte> out) {
    const DataJobSpec& spec = declaration();
    std::uint64_t o = 0;
    auto too_short = [&](std::uint64_t need) {
        return Error("job '" + spec.name + "': the output of the slice at unit " + std::to_string(a.offset) + " holds " +
                     std::to_string(out.size()) + " bytes, fewer than the " + std::to_string(need) +
                     " its declaration gives");
    };
    for (std::size_t b = 0; b < spec.buffers.size(); ++b) {
        const auto& d = spec.buffers[b];
        if (!d.output || d.layout != BufferLayout::split) continue;
        const auto [first, rows] = own_rows(spec, int(b), a.offset, a.units);
        const std::uint64_t n = rows * row_bytes(d);
        if (o + n > out.size()) throw too_short(o + n);
        const auto host = host_output(int(b));
        if ((first + rows) * row_bytes(d) > host.size())
            throw Error("job '" + spec.name + "': output buffer '" + d.name + "' on rank 0 is too small for rows up to " +
                        std::to_string(first + rows));
        std::byte* dst = host.data() + first * row_bytes(d);
        if (n && dst != out.data() + o) std::memcpy(dst, out.data() + o, n);  // output_target: in place
        o += n;
    }
    std::vector<std::vector<double>> parts;
    for (const auto& r : reductions(spec)) {
        const auto& d = reduced_buffer(spec, r);
        std::vector<double> v(d.count);
        if (o + d.count * sizeof(double) > out.size()) throw too_short(o + d.count * sizeof(double));
        std::memcpy(v.data(), out.data() + o, d.count * sizeof(double));
        o += d.count * sizeof(double);
        parts.push_back(std::move(v));
    }
    partials_[a.offset] = std::move(parts);
}

void DeclaredJob::finish() {
    const DataJobSpec& spec = declaration();
    const auto reds = reductions(spec);
    reduced_.assign(reds.size(), {});
    for (std::size_t r = 0; r < reds.size(); ++r) {
        const auto& a = spec.kernels[reds[r].first].args[reds[r].second];
        const auto& d = reduced_buffer(spec, reds[r]);
        std::vector<double> total(d.count, data::identity(a.op));
        for (const auto& [offset, parts] : partials_)  // slice order
            for (std::size_t j = 0; j < d.count; ++j) total[j] = data::combine(a.op, total[j], parts[r][j]);
        const auto host = host_output(a.buffer);
        if (host.size() >= d.count * elem_size(d.type))
            for (std::size_t j = 0; j < d.count; ++j) data::store(host.data(), d.type, j, total[j]);
        reduced_[r] = std::move(total);
    }
    partials_.clear();
}

}  // namespace worksize
