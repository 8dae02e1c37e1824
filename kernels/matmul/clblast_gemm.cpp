// matmul's CLBlast backend: see clblast_gemm.hpp.
#include "clblast_gemm.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "worksize/scheduler/types.hpp"

#ifdef WORKSIZE_HAVE_CLBLAST
#include <clblast.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#endif

namespace worksize::detail {

const char* clblast_missing_text() {
    return "backend clblast: this worksize was built without CLBlast (WORKSIZE_CLBLAST=OFF or "
           "libclblast-dev not found at configure time)";
}

#ifndef WORKSIZE_HAVE_CLBLAST

bool clblast_available() { return false; }

LibraryCall clblast_sgemm_call() {
    LibraryCall c;
    c.prepare = [](DeviceContext&, const std::vector<double>&, const std::string&) -> std::shared_ptr<void> {
        throw InvalidArgument(clblast_missing_text());
    };
    c.call = [](DeviceContext&, const std::vector<cl::Buffer>&, const std::vector<double>&, void*,
                const std::string&) -> LibraryRun { throw InvalidArgument(clblast_missing_text()); };
    return c;
}

#else

bool clblast_available() { return true; }

namespace {

/// CLBlast's own status names (clblast.h); the codes it shares with OpenCL go through
/// cl_error_name.
const char* status_name(clblast::StatusCode s) {
    using S = clblast::StatusCode;
    switch (s) {
        case S::kNotImplemented: return "kNotImplemented";
        case S::kInvalidMatrixA: return "kInvalidMatrixA";
        case S::kInvalidMatrixB: return "kInvalidMatrixB";
        case S::kInvalidMatrixC: return "kInvalidMatrixC";
        case S::kInvalidVectorX: return "kInvalidVectorX";
        case S::kInvalidVectorY: return "kInvalidVectorY";
        case S::kInvalidDimension: return "kInvalidDimension";
        case S::kInvalidLeadDimA: return "kInvalidLeadDimA";
        case S::kInvalidLeadDimB: return "kInvalidLeadDimB";
        case S::kInvalidLeadDimC: return "kInvalidLeadDimC";
        case S::kInvalidIncrementX: return "kInvalidIncrementX";
        case S::kInvalidIncrementY: return "kInvalidIncrementY";
        case S::kInsufficientMemoryA: return "kInsufficientMemoryA";
        case S::kInsufficientMemoryB: return "kInsufficientMemoryB";
        case S::kInsufficientMemoryC: return "kInsufficientMemoryC";
        case S::kInsufficientMemoryX: return "kInsufficientMemoryX";
        case S::kInsufficientMemoryY: return "kInsufficientMemoryY";
        case S::kInsufficientMemoryTemp: return "kInsufficientMemoryTemp";
        case S::kInvalidBatchCount: return "kInvalidBatchCount";
        case S::kInvalidOverrideKernel: return "kInvalidOverrideKernel";
        case S::kMissingOverrideParameter: return "kMissingOverrideParameter";
        case S::kInvalidLocalMemUsage: return "kInvalidLocalMemUsage";
        case S::kNoHalfPrecision: return "kNoHalfPrecision";
        case S::kNoDoublePrecision: return "kNoDoublePrecision";
        case S::kInvalidVectorScalar: return "kInvalidVectorScalar";
        case S::kInsufficientMemoryScalar: return "kInsufficientMemoryScalar";
        case S::kDatabaseError: return "kDatabaseError";
        case S::kUnknownError: return "kUnknownError";
        case S::kUnexpectedError: return "kUnexpectedError";
        default: return nullptr;
    }
}

/// A CLBlast call whose failure CLBlast reports itself on stderr ("CLBlast: Run-time error: -54
/// (8192 is larger than 4096)", from its DispatchException, which no setting silences): stderr
/// is a file during the call; CLBlast's lines are kept (`said`) for worksize's one-line error,
/// anything else written meanwhile (another thread's log) is passed on to stderr after it.
/// One call at a time (the file descriptor is the process's).
struct Quiet {
    clblast::StatusCode status = clblast::StatusCode::kSuccess;
    std::string said;  ///< CLBlast's own text, without its "CLBlast: " prefix
};
std::mutex stderr_mutex;

template <class F>
Quiet quietly(F&& call) {
    std::lock_guard<std::mutex> lock(stderr_mutex);
    Quiet q;
    std::fflush(stderr);
    const int file = memfd_create("worksize-clblast-stderr", 0);
    const int saved = file >= 0 ? dup(2) : -1;
    if (saved < 0 || dup2(file, 2) < 0) {  // no capture: CLBlast writes where it would
        if (file >= 0) close(file);
        if (saved >= 0) close(saved);
        q.status = call();
        return q;
    }
    try {
        q.status = call();
    } catch (...) {
        std::fflush(stderr);
        dup2(saved, 2);
        close(saved);
        close(file);
        throw;
    }
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string text;
    char buf[4096];
    for (off_t at = 0;;) {
        const ssize_t n = pread(file, buf, sizeof buf, at);
        if (n <= 0) break;
        text.append(buf, std::size_t(n));
        at += n;
    }
    close(file);
    std::string others;
    for (std::size_t from = 0; from < text.size();) {
        std::size_t end = text.find('\n', from);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(from, end - from);
        from = end + 1;
        if (line.rfind("CLBlast", 0) == 0) {
            const std::size_t colon = line.find(": ");
            q.said.append(q.said.empty() ? "" : "; ").append(colon == std::string::npos ? line : line.substr(colon + 2));
        } else {
            others.append(line).append("\n");
        }
    }
    if (!others.empty()) std::fputs(others.c_str(), stderr);
    return q;
}

/// Throw for a status other than kSuccess: codes OpenCL shares as a ClError (its reason:
/// device_limit, build_failure, ...), CLBlast's own as an Error naming them; what CLBlast said
/// about it (Quiet::said) joins the line.
void check(const Quiet& q, const std::string& call, const std::string& where) {
    const clblast::StatusCode s = q.status;
    if (s == clblast::StatusCode::kSuccess) return;
    const int code = static_cast<int>(s);
    const std::string said = q.said.empty() ? "" : ": CLBlast says '" + q.said + "'";
    if (const char* name = status_name(s)) {
        std::string what = "CLBlast ";
        what.append(call).append(" failed (").append(name).append(", ").append(std::to_string(code));
        what.append(") for ").append(where).append(said);
        throw Error(s == clblast::StatusCode::kInvalidLocalMemUsage ? ErrorReason::device_limit
                                                                   : ErrorReason::launch_failure,
                    what);
    }
    throw ClError("CLBlast " + call, static_cast<cl_int>(code), where + said);
}

/// Contexts whose CLBlast program is built. CLBlast caches its programs by context and device,
/// and a cached program keeps its context alive, so a handle here is never a new context's.
std::mutex warmed_mutex;
std::set<std::pair<cl_context, cl_device_id>> warmed;

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// WORKSIZE_CLBLAST_PARAMS: a JSON file of CLBlast kernel parameters, e.g. what CLBlast's tuner
/// found for a device its database lacks, as {"WORD": {"KERNEL": {"PARAM": value, ...}, ...}, ...}.
/// Each entry whose WORD the device's name contains (case-insensitive) goes to
/// clblast::OverrideParameters for single precision before CLBlast's first call on the device.
void apply_overrides(DeviceContext& ctx, const std::string& where) {
    const char* path = std::getenv("WORKSIZE_CLBLAST_PARAMS");
    if (!path || !*path) return;
    const std::string file = path;
    auto bad = [&](const std::string& why) {
        std::string what = "WORKSIZE_CLBLAST_PARAMS '";
        what.append(file).append("': ").append(why);
        throw InvalidArgument(what);
    };
    std::ifstream in(file);
    if (!in) bad("cannot read it");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        bad(std::string("not JSON: ") + e.what());
    }
    if (!j.is_object()) bad("expected {\"DEVICE WORD\": {\"KERNEL\": {\"PARAMETER\": value, ...}}}");
    const std::string device = lower(ctx.info().name);
    for (const auto& [word, kernels] : j.items()) {
        if (device.find(lower(word)) == std::string::npos) continue;
        if (!kernels.is_object()) bad("\"" + word + "\" is not an object of kernels");
        for (const auto& [kernel, params] : kernels.items()) {
            if (!params.is_object()) bad("\"" + word + "\"." + kernel + " is not an object of parameters");
            std::unordered_map<std::string, std::size_t> values;
            for (const auto& [name, v] : params.items()) {
                if (!v.is_number_unsigned()) bad(word + "." + kernel + "." + name + " is not a non-negative integer");
                values[name] = v.get<std::size_t>();
            }
            check(quietly([&] {
                      return clblast::OverrideParameters(ctx.device()(), kernel, clblast::Precision::kSingle, values);
                  }),
                  "OverrideParameters for " + kernel + " (WORKSIZE_CLBLAST_PARAMS)", where);
        }
    }
}

/// CLBlast compiles its GEMM program on its first call per device (about 1.5 s on NVIDIA): a
/// 1x1x1 SGEMM does it outside the timing, after WORKSIZE_CLBLAST_PARAMS's parameters are set.
void warm_up(DeviceContext& ctx, const std::string& where) {
    const auto key = std::make_pair(ctx.context()(), ctx.device()());
    {
        std::lock_guard<std::mutex> lock(warmed_mutex);
        if (warmed.count(key)) return;
    }
    apply_overrides(ctx, where);
    cl::Buffer one(ctx.context(), CL_MEM_READ_WRITE, 3 * sizeof(float));
    const float zeros[3] = {0, 0, 0};
    cl::CommandQueue& q = ctx.queue();
    q.enqueueWriteBuffer(one, CL_TRUE, 0, sizeof zeros, zeros);
    cl_command_queue qh = q();
    cl_event ev = nullptr;
    check(quietly([&] {
              return clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                                          1, 1, 1, 1.0f, one(), 0, 1, one(), 1, 1, 0.0f, one(), 2, 1, &qh, &ev);
          }),
          "SGEMM (warm-up)", where);
    if (ev) cl::Event(ev).wait();
    std::lock_guard<std::mutex> lock(warmed_mutex);
    warmed.insert(key);
}

/// A slice's CLBlast state: its temporary buffer (padded or transposed copies), allocated once
/// rather than by CLBlast inside every call.
struct SgemmState {
    std::size_t temp_bytes = 0;
    cl::Buffer temp;
};

/// m, n, k of the call's values.
std::array<std::size_t, 3> dims(const std::vector<double>& values, const std::string& where) {
    if (values.size() != 3) throw InvalidArgument("clblast_sgemm takes the values m, n, k, for " + where);
    return {std::size_t(values[0]), std::size_t(values[1]), std::size_t(values[2])};
}

std::shared_ptr<void> prepare(DeviceContext& ctx, const std::vector<double>& values, const std::string& where) {
    using clblast::Layout;
    using clblast::Transpose;
    const auto [m, n, k] = dims(values, where);
    warm_up(ctx, where);  // outside the timing: CLBlast compiles its program on first use
    auto state = std::make_shared<SgemmState>();
    cl_command_queue qh = ctx.queue()();
    check(quietly([&] {
              return clblast::GemmTempBufferSize<float>(Layout::kRowMajor, Transpose::kNo, Transpose::kNo, m, n, k, 0,
                                                        k, 0, n, 0, n, &qh, state->temp_bytes);
          }),
          "GemmTempBufferSize", where);
    if (state->temp_bytes > 0) state->temp = cl::Buffer(ctx.context(), CL_MEM_READ_WRITE, state->temp_bytes);
    return state;
}

/// C (m x n) = A (m x k) · B (k x n) on the slice's queue; the event of CLBlast's last kernel.
LibraryRun call(DeviceContext& ctx, const std::vector<cl::Buffer>& buffers, const std::vector<double>& values,
               void* state, const std::string& where) {
    using clblast::Layout;
    using clblast::Transpose;
    const auto [m, n, k] = dims(values, where);
    if (buffers.size() != 3) throw InvalidArgument("clblast_sgemm takes the buffers A, B, C, for " + where);
    auto& st = *static_cast<SgemmState*>(state);
    cl_command_queue qh = ctx.queue()();
    cl_event ev = nullptr;
    check(quietly([&] {
              return clblast::Gemm<float>(Layout::kRowMajor, Transpose::kNo, Transpose::kNo, m, n, k, 1.0f,
                                          buffers[0](), 0, k, buffers[1](), 0, n, 0.0f, buffers[2](), 0, n, &qh, &ev,
                                          st.temp_bytes > 0 ? st.temp() : nullptr);
          }),
          "SGEMM", where);
    return {cl::Event(ev), {}};  // takes CLBlast's reference; timed from the slice's marker
}

}  // namespace

LibraryCall clblast_sgemm_call() {
    return {prepare, call};
}

#endif

}  // namespace worksize::detail
