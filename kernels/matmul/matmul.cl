// matmul.cl: FP32 C = A·B for worksize's matmul job (kernels/matmul/job.cpp), row-major,
// A M×K, B K×N, C M×N, where M is the number of rows of the slice. The job is a declared one
// (declared_job.hpp): A and C split by row units, B shared, so a device holds its rows of A and C
// and all of B. OpenCL C 1.2.
//
// Geometry ("range extension"): work-item (gx, gy) computes WPT consecutive rows of one column,
// C[gy·WPT + w][gx] for w < WPT, so the NDRange is (N, ceil(M/WPT)). The slice is launched with
// a global offset along y (its first row unit), so rows within the slice count from
// get_global_offset(1); group ids count from the slice already. WPT comes from the host as
// -DWPT=… built from the same constant it uses for the geometry. The last row unit may be
// partial, and the host pads the NDRange to whole work-groups: every access is guarded.
//
// Three kernels (the job picks one by its parameters):
//  - matmul_reg (below, built only with -DBM=...): register tiling with compile-time tile sizes.
//  - matmul_tiled: local-memory tiling for an explicit local size. The local size (LX, LY) is
//    read at run time (any values: non-powers of two, (1024,1), (1,512)); the host sizes the
//    two tiles, passed as __local arguments: As (LY·WPT)×TK and Bs TK×LX, with the tile depth
//    TK chosen so both fit the device's local memory. Out-of-range elements of a partial tile
//    (any M, N, K) are loaded as zeros, so the inner loop needs no guard.
//  - matmul_direct: no local memory. Used for a NULL local size (the driver picks the work-group,
//    so the host cannot size the tiles) and when even TK = 1 tiles would not fit local memory.
// The first two take WPT rows per work-item (above); matmul_reg has its own geometry.
// Accumulation is in float; the host's check allows the classical rounding bound for any
// summation order, so contraction into fma (GPUs) is fine here.

#ifndef WPT
#define WPT 4
#endif

__kernel void matmul_tiled(const int M, const int N, const int K, const int TK,
                           __global const float* restrict A, __global const float* restrict B,
                           __global float* restrict C, __local float* As, __local float* Bs) {
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int LX = (int)get_local_size(0);
    const int LY = (int)get_local_size(1);
    const int col = (int)get_global_id(0);
    const int row0 = ((int)get_global_id(1) - (int)get_global_offset(1)) * WPT;  // within the slice
    // First column / row of the group's tiles (not group_id·LX: right for a partial last group
    // too, should a driver run one).
    const int tile_col0 = col - lx;
    const int tile_row0 = row0 - ly * WPT;
    const int tid = ly * LX + lx;
    const int nthreads = LX * LY;
    const int a_elems = LY * WPT * TK;
    const int b_elems = TK * LX;

    float acc[WPT];
    for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TK) {
        // A tile: LY·WPT rows × TK columns; consecutive work-items read consecutive k.
        for (int i = tid; i < a_elems; i += nthreads) {
            const int r = i / TK;
            const int c = i - r * TK;
            const int gr = tile_row0 + r;
            const int gk = k0 + c;
            As[i] = (gr < M && gk < K) ? A[(size_t)gr * K + gk] : 0.0f;
        }
        // B tile: TK rows × LX columns; consecutive work-items read consecutive columns.
        for (int i = tid; i < b_elems; i += nthreads) {
            const int r = i / LX;
            const int c = i - r * LX;
            const int gk = k0 + r;
            const int gc = tile_col0 + c;
            Bs[i] = (gk < K && gc < N) ? B[(size_t)gk * N + gc] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TK; ++kk) {
            const float b = Bs[kk * LX + lx];
            for (int w = 0; w < WPT; ++w) acc[w] += As[(ly * WPT + w) * TK + kk] * b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (col < N)
        for (int w = 0; w < WPT; ++w)
            if (row0 + w < M) C[(size_t)(row0 + w) * N + col] = acc[w];
}

__kernel void matmul_direct(const int M, const int N, const int K,
                            __global const float* restrict A, __global const float* restrict B,
                            __global float* restrict C) {
    const int col = (int)get_global_id(0);
    const int row0 = ((int)get_global_id(1) - (int)get_global_offset(1)) * WPT;  // within the slice
    if (col >= N || row0 >= M) return;  // no barriers in this kernel

    float acc[WPT];
    for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;
    for (int k = 0; k < K; ++k) {
        const float b = B[(size_t)k * N + col];
        for (int w = 0; w < WPT; ++w) {
            const int r = min(row0 + w, M - 1);  // a partial last unit re-reads row M-1
            acc[w] += A[(size_t)r * K + k] * b;
        }
    }
    for (int w = 0; w < WPT; ++w)
        if (row0 + w < M) C[(size_t)(row0 + w) * N + col] = acc[w];
}

// ---------------------------------------------------------------------------------------------
// matmul_reg: register-tiled variant. Its tile sizes are -D parameters, which also fix the
// work-group shape (the host builds one program per parameter set and launches exactly that
// shape):
//   BM×BN   the C tile of one work-group, BK the depth of the A and B tiles staged in local
//           memory per step;
//   TM×TN   the C block of one work-item (registers), so the group is (BN/TN, BM/TM);
//   VW      the width of the global loads (1, 2 or 4 floats);
//   A_VEC, B_VEC  1 when K (for A) or N (for B) is a multiple of VW: rows then start on VW-float
//           boundaries and whole-tile loads use float2/float4; otherwise, and for partial tiles
//           at the edges, scalar loads with guards (zeros outside the matrix).
// The NDRange is (ceil(N/TN), ceil(M/TM)) padded to whole groups; a work-item past the edges
// computes on zeros and stores nothing, so any M, N, K (primes, 1, less than one tile) works.
// Work-item (tx, ty) owns rows ty·RW + i·(WY·RW) + r and columns tx·CW + j·(WX·CW) + c (RW, CW:
// 4 when TM, TN are multiples of 4, else 1): the float4 reads from local memory of a warp are
// then consecutive (no bank conflicts) and so are the stores of C. A is kept transposed in local
// memory (As[k][m], row length BM + 4 against bank conflicts of the transposing stores). The next
// tiles are fetched into registers while the current ones are multiplied (register prefetch).
#ifdef BM

#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#define WX (BN / TN)
#define WY (BM / TM)
#define NT (WX * WY)
#define LDA (BM + 4)
#define LDB (BN + 4)
#define A_LOADS (BM * BK / (VW * NT))  // vectors of A per work-item per tile
#define B_LOADS (BK * BN / (VW * NT))
#define A_VPR (BK / VW)                // vectors per row of the A tile
#define B_VPR (BN / VW)
#if TM % 4 == 0
#define RW 4
#else
#define RW 1
#endif
#if TN % 4 == 0
#define CW 4
#else
#define CW 1
#endif

#if VW == 4
typedef float4 floatv;
#elif VW == 2
typedef float2 floatv;
#endif

inline void load_vec(float* dst, const __global float* src) {
#if VW == 1
    dst[0] = src[0];
#else
    union {
        floatv v;
        float s[VW];
    } u;
    u.v = *(const __global floatv*)src;
    for (int v = 0; v < VW; ++v) dst[v] = u.s[v];
#endif
}

__kernel __attribute__((reqd_work_group_size(WX, WY, 1))) void matmul_reg(
    const int M, const int N, const int K, __global const float* restrict A,
    __global const float* restrict B, __global float* restrict C) {
    __local float As[BK * LDA] __attribute__((aligned(16)));
    __local float Bs[BK * LDB] __attribute__((aligned(16)));
    const int tx = (int)get_local_id(0);
    const int ty = (int)get_local_id(1);
    const int tid = ty * WX + tx;
    const int row0 = (int)get_group_id(1) * BM;
    const int col0 = (int)get_group_id(0) * BN;

    float acc[TM][TN];
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    float ar[A_LOADS * VW], br[B_LOADS * VW];

    // Fetch the tiles at depth k0 into ar / br.
#define FETCH(k0)                                                                           \
    {                                                                                       \
        const bool a_full = A_VEC && row0 + BM <= M && (k0) + BK <= K;                      \
        for (int l = 0; l < A_LOADS; ++l) {                                                 \
            const int idx = l * NT + tid;                                                   \
            const int r = idx / A_VPR, c = (idx - r * A_VPR) * VW;                          \
            const int gr = row0 + r, gk = (k0) + c;                                         \
            if (a_full) {                                                                   \
                load_vec(ar + l * VW, A + (size_t)gr * K + gk);                            \
            } else {                                                                        \
                for (int v = 0; v < VW; ++v)                                                \
                    ar[l * VW + v] = (gr < M && gk + v < K) ? A[(size_t)gr * K + gk + v] : 0.0f; \
            }                                                                               \
        }                                                                                   \
        const bool b_full = B_VEC && col0 + BN <= N && (k0) + BK <= K;                      \
        for (int l = 0; l < B_LOADS; ++l) {                                                 \
            const int idx = l * NT + tid;                                                   \
            const int r = idx / B_VPR, c = (idx - r * B_VPR) * VW;                          \
            const int gk = (k0) + r, gc = col0 + c;                                         \
            if (b_full) {                                                                   \
                load_vec(br + l * VW, B + (size_t)gk * N + gc);                            \
            } else {                                                                        \
                for (int v = 0; v < VW; ++v)                                                \
                    br[l * VW + v] = (gk < K && gc + v < N) ? B[(size_t)gk * N + gc + v] : 0.0f; \
            }                                                                               \
        }                                                                                   \
    }

    FETCH(0)
    for (int k0 = 0; k0 < K; k0 += BK) {
        // The fetched tiles into local memory (A transposed).
        for (int l = 0; l < A_LOADS; ++l) {
            const int idx = l * NT + tid;
            const int r = idx / A_VPR, c = (idx - r * A_VPR) * VW;
            for (int v = 0; v < VW; ++v) As[(c + v) * LDA + r] = ar[l * VW + v];
        }
        for (int l = 0; l < B_LOADS; ++l) {
            const int idx = l * NT + tid;
            const int r = idx / B_VPR, c = (idx - r * B_VPR) * VW;
            for (int v = 0; v < VW; ++v) Bs[r * LDB + c + v] = br[l * VW + v];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + BK < K) FETCH(k0 + BK)  // the next tiles, while these are multiplied
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#if RW == 4
            for (int i = 0; i < TM / 4; ++i) {
                const float4 t = *(const __local float4*)(As + kk * LDA + i * (WY * 4) + ty * 4);
                a[4 * i] = t.s0;
                a[4 * i + 1] = t.s1;
                a[4 * i + 2] = t.s2;
                a[4 * i + 3] = t.s3;
            }
#else
            for (int i = 0; i < TM; ++i) a[i] = As[kk * LDA + i * WY + ty];
#endif
#if CW == 4
            for (int j = 0; j < TN / 4; ++j) {
                const float4 t = *(const __local float4*)(Bs + kk * LDB + j * (WX * 4) + tx * 4);
                b[4 * j] = t.s0;
                b[4 * j + 1] = t.s1;
                b[4 * j + 2] = t.s2;
                b[4 * j + 3] = t.s3;
            }
#else
            for (int j = 0; j < TN; ++j) b[j] = Bs[kk * LDB + j * WX + tx];
#endif
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#undef FETCH

    for (int i = 0; i < TM; ++i) {
        const int gr = row0 + (i / RW) * (WY * RW) + ty * RW + i % RW;
        if (gr >= M) continue;
        for (int j = 0; j < TN; ++j) {
            const int gc = col0 + (j / CW) * (WX * CW) + tx * CW + j % CW;
            if (gc < N) C[(size_t)gr * N + gc] = acc[i][j];
        }
    }
}

#endif  // BM
