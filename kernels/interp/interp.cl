// interp.cl: FP32 bilinear image resize for worksize's interp job (kernels/interp/job.cpp).
// OpenCL C 1.2.
//
// Geometry: each work-item computes a block of VW consecutive output pixels in each of RY
// consecutive rows (VW = 1, 2, 4, 8 or 16 and RY = 1, 2, 4 or 8, from the host as -DVW=… -DRY=…,
// the same values it uses for the geometry), so the NDRange is (ceil(out_w / VW),
// ceil(out_h / RY)): x = group of VW columns, y = group of RY rows. A declared job (the data-job
// conventions, docs/porting.md): a slice launches row groups begin..end-1 with the global offset
// (0, begin), its output buffer holds its rows from output row row0 = begin·RY, and its input
// buffer only the input rows its taps reach, src_rows of them from input row src_row0
// (arg::origin of a buffer of its own in_h units). The last work-item of a row may be partial
// (out_w not a multiple of VW), so may the last row group (rows not a multiple of RY), and the
// host may pad the NDRange: every store is guarded.
//
// Work per work-item: the column taps (x0, x1, wx for each of the VW columns: most of the tap
// arithmetic) are computed once and reused for the RY rows; each row computes its own row taps
// (y0, y1, wy) and its two row pointers once, and reads the taps as 32-bit indices from them.
// Neighbouring work-items read neighbouring input columns (the taps of a warp's VW·32 pixels
// fall in a few cache lines of two input rows) and write one contiguous run of VW floats per
// row, as float4 (float2 for VW = 2) vector stores where the row start is aligned to VW floats
// (out_w a multiple of VW), else vstore4/vstore2 (any alignment) or, for the partial last
// work-item, one float at a time. The job counts the bytes moved as the input read once plus
// the output written once (docs/user-guide.md, "interp").
//
// Bit-exact with the CPU reference (InterpJob::verify): the host computes the float scale
// factors sx = in_w/out_w and sy = in_h/out_h once and passes them, so there is no division
// here; contraction into fma is off, and the reference does the same float operations in the
// same order for every pixel (reusing a column's taps for several rows changes none of them):
//   src = ((float)x + 0.5f) * s - 0.5f;  src = min(max(src, 0), n - 1);
//   i0 = floor(src); i1 = min(i0 + 1, n - 1); w = src - i0;
//   top = p00 + (p01 - p00) * wx;  bottom = p10 + (p11 - p10) * wx;
//   out = top + (bottom - top) * wy.
// The clamp keeps every tap inside the image for any x, so the pixels past out_w that a partial
// last work-item computes (and does not store) read in bounds; rows past the slice are neither
// computed nor stored.
//
// Two variants, chosen at build time by -DSTAGE (the job's `stage` parameter):
// - STAGE 0 (the default): the four taps of each pixel are loaded from global memory (through
//   the caches). No barriers and no local memory: correct for any local size, NULL included.
// - STAGE 1: the kernel requires work-groups of GX × GY work-items (-DGX, -DGY from the host;
//   reqd_work_group_size), whose output block is (GX·VW) × (GY·RY) pixels. The group first
//   copies the input the block needs (columns from the first pixel's left tap to the last
//   pixel's right tap, rows from the first row's top tap to the last row's bottom tap, clamped
//   to the slice's input rows) into a local tile of TH rows × TW floats (-DTW, -DTH: the host
//   sizes them for the job's scale factors within a local-memory budget, TW a multiple of 4),
//   with coalesced loads, float4 ones where the input width is a multiple of 4 (the span is
//   then widened to whole float4s); one barrier; then every pixel reads its taps from the tile,
//   with the same float operations in the same order. A group whose span does not fit the tile
//   (a downscale beyond what the host sized it for) loads its taps from global memory as STAGE
//   0 does: the choice is per group (uniform, taken before the barrier), so any scale stays
//   correct. The taps are monotonic in x and y, so every tap of the group's work-items (the
//   clamped ones past out_w included) lies inside the span. Work-items past the slice take part
//   in the copy and return after the barrier; a group wholly past it returns at once.

#pragma OPENCL FP_CONTRACT OFF

#ifndef VW
#define VW 4
#endif
#if VW != 1 && VW != 2 && VW != 4 && VW != 8 && VW != 16
#error "interp.cl: VW must be 1, 2, 4, 8 or 16"
#endif
#ifndef RY
#define RY 1
#endif
#if RY != 1 && RY != 2 && RY != 4 && RY != 8
#error "interp.cl: RY must be 1, 2, 4 or 8"
#endif

#ifndef STAGE
#define STAGE 0
#endif
#if STAGE
#if !defined(GX) || !defined(GY) || !defined(TW) || !defined(TH)
#error "interp.cl: STAGE 1 needs GX, GY (work-group) and TW, TH (local tile)"
#endif
#if TW % 4 != 0
#error "interp.cl: TW must be a multiple of 4"
#endif
#define INTERP_REQD __attribute__((reqd_work_group_size(GX, GY, 1)))
#else
#define INTERP_REQD
#endif

#define INTERP_CAT_(a, b) a##b
#define INTERP_CAT(a, b) INTERP_CAT_(a, b)
#if VW == 2
#define INTERP_SW 2
#define INTERP_STYPE float2
#define INTERP_SVEC(r, c) ((float2)((r)[(c)], (r)[(c) + 1]))
#else
#define INTERP_SW 4
#define INTERP_STYPE float4
#define INTERP_SVEC(r, c) ((float4)((r)[(c)], (r)[(c) + 1], (r)[(c) + 2], (r)[(c) + 3]))
#endif

// The source position along an axis of n pixels for output coordinate i (scale factor s):
// the two taps and the second's weight, as the CPU's source_tap().
inline void interp_tap(const int i, const float s, const int n, int* i0, int* i1, float* w) {
    const float t = (float)i + 0.5f;
    const float u = t * s;
    float f = u - 0.5f;
    f = fmin(fmax(f, 0.0f), (float)(n - 1));
    const float fl = floor(f);
    *i0 = (int)fl;
    *i1 = min(*i0 + 1, n - 1);
    *w = f - fl;
}

// One output pixel from its four taps and weights (the reference's blend(), operation by operation).
inline float interp_blend(const float p00, const float p01, const float p10, const float p11,
                          const float wx, const float wy) {
    const float dt = p01 - p00;
    const float et = dt * wx;
    const float top = p00 + et;
    const float db = p11 - p10;
    const float eb = db * wx;
    const float bottom = p10 + eb;
    const float dv = bottom - top;
    const float ev = dv * wy;
    return top + ev;
}

__kernel INTERP_REQD void interp_bilinear(__global const float* restrict in, __global float* restrict out,
                              const int in_w, const int in_h, const int out_w, const int out_h,
                              const int begin, const int end, const int src_row0, const int src_rows,
                              const float sx, const float sy) {
    const int xb = (int)get_global_id(0) * VW;  // first output column of this work-item
    const int row0 = begin * RY;                 // the slice's first output row: out's row 0
    const int rows = min(end * RY, out_h) - row0;  // the slice's output rows
    const int yb = ((int)get_global_id(1) - begin) * RY;  // the work-item's first row within the slice
#if STAGE
    __local float tile[TH * TW] __attribute__((aligned(16)));
    // The group's output block: columns gx0.., rows gy0.. of the slice (the NDRange starts at
    // row group `begin`, the global offset, which group ids do not count).
    const int gx0 = (int)get_group_id(0) * (GX * VW);
    const int gy0 = (int)get_group_id(1) * (GY * RY);
    if (gx0 >= out_w || gy0 >= rows) return;  // the whole group is past the slice
    int tc0, tc1, tr0, tr1, unused;
    float wunused;
    // Input columns [tc0, tc1]: the first pixel's left tap to the block's last pixel's right
    // tap (past out_w too: the partial last work-item computes those pixels, clamped).
    interp_tap(gx0, sx, in_w, &tc0, &unused, &wunused);
    interp_tap(gx0 + GX * VW - 1, sx, in_w, &unused, &tc1, &wunused);
    // Slice input rows [tr0, tr1]: the first row's top tap to the last row's bottom tap.
    interp_tap(row0 + gy0, sy, in_h, &tr0, &unused, &wunused);
    interp_tap(row0 + min(gy0 + GY * RY, rows) - 1, sy, in_h, &unused, &tr1, &wunused);
    tr0 = clamp(tr0 - src_row0, 0, src_rows - 1);
    tr1 = clamp(tr1 - src_row0, 0, src_rows - 1);
    const bool vec = (in_w & 3) == 0;  // rows start on float4 boundaries
    if (vec) {                          // whole float4s (in_w is then a multiple of 4)
        tc0 &= ~3;
        tc1 |= 3;
    }
    const int ncols = tc1 - tc0 + 1, nrows = tr1 - tr0 + 1;
    const bool staged = ncols <= TW && nrows <= TH;  // the same for the whole group
    if (staged) {
        const int lid = (int)get_local_id(1) * GX + (int)get_local_id(0);
        __global const float* const src = in + (size_t)tr0 * in_w + tc0;
        if (vec) {
            const int n4 = ncols >> 2;
            for (int i = lid; i < n4 * nrows; i += GX * GY) {
                const int r = i / n4, c = (i - r * n4) << 2;
                *(__local float4*)(tile + r * TW + c) = *(__global const float4*)(src + (size_t)r * in_w + c);
            }
        } else {
            for (int i = lid; i < ncols * nrows; i += GX * GY) {
                const int r = i / ncols, c = i - r * ncols;
                tile[r * TW + c] = src[(size_t)r * in_w + c];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
    if (xb >= out_w || yb >= rows) return;  // the host may pad the NDRange

    // Once per work-item: the column taps of its VW columns, for all of its rows.
    int x0[VW], x1[VW];
    float wx[VW];
#pragma unroll
    for (int v = 0; v < VW; ++v) interp_tap(xb + v, sx, in_w, &x0[v], &x1[v], &wx[v]);

#pragma unroll
    for (int r = 0; r < RY; ++r) {
        const int gy = yb + r;  // row within the slice
        if (RY > 1 && gy >= rows) break;  // the slice's last row group may be partial

        // Once per row: the source rows and their weight.
        int y0, y1;
        float wy;
        interp_tap(row0 + gy, sy, in_h, &y0, &y1, &wy);
        // Rows relative to the slice's input rows; the clamp only keeps a host/device
        // disagreement (which verify() would report) from reading out of bounds.
        const int r0 = clamp(y0 - src_row0, 0, src_rows - 1);
        const int r1 = clamp(y1 - src_row0, 0, src_rows - 1);
        float res[VW];
#if STAGE
        if (staged) {
            // The two rows' starts in the tile, less the tile's first column.
            const int t = (r0 - tr0) * TW - tc0, b = (r1 - tr0) * TW - tc0;
#pragma unroll
            for (int v = 0; v < VW; ++v)
                res[v] = interp_blend(tile[t + x0[v]], tile[t + x1[v]], tile[b + x0[v]],
                                      tile[b + x1[v]], wx[v], wy);
        } else
#endif
        {
            __global const float* const top_row = in + (size_t)r0 * in_w;
            __global const float* const bottom_row = in + (size_t)r1 * in_w;
#pragma unroll
            for (int v = 0; v < VW; ++v)
                res[v] = interp_blend(top_row[x0[v]], top_row[x1[v]], bottom_row[x0[v]],
                                      bottom_row[x1[v]], wx[v], wy);
        }

        __global float* const o = out + (size_t)gy * out_w + xb;
#if VW == 1
        o[0] = res[0];
#else
        if (xb + VW <= out_w) {
            // Stores of SW = min(VW, 4) floats (128 bits at most: the widest store of GPUs).
            if (out_w % VW == 0) {  // aligned: the row start and xb are multiples of VW
#pragma unroll
                for (int c = 0; c < VW; c += INTERP_SW)
                    *(__global INTERP_STYPE*)(o + c) = INTERP_SVEC(res, c);
            } else {
#pragma unroll
                for (int c = 0; c < VW; c += INTERP_SW)
                    INTERP_CAT(vstore, INTERP_SW)(INTERP_SVEC(res, c), 0, o + c);
            }
        } else {
            // The partial last work-item. Unrolled with constant indices, so that res stays in
            // registers (a loop bound of out_w - xb would index it dynamically: private memory).
#pragma unroll
            for (int v = 0; v < VW; ++v)
                if (xb + v < out_w) o[v] = res[v];
        }
#endif
    }
}
