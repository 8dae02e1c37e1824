// The device side of data-job declarations (data_kernels.hpp).
#include "jobs/data_kernels.hpp"

#include "worksize/runtime/declared_job.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>
#include <thread>
#include <future>

namespace worksize::data {

namespace {
constexpr std::uint64_t kMaxCombineGroups = 1024;
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
std::uint64_t round_up(std::uint64_t a, std::uint64_t b) { return b <= 1 ? a : ceil_div(a, b) * b; }
}  // namespace

LocalSize chunk_local(std::uint64_t items, LocalSize plan_local) {
    if (plan_local.is_null() || items == 0) return {};
    const std::uint64_t cap = std::bit_floor(plan_local.x);
    const std::uint64_t w = std::min(cap, items & (~items + 1));  // the largest power of two dividing items
    return w >= std::min<std::uint64_t>(cap, 16) ? LocalSize{w, 1} : LocalSize{};
}

LocalSize exact_local(LocalSize local, int dims, std::uint64_t items, bool at_end) {
    if (at_end || items == 0) return local;
    std::uint64_t& split = dims == 2 ? local.y : local.x;
    if (split <= 1 || items % split == 0) return local;
    // the largest power of two dividing `items`, up to the planned extent
    split = std::min(std::bit_floor(split), items & (~items + 1));
    return local;
}

namespace {
/// KernelDecl::slice_relative: every held row of the kernel's split buffers (all held with the
/// same halo), one item per element of the widest, from global offset 0.
Geometry relative_geometry(const DataJobSpec& spec, const KernelDecl& k, std::uint64_t offset, std::uint64_t units) {
    std::uint64_t h = 0;
    for (const auto& a : k.args)
        if (a.buffer >= 0 && spec.buffers[std::size_t(a.buffer)].layout == BufferLayout::split)
            h = std::max(h, halo_rows(spec, a.buffer));
    // The held rows within the problem (first_held_unit(): such buffers start there).
    const std::uint64_t pitch = widest_pitch(spec, k), first = offset > h ? offset - h : 0,
                        rows = std::min(spec.units, offset + units + h) - first;
    Geometry g;
    g.relative = true;
    g.held_begin = std::int64_t(first);
    g.held_end = std::int64_t(first + rows);
    g.first_unit = offset;
    g.end_unit = offset + units;
    g.own_first = (offset - first) * pitch;
    g.own_items = units * pitch;
    g.begin = 0;
    g.end = rows * pitch;
    g.padded = round_up(g.end, k.required_local.x);
    g.offset = cl::NullRange;
    g.global = cl::NDRange(g.padded);
    g.local = cl::NDRange(k.required_local.x);
    return g;
}
}  // namespace

Geometry geometry(const DataJobSpec& spec, const KernelDecl& k, std::uint64_t offset, std::uint64_t units,
                  LocalSize plan_local, std::uint64_t extend) {
    Geometry g;
    if (k.slice_relative) return relative_geometry(spec, k, offset, units);
    const std::uint64_t first = offset > extend ? offset - extend : 0;
    const std::uint64_t last = std::min(spec.units, offset + units + extend);
    g.first_unit = first;
    g.end_unit = last;
    if (k.group_units) {  // a launch geometry of its own: whole groups of group_items per group_units
        const std::uint64_t groups = ceil_div(last - first, k.group_units);
        g.begin = first / k.group_units * k.group_items;
        g.end = g.begin + groups * k.group_items;
        g.padded = groups * k.group_items;
        g.offset = g.begin == 0 ? cl::NullRange : cl::NDRange(g.begin);
        g.global = cl::NDRange(g.padded);
        g.local = cl::NDRange(k.group_items);
        return g;
    }
    g.begin = first / k.units_per_item;
    g.end = ceil_div(last, k.units_per_item);
    const std::uint64_t items = g.end - g.begin;
    LocalSize local = !k.required_local.is_null()                     ? k.required_local
                      : k.units_per_item == 1 || reduces_per_group(k) ? plan_local
                      : spec.dims == 1                                ? chunk_local(items, plan_local)
                                                                      : LocalSize{};
    if (k.whole_arrays && k.required_local.is_null() && !local.is_null())
        local = exact_local(local, spec.dims, items, last >= spec.units);
    if (spec.dims == 2) {
        const std::uint64_t lx = local.is_null() ? 1 : local.x, ly = local.is_null() ? 1 : std::max<std::uint64_t>(local.y, 1);
        g.padded = round_up(items, ly);
        g.offset = g.begin == 0 ? cl::NullRange : cl::NDRange(0, g.begin);
        g.global = cl::NDRange(round_up(spec.width, lx), g.padded);
        g.local = local.is_null() ? cl::NullRange : cl::NDRange(lx, ly);
    } else {
        g.padded = round_up(items, local.is_null() ? 1 : local.x);
        g.offset = g.begin == 0 ? cl::NullRange : cl::NDRange(g.begin);
        g.global = cl::NDRange(g.padded);
        g.local = local.is_null() ? cl::NullRange : cl::NDRange(local.x);
    }
    return g;
}

bool reduces_per_group(const KernelDecl& k) {
    return std::any_of(k.args.begin(), k.args.end(),
                       [](const ArgDecl& a) { return a.kind == ArgKind::reduce && a.per_group; });
}

namespace {
/// The largest power of two up to 256 that `kernel` can run as a 1-D work-group on `device`.
std::uint64_t tree_width(const cl::Kernel& kernel, const cl::Device& device) {
    const auto items = device.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
    return std::bit_floor(
        std::min<std::uint64_t>({256, kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device),
                                 std::max<std::uint64_t>(items.empty() ? 1 : items[0], 1)}));
}
}  // namespace

LocalSize launch_local(const KernelDecl& k, LocalSize plan_local, const cl::Kernel& kernel,
                       const cl::Device& device) {
    if (!k.required_local.is_null()) return plan_local;
    if (k.units_per_item > 1 && !reduces_per_group(k) && !plan_local.is_null())
        return {std::min(plan_local.x, tree_width(kernel, device)), 1};  // a cap for chunk_local()
    if (!reduces_per_group(k) || !plan_local.is_null()) return plan_local;
    return {tree_width(kernel, device), 1};
}

std::uint64_t record_count(const ArgDecl& a, const Geometry& g) {
    if (!a.per_group || g.local.dimensions() == 0) return g.padded;
    const std::uint64_t l = g.local.get()[g.local.dimensions() - 1];
    return ceil_div(g.padded, std::max<std::uint64_t>(l, 1));
}

namespace {
/// OpenCL C of the device-side combination of per-group records of type `t` with `op`: a group
/// of R work-items combines R records' element get_global_id(1) with the tree of quad.cl's
/// ws_group_sum (any R; worksize uses powers of two).
std::string combine_source(ElemType t, ReduceOp op) {
    std::string src = R"CL(
__kernel void ws_combine_records(__global T* out, __global const T* in, const ulong records, __local T* s,
                                 const ulong first) {
    const size_t lid = get_local_id(0), g = get_global_id(0), j = get_global_id(1);
    const size_t count = get_global_size(1), stride = get_global_size(0);
    T acc = g < records ? in[(first + g) * count + j] : (T)(IDENTITY);
    for (ulong h = g + stride; h < records; h += stride) acc = COMBINE(acc, in[(first + h) * count + j]);
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t n = get_local_size(0); n > 1; ) {
        const size_t up = (n + 1) >> 1;
        if (lid + up < n) s[lid] = COMBINE(s[lid], s[lid + up]);
        barrier(CLK_LOCAL_MEM_FENCE);
        n = up;
    }
    if (lid == 0) out[get_group_id(0) * count + j] = s[0];
}
)CL";
    const bool i32 = t == ElemType::i32, u32 = t == ElemType::u32, i64 = t == ElemType::i64;
    const char* identity = op == ReduceOp::sum   ? "0"
                           : op == ReduceOp::min ? (i32 ? "INT_MAX" : u32 ? "UINT_MAX" : i64 ? "LONG_MAX" : "INFINITY")
                                                 : (i32 ? "INT_MIN" : u32 ? "0" : i64 ? "LONG_MIN" : "-INFINITY");
    const char* combine = op == ReduceOp::sum ? "(a) + (b)" : op == ReduceOp::min ? "min(a, b)" : "max(a, b)";
    std::string head = t == ElemType::f64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
    head += "#define T ";
    head += to_string(t);
    head += "\n#define IDENTITY ";
    head += identity;
    head += "\n#define COMBINE(a, b) ";
    head += combine;
    head += "\n";
    return head + src;
}
}  // namespace

void combine_on_device(DeviceContext& ctx, cl::Buffer& buf, std::uint64_t& records, const BufferDecl& d,
                       ReduceOp op, double& seconds, std::uint64_t most, std::uint64_t first, CombineCache* cache) {
    most = std::max<std::uint64_t>(most, 1);
    if (records <= most && first == 0) return;
    CombineCache local;
    CombineCache& c = cache ? *cache : local;
    if (!c.kernel()) {
        c.kernel = cl::Kernel(ctx.program_from_source(combine_source(d.type, op), ""), "ws_combine_records");
        c.width = tree_width(c.kernel, ctx.device());
    }
    const std::uint64_t R = c.width;
    const std::size_t esize = elem_size(d.type);
    // The passes follow each other on the device's in-order queue: no wait between them (the
    // caller's read of the last pass waits); each pass's buffer is kept for the next call.
    std::vector<cl::Event> events;
    for (std::size_t pass = 0; (records > most || first > 0) && R >= 2; ++pass) {
        // At most kMaxCombineGroups groups, each work-item first combining records a grid apart
        // (srad's 64 M per-element records: 1024 groups, then one); fewer records: one each, in
        // the tree's order as before.
        const std::uint64_t next = std::min(ceil_div(records, R), kMaxCombineGroups), bytes = next * d.count * esize;
        if (c.passes.size() <= pass) c.passes.emplace_back(), c.sizes.push_back(0);
        if (c.sizes[pass] < bytes) c.passes[pass] = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, bytes), c.sizes[pass] = bytes;
        cl::Buffer& combined = c.passes[pass];
        c.kernel.setArg(0, combined);
        c.kernel.setArg(1, buf);
        c.kernel.setArg(2, cl_ulong(records));
        c.kernel.setArg(3, cl::Local(R * esize));
        c.kernel.setArg(4, cl_ulong(first));
        first = 0;
        events.emplace_back();
        ctx.queue().enqueueNDRangeKernel(c.kernel, cl::NullRange, cl::NDRange(next * R, d.count), cl::NDRange(R, 1),
                                         nullptr, c.timed ? &events.back() : nullptr);
        buf = combined;
        records = next;
    }
    if (c.timed)
        for (auto& ev : events) {
            ev.wait();
            seconds += event_seconds(ev);
        }
}

namespace {
bool takes_buffer(ArgKind k) {
    return k == ArgKind::read || k == ArgKind::write || k == ArgKind::read_write || k == ArgKind::halo ||
           k == ArgKind::all || k == ArgKind::reduce || k == ArgKind::scratch;
}

const char* parameter_text(cl_kernel_arg_address_qualifier q) {
    switch (q) {
    case CL_KERNEL_ARG_ADDRESS_GLOBAL: return "a __global pointer";
    case CL_KERNEL_ARG_ADDRESS_CONSTANT: return "a __constant pointer";
    case CL_KERNEL_ARG_ADDRESS_LOCAL: return "a __local pointer";
    default: return "a value";
    }
}

/// Buffers go to __global or __constant pointers, __local arrays to __local ones, values to the
/// rest. Checked before any argument is set: a value of 8 bytes in a pointer parameter is taken
/// for a buffer's handle (PoCL dereferenced a double's bits: a segfault), a buffer in a value
/// parameter failed only at the launch, as CL_INVALID_ARG_SIZE (exit 1), or, in a long one, ran
/// with the handle's bits for a number. Where the implementation gives no argument info,
/// nothing is checked. @throws InvalidArgument naming the argument.
void check_arg_kinds(const cl::Kernel& kernel, const KernelDecl& k) {
    for (cl_uint i = 0; i < k.args.size(); ++i) {
        cl_kernel_arg_address_qualifier q = 0;
        if (clGetKernelArgInfo(kernel(), i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, nullptr) !=
            CL_SUCCESS)
            return;
        const ArgKind kind = k.args[i].kind;
        const bool buffer = takes_buffer(kind), local = kind == ArgKind::local;
        const bool pointer = q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT;
        if (buffer == pointer && local == (q == CL_KERNEL_ARG_ADDRESS_LOCAL)) continue;
        throw InvalidArgument("kernel '" + k.name + "', argument " + std::to_string(i) + " (" + to_string(kind) +
                              "): declared " + (buffer ? "a buffer" : local ? "__local memory" : "a value") +
                              ", but the kernel's parameter is " + parameter_text(q));
    }
}
}  // namespace

void check_required_local(const KernelDecl& k, const Geometry& g, const cl::Kernel& kernel, const cl::Device& device) {
    std::array<std::size_t, 3> want{};
    if (clGetKernelWorkGroupInfo(kernel(), device(), CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof want, want.data(),
                                 nullptr) != CL_SUCCESS ||
        want[0] == 0)
        return;
    std::array<std::size_t, 3> used{1, 1, 1};  // (dimensions past the launch's are 1)
    for (cl_uint i = 0; i < g.local.dimensions() && i < 3; ++i) used[i] = g.local.get()[i];
    if (g.local.dimensions() > 0 && used == want) return;
    auto text = [](const std::array<std::size_t, 3>& s) {
        return std::to_string(s[0]) + "x" + std::to_string(s[1]) + (s[2] > 1 ? "x" + std::to_string(s[2]) : "");
    };
    throw InvalidArgument("kernel '" + k.name + "' requires work-groups of " + text(want) +
                          " (reqd_work_group_size in its source), but it would launch with " +
                          (g.local.dimensions() > 0 ? text(used) : std::string("a NULL local size")) +
                          ": declare \"required_local\": [" + std::to_string(want[0]) + ", " +
                          std::to_string(want[1]) + "] (C++: required_local())");
}

std::string program_options(const std::string& build_options) {
    return build_options.empty() ? "-cl-kernel-arg-info" : build_options + " -cl-kernel-arg-info";
}

cl::Kernel make_kernel(const cl::Program& program, const KernelDecl& k) {
    cl::Kernel kernel;
    try {
        kernel = cl::Kernel(program, k.name.c_str());
    } catch (const cl::Error& e) {
        std::string names = program.getInfo<CL_PROGRAM_KERNEL_NAMES>();
        std::replace(names.begin(), names.end(), ';', ' ');
        throw InvalidArgument("the source has no kernel '" + k.name + "' (" + cl_error_name(e.err()) +
                              "; it has: " + names + ")");
    }
    const auto nargs = kernel.getInfo<CL_KERNEL_NUM_ARGS>();
    if (nargs != k.args.size())
        throw InvalidArgument("kernel '" + k.name + "' takes " + std::to_string(nargs) + " arguments; the job declares " +
                              std::to_string(k.args.size()));
    check_arg_kinds(kernel, k);
    return kernel;
}

namespace {
/// An index argument as the kernel declares it: int (validate() checked that the job's indexes
/// fit) or long.
/// A value_of argument: its shared buffer's first element on this rank, of the buffer's type.
void set_value_of(cl::Kernel& kernel, cl_uint i, const KernelDecl& k, const ArgDecl& a, const Values* values) {
    const HostValue* v = values && std::size_t(a.buffer) < values->size() ? &(*values)[std::size_t(a.buffer)] : nullptr;
    if (!v || v->bytes.size() < elem_size(v->type))
        throw InvalidArgument("kernel '" + k.name + "', argument " + std::to_string(i) +
                              " (value_of): this job kind passes no values of shared buffers");
    auto as = [&](auto x) {
        std::memcpy(&x, v->bytes.data(), sizeof x);
        kernel.setArg(i, x);
    };
    switch (v->type) {
    case ElemType::f32: as(cl_float{}); break;
    case ElemType::f64: as(cl_double{}); break;
    case ElemType::i32: as(cl_int{}); break;
    case ElemType::u32: as(cl_uint{}); break;
    case ElemType::i64: as(cl_long{}); break;
    }
}

void set_index(cl::Kernel& kernel, cl_uint i, const ArgDecl& a, std::int64_t v) {
    if (a.index_type == ElemType::i64)
        kernel.setArg(i, static_cast<cl_long>(v));
    else
        kernel.setArg(i, static_cast<cl_int>(v));
}
/// An expression argument's value in `scope`, within its type. @throws InvalidArgument naming the
/// kernel and the argument.
std::int64_t eval_value(const KernelDecl& k, std::size_t i, const ArgDecl& a, const ExprScope& scope) {
    const std::string an = "kernel '" + k.name + "', argument " + std::to_string(i);
    std::int64_t v = 0;
    try {
        v = eval_expr(a.expr, scope);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument(an + ": " + e.what());
    }
    if (a.index_type == ElemType::i32 && (v < INT32_MIN || v > INT32_MAX))
        throw InvalidArgument(an + ": expression '" + a.expr + "' is " + std::to_string(v) + " in step " +
                              std::to_string(scope.step) + ", beyond an int; declare it long");
    return v;
}

/// A scalar argument: its declared value, as the type it is declared with.
void set_scalar(cl::Kernel& kernel, cl_uint i, const ArgDecl& a) {
    switch (a.scalar_type) {
    case ElemType::f32: kernel.setArg(i, static_cast<cl_float>(a.value)); break;
    case ElemType::f64: kernel.setArg(i, static_cast<cl_double>(a.value)); break;
    case ElemType::i32: kernel.setArg(i, static_cast<cl_int>(a.value)); break;
    case ElemType::u32: kernel.setArg(i, static_cast<cl_uint>(a.value)); break;
    case ElemType::i64: kernel.setArg(i, static_cast<cl_long>(a.value)); break;
    }
}

/// The error for a scalar or index argument whose declared type has another size than the
/// kernel's parameter (CL_INVALID_ARG_SIZE), naming the kernel, the argument and the fix.
InvalidArgument arg_size_error(const KernelDecl& k, cl_uint i, const ArgDecl& a) {
    std::string m = "kernel '" + k.name + "', argument " + std::to_string(i) + " (";
    m += to_string(a.kind);
    m += "): declared ";
    m += to_string(is_index(a.kind) ? a.index_type : a.scalar_type);
    m += ", but the kernel's parameter has another size (CL_INVALID_ARG_SIZE); declare the type it takes";
    if (is_index(a.kind))
        m += " (int, or long: \"type\": \"long\", arg::" + std::string(to_string(a.kind)) + "<std::int64_t>())";
    return InvalidArgument(m);
}
}  // namespace

void bind_args(cl::Kernel& kernel, const KernelDecl& k, const std::vector<cl::Buffer>& bufs,
               const std::function<const cl::Buffer&(std::size_t)>& records, const Geometry& g,
               std::uint64_t offset, const std::vector<std::uint64_t>& halo, std::vector<std::int64_t>* bound,
               const std::vector<std::int64_t>* origins, ExprScope scope, const Values* values) {
    if (bound && bound->size() != k.args.size()) bound->assign(k.args.size(), INT64_MIN);
    // Set argument i unless `key` (a buffer's handle or an int's value) is what it holds already.
    auto fresh = [&](cl_uint i, std::int64_t key) {
        if (!bound) return true;
        if ((*bound)[i] == key) return false;
        (*bound)[i] = key;
        return true;
    };
    auto handle = [](const cl::Buffer& b) { return std::int64_t(reinterpret_cast<std::intptr_t>(b())); };
    for (cl_uint i = 0; i < k.args.size(); ++i) {
        const ArgDecl& a = k.args[i];
        try {
            switch (a.kind) {
            case ArgKind::read:
            case ArgKind::write:
            case ArgKind::read_write:
            case ArgKind::halo:
            case ArgKind::all:
                if (fresh(i, handle(bufs[std::size_t(a.buffer)]))) kernel.setArg(i, bufs[std::size_t(a.buffer)]);
                break;
            case ArgKind::reduce:
                if (fresh(i, handle(records(i)))) kernel.setArg(i, records(i));
                break;
            case ArgKind::scalar:
                if (fresh(i, 0)) set_scalar(kernel, i, a);  // a constant: set once
                break;
            case ArgKind::begin:
                if (fresh(i, std::int64_t(g.begin))) set_index(kernel, i, a, std::int64_t(g.begin));
                break;
            case ArgKind::end:
                if (fresh(i, std::int64_t(g.end))) set_index(kernel, i, a, std::int64_t(g.end));
                break;
            case ArgKind::local:
                if (fresh(i, std::int64_t(a.value) * std::int64_t(elem_size(a.scalar_type))))
                    kernel.setArg(i, cl::Local(std::size_t(a.value) * elem_size(a.scalar_type)));
                break;
            case ArgKind::step: {
                const std::int64_t v = scope.step * a.step_times + a.step_plus;
                if (fresh(i, v)) set_index(kernel, i, a, v);
                break;
            }
            case ArgKind::expr: {
                scope.begin = g.relative ? g.held_begin : std::int64_t(g.first_unit);
                scope.end = g.relative ? g.held_end : std::int64_t(g.end_unit);
                scope.constants = &a.constants;
                const std::int64_t v = eval_value(k, i, a, scope);
                if (fresh(i, v)) set_index(kernel, i, a, v);
                break;
            }
            case ArgKind::scratch:
                if (fresh(i, handle(bufs[std::size_t(a.buffer)]))) kernel.setArg(i, bufs[std::size_t(a.buffer)]);
                break;
            case ArgKind::value_of:
                set_value_of(kernel, i, k, a, values);
                break;
            case ArgKind::origin: {
                const std::int64_t origin = origins ? (*origins)[std::size_t(a.buffer)]
                                                    : std::int64_t(offset) - std::int64_t(halo[std::size_t(a.buffer)]);
                if (fresh(i, origin)) set_index(kernel, i, a, origin);
                break;
            }
            }
        } catch (const cl::Error& e) {
            // A value of another size than the kernel's parameter: an int declared where the
            // kernel takes a long (or the reverse) is bad input, named here.
            if (e.err() != CL_INVALID_ARG_SIZE || !(a.kind == ArgKind::scalar || is_index(a.kind))) throw;
            throw arg_size_error(k, i, a);
        }
    }
}

double identity(ReduceOp op) {
    const double inf = std::numeric_limits<double>::infinity();
    return op == ReduceOp::sum ? 0.0 : op == ReduceOp::min ? inf : -inf;
}

double combine(ReduceOp op, double a, double b) {
    return op == ReduceOp::sum ? a + b : op == ReduceOp::min ? std::min(a, b) : std::max(a, b);
}

void initial_fill(cl::CommandQueue& q, const cl::Buffer& buffer, const BufferDecl& d, std::uint64_t bytes) {
    if (bytes == 0) return;
    if (!d.no_init) {
        q.enqueueFillBuffer(buffer, cl_uint(0), 0, bytes);
        return;
    }
    const char* poison = std::getenv("WORKSIZE_POISON_NO_INIT");
    if (poison && std::string(poison) == "1") q.enqueueFillBuffer(buffer, cl_uchar(0xFF), 0, bytes);
}

std::uint64_t tail_bytes(const BufferDecl& d, std::uint64_t data_bytes, std::uint64_t max_alloc) {
    const bool fits = !max_alloc || data_bytes + kSharedTail <= max_alloc;
    return d.layout == BufferLayout::shared && fits ? kSharedTail : 0;
}

void write_tail(cl::CommandQueue& q, const cl::Buffer& buffer, std::uint64_t at, std::uint64_t bytes, std::byte pattern) {
    static const std::array<std::array<std::byte, 256>, 2> tails = [] {
        std::array<std::array<std::byte, 256>, 2> t;
        t[0].fill(std::byte{0x7f});
        t[1].fill(std::byte{0xff});
        return t;
    }();
    const std::size_t which = pattern == std::byte{0x7f} ? 0 : pattern == std::byte{0xff} ? 1 : 2;
    if (which > 1 || bytes > tails[which].size())
        throw std::logic_error("write_tail: a tail of 0x7f or 0xff bytes, at most 256 of them");
    q.enqueueWriteBuffer(buffer, CL_FALSE, at, bytes, tails[which].data());
}

void fill_identity(cl::CommandQueue& q, const cl::Buffer& rec, const BufferDecl& d, ReduceOp op, std::uint64_t items) {
    const std::size_t bytes = items * d.count * elem_size(d.type);
    const double v = identity(op);
    switch (d.type) {
    case ElemType::f32: q.enqueueFillBuffer(rec, static_cast<cl_float>(v), 0, bytes); break;
    case ElemType::f64: q.enqueueFillBuffer(rec, static_cast<cl_double>(v), 0, bytes); break;
    case ElemType::i32:
        q.enqueueFillBuffer(rec, op == ReduceOp::sum ? cl_int(0) : op == ReduceOp::min ? INT32_MAX : INT32_MIN, 0, bytes);
        break;
    case ElemType::u32: q.enqueueFillBuffer(rec, op == ReduceOp::min ? UINT32_MAX : cl_uint(0), 0, bytes); break;
    case ElemType::i64:  // (validate() refuses buffers of long; kept whole for the type's sake)
        q.enqueueFillBuffer(rec, op == ReduceOp::sum ? cl_long(0) : op == ReduceOp::min ? INT64_MAX : INT64_MIN, 0, bytes);
        break;
    }
}

namespace {
/// Typed loops, so that the compiler vectorises them: a k-means step combines millions.
template <class T>
void combine_typed(ReduceOp op, const std::byte* p, std::uint64_t records, std::vector<double>& total) {
    const std::size_t R = total.size();
    std::vector<T> row(R);
    for (std::uint64_t r = 0; r < records; ++r) {
        std::memcpy(row.data(), p + r * R * sizeof(T), R * sizeof(T));
        double* t = total.data();
        switch (op) {
        case ReduceOp::sum: for (std::size_t j = 0; j < R; ++j) t[j] += double(row[j]); break;
        case ReduceOp::min: for (std::size_t j = 0; j < R; ++j) t[j] = std::min(t[j], double(row[j])); break;
        case ReduceOp::max: for (std::size_t j = 0; j < R; ++j) t[j] = std::max(t[j], double(row[j])); break;
        }
    }
}
}  // namespace

namespace {
void combine_serial(ReduceOp op, ElemType t, const std::byte* p, std::uint64_t records, std::vector<double>& total) {
    switch (t) {
    case ElemType::f32: combine_typed<float>(op, p, records, total); break;
    case ElemType::f64: combine_typed<double>(op, p, records, total); break;
    case ElemType::i32: combine_typed<std::int32_t>(op, p, records, total); break;
    case ElemType::u32: combine_typed<std::uint32_t>(op, p, records, total); break;
    case ElemType::i64: combine_typed<std::int64_t>(op, p, records, total); break;
    }
}
}  // namespace

void combine_records(ReduceOp op, ElemType t, const std::byte* p, std::uint64_t records, std::vector<double>& total) {
    // Millions of elements (k-means: 65,536 records of 272 per step on one GPU): contiguous runs
    // of records on several threads, each into its own totals (doubles), combined in run order.
    constexpr std::uint64_t kPerThread = 1u << 20;
    const std::uint64_t elements = records * total.size();
    const std::uint64_t threads = std::min<std::uint64_t>(
        {std::max(1u, std::thread::hardware_concurrency()), 8, std::max<std::uint64_t>(elements / kPerThread, 1)});
    if (threads <= 1) {
        combine_serial(op, t, p, records, total);
        return;
    }
    const std::size_t bytes = total.size() * elem_size(t);
    std::vector<std::vector<double>> part(threads, std::vector<double>(total.size(), identity(op)));
    std::vector<std::future<void>> done;
    for (std::uint64_t i = 0; i < threads; ++i) {
        const std::uint64_t first = records * i / threads, last = records * (i + 1) / threads;
        done.push_back(std::async(std::launch::async, [&, i, first, last] {
            combine_serial(op, t, p + first * bytes, last - first, part[i]);
        }));
    }
    for (auto& f : done) f.get();
    for (const auto& x : part)
        for (std::size_t j = 0; j < total.size(); ++j) total[j] = combine(op, total[j], x[j]);
}

double load(const std::byte* p, ElemType t, std::size_t i) {
    switch (t) {
    case ElemType::f32: { float v; std::memcpy(&v, p + i * 4, 4); return v; }
    case ElemType::f64: { double v; std::memcpy(&v, p + i * 8, 8); return v; }
    case ElemType::i32: { std::int32_t v; std::memcpy(&v, p + i * 4, 4); return v; }
    case ElemType::u32: { std::uint32_t v; std::memcpy(&v, p + i * 4, 4); return v; }
    case ElemType::i64: { std::int64_t v; std::memcpy(&v, p + i * 8, 8); return double(v); }
    }
    return 0;
}

void store(std::byte* p, ElemType t, std::size_t i, double v) {
    switch (t) {
    case ElemType::f32: { const float x = float(v); std::memcpy(p + i * 4, &x, 4); break; }
    case ElemType::f64: std::memcpy(p + i * 8, &v, 8); break;
    case ElemType::i32: { const std::int32_t x = std::int32_t(v); std::memcpy(p + i * 4, &x, 4); break; }
    case ElemType::u32: { const std::uint32_t x = std::uint32_t(v); std::memcpy(p + i * 4, &x, 4); break; }
    case ElemType::i64: { const std::int64_t x = std::int64_t(v); std::memcpy(p + i * 8, &x, 8); break; }
    }
}

}  // namespace worksize::data
