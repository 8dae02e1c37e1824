// A data job as plain structs: the buffers of an application, the kernels that touch them and how
// each kernel argument accesses its buffer along the split dimension (split one-to-one, a
// neighbourhood with a halo, all of it, a reduction, a scalar), run for a number of steps. From
// such a declaration and a plan, everything a device holds and sends follows (data_layout): the
// rows of each buffer it keeps, the halo rows it swaps with its neighbours, the records it
// reduces. The runtime (worksize/runtime/data_job.hpp) executes it; this header only declares,
// checks and derives, so that the checks and the traffic are testable without a device.
//
// The split dimension is the NDRange's last: rows (y) of a 2-D job of `width` columns, items (x)
// of a 1-D job. A "unit" is one row or item. A split buffer holds `pitch` elements per unit
// (a row of an image: pitch = width; a point of D coordinates: pitch = D).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worksize/scheduler/expr.hpp"
#include "worksize/scheduler/planner.hpp"
#include "worksize/scheduler/types.hpp"

namespace worksize {

/// Element types of a buffer (OpenCL C float, double, int, uint), of scalar arguments (those and
/// long) and of index arguments (int or long: ArgDecl::index_type). Buffers and __local arrays
/// of long are refused by validate().
enum class ElemType { f32, f64, i32, u32, i64 };
std::size_t elem_size(ElemType t);
const char* to_string(ElemType t);  ///< "float", "double", "int", "uint", "long"
ElemType parse_elem_type(const std::string& s);  ///< @throws InvalidArgument

enum class BufferLayout {
    split,   ///< units × pitch elements, each device holds its slice's rows (and halo rows)
    shared,  ///< `count` elements, every device holds all of them
};

struct BufferDecl {
    std::string name;
    ElemType type = ElemType::f32;
    BufferLayout layout = BufferLayout::split;
    std::uint64_t pitch = 1;   ///< split: elements per unit
    std::uint64_t count = 0;   ///< shared: elements
    bool input = false;        ///< rank 0 has its initial contents (sent once per device or rank)
    bool output = false;       ///< rank 0 gets it back at the end (and every gather_every steps)
    /// Split buffer of its own unit count, mapped linearly onto the job's units (see
    /// input_rows()), in a one-step job; 0: one unit per job unit. An input of another
    /// resolution (an image a resize reads: read() or halo(), the depth in its own rows), or,
    /// with a whole number R of its rows per job unit (map [R, 1]), a buffer the kernels write
    /// whose last job unit may hold fewer rows (an image split by groups of R rows).
    /// arg::origin gives the first of its rows a device holds.
    std::uint64_t units = 0;
    /// With `units`: job unit o maps onto the buffer's row o·map_num/map_den (0/0: units / the
    /// job's units), e.g. a job unit of R output rows reading an image of in rows for out output
    /// rows: [R·in, out].
    std::uint64_t map_num = 0, map_den = 0;
    /// The buffer's initial contents are not needed (job files: "init": "none"; SYCL's no_init):
    /// the kernels write every element before anything reads it, and every element rank 0 gets
    /// back, so the runtime does not zero-fill it on the devices. Not for an input. Without it a
    /// buffer that is not an input starts as zeros.
    bool no_init = false;
    /// A shared input that rank 0's host step writes (DataJobSpec::host_every): after each host
    /// step but the last, its new contents go to every device.
    bool host_written = false;
    /// Made on every rank, not sent: the runtime's generator of this name (register_generator()
    /// in worksize/runtime/data_job.hpp) fills each device's rows of it (a split buffer: its
    /// slice's and halo rows; a shared one: all of it) from `generator_args`. Not an input.
    std::string generator{};
    std::vector<std::int64_t> generator_args{};
};

/// A split buffer with its own unit count (BufferDecl::units).
inline bool scaled(const BufferDecl& d) { return d.layout == BufferLayout::split && d.units != 0; }

enum class ReduceOp { sum, min, max };
const char* to_string(ReduceOp op);
ReduceOp parse_reduce_op(const std::string& s);  ///< @throws InvalidArgument

enum class ArgKind {
    read,        ///< split buffer: the slice's rows, read only
    write,       ///< split buffer: the slice's rows, written (each device its own rows)
    read_write,  ///< split buffer: the slice's rows, read and written
    halo,        ///< split buffer: the slice's rows plus `depth` rows on each side, read only
    all,         ///< shared buffer, read only (broadcast once per rank)
    reduce,      ///< shared buffer: each launched work-item writes one record of `count`
                 ///< elements; the records of all devices are combined with `op`, in slice
                 ///< order, and the result is the buffer's new contents on every device.
                 ///< With `per_group`, one record per work-group instead (see ArgDecl)
    scalar,      ///< a value (`scalar_type`, `value`)
    begin,       ///< index: the first launched item along the split dimension (global index)
    end,         ///< index: one past the slice's last launched item (global index)
    origin,      ///< index: the global unit held in row 0 of `buffer` on this device
    local,       ///< a __local array of `value` elements of `scalar_type` per work-group
    step,        ///< index: the step's number (0 first) times `step_times` plus `step_plus`
    expr,        ///< index: an integer expression of the step and the launch (expr.hpp)
    scratch,     ///< shared buffer the kernels may write: each device's own copy, zeros at the
                 ///< start, never exchanged, combined or gathered (a kernel's debug output)
    value_of,    ///< shared buffer: its first element, passed by value (a scalar the host step
                 ///< computes, e.g. srad's q0sqr; the type is the buffer's)
};
const char* to_string(ArgKind k);
/// begin, end, origin and step: arguments that carry an index (int or long, ArgDecl::index_type).
inline bool is_index(ArgKind k) {
    return k == ArgKind::begin || k == ArgKind::end || k == ArgKind::origin || k == ArgKind::step ||
           k == ArgKind::expr;
}

struct ArgDecl {
    ArgKind kind = ArgKind::scalar;
    int buffer = -1;                 ///< index into DataJobSpec::buffers (buffer kinds, origin)
    std::uint64_t depth = 0;         ///< halo rows on each side
    ReduceOp op = ReduceOp::sum;
    ElemType scalar_type = ElemType::f32;
    double value = 0.0;              ///< scalar: the value (exact for integers up to 2^53); local: elements
    /// begin, end, origin, step (index arguments): the kernel parameter's type, i32 (int) or i64
    /// (long). validate() refuses an int that the job's items, the buffer's rows or the steps do
    /// not fit.
    ElemType index_type = ElemType::i32;
    /// step: the value bound in step s is s * step_times + step_plus (e.g. a kernel that advances
    /// k time steps per launch takes its first time step, s * k).
    std::int64_t step_times = 1, step_plus = 0;
    /// expr: the expression (expr.hpp; e.g. "min(h, rows - 1 - step * h)") and its constants.
    std::string expr{};
    ExprConstants constants{};
    /// reduce: the kernel reduces within each work-group (in __local memory) and writes one
    /// record per work-group, at record get_group_id(0), instead of one per work-item. The launch
    /// then always has a known work-group size: the kernel's required one, else the plan's, else
    /// (a NULL plan) the largest power of two up to 256 the compiled kernel allows. A slice's
    /// records beyond kMaxGroupRecords are tree-combined on the device before they are read back.
    bool per_group = false;
};

/// The most per-group records (ArgDecl::per_group) a slice reads back; more are tree-combined on
/// the device first, with the same tree as a work-group's (fan-in a power of two up to 256).
inline constexpr std::uint64_t kMaxGroupRecords = 1024;

/// The steps a kernel runs in (KernelDecl::runs).
enum class KernelRuns {
    every,       ///< every `every`-th step: steps every-1, 2·every-1, ... (every 1: each step)
    first_step,  ///< the first step only: a setup kernel (a transpose) declared before the others
    last_step,   ///< the last step only: a kernel that finishes the results, declared after them
    after_first, ///< every step but the first (a first step that only prepares, e.g. srad's
                 ///< reduction before its first update)
};
const char* to_string(KernelRuns r);

struct KernelDecl {
    std::string name;
    std::vector<ArgDecl> args;
    /// Units one launched work-item covers along the split dimension (e.g. a chunk of points a
    /// work-item reduces); the kernel's launched items over a slice are ceil(units / this).
    std::uint64_t units_per_item = 1;
    /// A work-group shape the kernel requires (__local tiles); {0,0}: any, the plan's.
    LocalSize required_local;
    /// The kernel indexes whole arrays by its global ids and guards only the whole problem's end
    /// (an application's kernel, unmodified): every split buffer it touches is held at its whole
    /// extent on each device (held_whole(): global row r at row r, arg::origin 0), of which a
    /// device keeps its slice's rows and their halos current, and each launch covers exactly its
    /// rows along the split dimension (its work-group's extent there divides them; only a launch
    /// that ends at the problem's end is padded). Slices start on multiples of
    /// kWholeArraysAlignment (data_granule()).
    bool whole_arrays = false;
    /// Launch geometry of its own (1-D jobs): work-groups of `group_items` work-items, each
    /// covering `group_units` units (Rodinia's pathfinder: 256 items per 216 columns, its pyramid's
    /// borders computed twice). A slice of U units launches ceil(U / group_units) groups, its
    /// global offset the slice's first group times group_items; slices start on multiples of
    /// group_units, and such launches are never split for overlap. 0: one item per unit (or
    /// units_per_item), work-groups of the plan's local size.
    std::uint64_t group_items = 0, group_units = 0;
    /// The kernel indexes its buffers from their start by work-group ids, not global ids (a port
    /// from CUDA: Rodinia's ei = get_group_id(0) * NUMBER_THREADS + get_local_id(0)), and stops
    /// at an element count it takes as an argument. Each launch then covers every row a device
    /// holds of its split buffers, halos included, from global offset 0: one work-item per element
    /// of the widest of them (rows × pitch), in work-groups of its required size; the rows of a
    /// halo are computed too (the neighbours' rows replace them, or they lie outside the
    /// problem). Its split buffers are all held with the same halo (halo_rows()), so that one
    /// index addresses the same row in each; a reduce() into a shared buffer combines only the
    /// records of the slice's own rows. 1-D jobs (srad: a column of the image per unit).
    bool slice_relative = false;
    /// The steps it runs in; within a step the kernels that run keep their declared order.
    KernelRuns runs = KernelRuns::every;
    std::uint64_t every = 1;
    /// Not an OpenCL kernel of the source but a library routine that the runtime calls with the
    /// same arguments (register_library_call, runtime/declared_job.hpp): matmul's CLBlast SGEMM.
    /// "" for a kernel. Declared kernel jobs' slices only (not a data job's steps).
    std::string library;
};

/// Whether kernel `k` runs in `step` of a job of `steps` steps.
bool runs_in(const KernelDecl& k, std::uint64_t step, std::uint64_t steps);
/// Whether kernel `k` runs in every step (the steady state the cost models count).
inline bool runs_every_step(const KernelDecl& k) { return k.runs == KernelRuns::every && k.every == 1; }
/// Whether kernel `k` runs in the steady state the cost models count: every step, or every step
/// but the first.
inline bool runs_steadily(const KernelDecl& k) { return runs_every_step(k) || k.runs == KernelRuns::after_first; }

/// The split granule a job with a whole_arrays kernel adds (data_granule()): rows of a 2-D job,
/// items of a 1-D one, so that a slice's exact launch keeps full work-groups.
inline constexpr std::uint64_t kWholeArraysAlignment2D = 16, kWholeArraysAlignment1D = 256;

struct DataJobSpec {
    std::string name;
    std::string source;              ///< the OpenCL C source of every kernel
    std::string build_options;
    int dims = 1;                    ///< 1: items along x; 2: `width` columns, rows along y
    std::uint64_t width = 1;         ///< 2-D: columns of the NDRange
    std::uint64_t units = 0;         ///< extent of the split dimension
    std::vector<BufferDecl> buffers;
    std::vector<KernelDecl> kernels; ///< run in order, every step
    /// After every step, these pairs of split buffers exchange their contents (double buffering).
    std::vector<std::pair<int, int>> swaps;
    std::uint64_t steps = 1;
    /// 0: rank 0 gathers the outputs at the end only; N: also after every N-th step.
    std::uint64_t gather_every = 0;
    /// Host steps: rank 0 runs the application's callback after every N-th step (0: none), the
    /// step's shared outputs (reduction results) in its memory; the buffers it writes
    /// (BufferDecl::host_written) then go to every device before the next step.
    std::uint64_t host_every = 0;
    /// Ghost zones: exchange halos only every k steps, k times as deep, and compute the rows
    /// in between redundantly (each step's launch covers the slice plus the rows the remaining
    /// steps until the next exchange will read). 1: every step. k > 1 needs a job of one kernel
    /// of one unit per item, without reductions.
    std::uint64_t exchange_every = 1;
    /// Operations per unit and step, for the planner's compute class (0: one per element).
    double ops_per_unit = 0.0;
};

nlohmann::json to_json(const DataJobSpec& spec);
/// @throws InvalidArgument naming the field that is missing or malformed.
DataJobSpec data_job_from_json(const nlohmann::json& j);

/// Checks the declaration on its own: names, shapes, every argument's access. A wrong one is
/// refused with one line naming the kernel and the argument, e.g. "kernel 'heat_step', argument 4
/// ('t'): overlapping writes: the kernel reads 't' with a halo and writes it, so a neighbour's rows
/// would change under it; write another buffer and swap them".
/// @throws InvalidArgument
void validate(const DataJobSpec& spec);

/// Halo rows allocated on each side of split buffer `b`: the deepest halo any kernel reads it
/// with, the same for both buffers of a swap pair (their contents trade places). With ghost
/// zones (exchange_every k > 1) every split buffer holds k times the job's deepest halo.
std::uint64_t halo_rows(const DataJobSpec& spec, int b);
/// The halo a slice_relative kernel's split buffers are all held with: the deepest of them
/// (0 for a buffer no such kernel touches).
std::uint64_t relative_halo(const DataJobSpec& spec, int b);
/// The widest pitch among the split buffers of kernel `k` (a slice_relative launch's items per row).
std::uint64_t widest_pitch(const DataJobSpec& spec, const KernelDecl& k);
/// The checks of slice_relative kernels and value_of arguments (validate() calls it).
void validate_relative(const DataJobSpec& spec);

/// Whether split buffer `b` is held at its whole extent on every device: a whole_arrays kernel
/// touches it (KernelDecl::whole_arrays). Shared buffers are whole anyway; false for them.
bool held_whole(const DataJobSpec& spec, int b);
/// The global unit (row) in row 0 of split buffer `b` on a device whose slice starts at
/// `offset`: 0 for a buffer held whole, else offset - halo_rows() (negative at the problem's
/// start: those rows are never read).
std::int64_t first_held_unit(const DataJobSpec& spec, int b, std::uint64_t offset);
/// Elements of buffer `b` a device allocates for a slice of `units` units: shared, its count;
/// held whole, all its rows × pitch; else (units + 2 halo_rows()) × pitch.
std::uint64_t held_elements(const DataJobSpec& spec, int b, std::uint64_t units);
/// Bytes of device memory a slice of `units` units takes: every buffer (held_elements()), not
/// counting reduction records.
std::uint64_t held_bytes(const DataJobSpec& spec, std::uint64_t units);

/// Bytes of one unit (row) of split buffer `d`: pitch × element size.
inline std::uint64_t row_bytes(const BufferDecl& d) { return d.pitch * elem_size(d.type); }

/// The rows [first, first + count) of split buffer `b` that the slice [offset, offset + units)
/// holds at the start: its own and its halo_rows(), within the problem. A buffer of its own
/// units (scaled()) of N rows and depth d (its deepest halo) holds
/// [floor(offset·num/den) - d, ceil((offset + units)·num/den) + d) within [0, N), in exact
/// integer arithmetic (num/den: map_num/map_den, by default N / the job's units); none for an
/// empty slice.
std::pair<std::uint64_t, std::uint64_t> input_rows(const DataJobSpec& spec, int b, std::uint64_t offset,
                                                   std::uint64_t units);

/// The split granule: every slice boundary a multiple of it (units per item, and the required
/// work-group's extent along the split dimension, together).
std::uint64_t data_granule(const DataJobSpec& spec);

/// The work-group shape every kernel of the job requires, when they all require the same one
/// (1-D: {x, 1}); else {0,0}: the plan's local size serves the kernels that require none.
LocalSize common_required_local(const DataJobSpec& spec);

/// What the planner needs: the descriptor (ops per unit, bytes per unit in and out, bytes every
/// device needs whole) and the NDRange, with the granule.
PlanRequest data_plan_request(const DataJobSpec& spec);

/// Ghost zones (exchange_every k > 1) make a slice compute, besides its own rows, on average
/// (k - 1)·h/2 redundant rows per step on each side that has a neighbour (h the deepest halo).
/// This moves rows from slices with more neighbours to the others so that own plus redundant
/// rows stay in the plan's proportions (Assignment::share, the devices' relative speeds). A
/// no-op without ghost zones, with fewer than two slices, or where a slice would get no rows.
/// Run before align_slices().
void balance_ghost_rows(const DataJobSpec& spec, std::vector<Assignment>& assignments);

/// The planner gives the granule's remainder to the first device with work; a data job's slices
/// must start on the granule (a chunk one work-item reduces, a required work-group's rows), so
/// this moves every remainder to the last slice and recomputes offsets and globals.
/// Ends with round_chunk_boundaries().
void align_slices(const DataJobSpec& spec, std::vector<Assignment>& assignments);

/// Work-items per group that slices of a 1-D job with a kernel of several units per item and no
/// required work-group are aligned to where it costs little (round_chunk_boundaries()).
inline constexpr std::uint64_t kChunkAlignment = 64;
/// A kernel of several units per item cannot pad its NDRange (it need not guard with `end`), so
/// its work-group must divide the slice's item count: an item count with no power-of-two factor
/// leaves it work-groups of a few items (7,091 items: groups of 7 on a GPU, 40 % slower than
/// 8,192 items in groups of 128). Each boundary between two slices moves to the nearest multiple
/// of granule·2^j, for the largest j with 2^j <= kChunkAlignment that moves it by at most 1/64 of
/// the smaller of its two slices (1-D jobs with such a kernel only; the last slice's end stays).
void round_chunk_boundaries(const DataJobSpec& spec, std::vector<Assignment>& assignments);

/// Checks the declaration against a plan's slices: a halo deeper than a neighbouring slice, a
/// required work-group size that does not fit. @throws InvalidArgument naming the argument.
void check_slices(const DataJobSpec& spec, const std::vector<Assignment>& assignments);

/// One device's slice and its place among the others.
struct SliceLayout {
    int device = 0;                  ///< Assignment::device
    int rank = 0;
    std::uint64_t offset = 0, units = 0;
    int left = -1, right = -1;       ///< neighbouring slices (indexes into DataLayout::slices)
};

/// Per step, the bytes each slice sends to its neighbours (halo rows) and into reductions,
/// derived from the declaration: what the runtime's counters must show.
struct DataLayout {
    std::vector<SliceLayout> slices;  ///< the non-empty slices, in order along the split dimension
    /// Per slice: halo bytes it sends per step (to other slices, on its rank or another).
    std::vector<std::uint64_t> halo_bytes_per_step;
};

DataLayout data_layout(const DataJobSpec& spec, const std::vector<Assignment>& assignments);

/// The deepest halo any kernel of the job reads (0: none).
std::uint64_t deepest_halo(const DataJobSpec& spec);
/// Ghost zones: the rows beyond its slice (each side) a launch covers in `step`: the rows the
/// steps until the next exchange will read; 0 without ghost zones.
std::uint64_t ghost_rows(const DataJobSpec& spec, std::uint64_t step);

/// Which buffers a step's kernel `k` needs fresh halos of before it runs: those it reads with a
/// halo that were written since their last exchange. `dirty` (one flag per buffer) says which
/// were written; the runtime and data_layout walk the steps with the same rules.
std::vector<int> halo_exchanges_before(const DataJobSpec& spec, std::size_t k, std::vector<bool>& dirty);
/// After kernel `k`: the buffers it wrote become dirty.
void mark_written(const DataJobSpec& spec, std::size_t k, std::vector<bool>& dirty);
/// After a step: the swap pairs exchange their contents and their dirty flags.
void apply_swaps(const DataJobSpec& spec, std::vector<bool>& dirty);

}  // namespace worksize
