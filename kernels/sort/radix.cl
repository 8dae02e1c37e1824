// LSD radix sort of floats (sample kernel "sort", algorithm "radix"), OpenCL C 1.2.
//
// Build options (the host sets them, defaults below):
//   -DRADIX_WG=n     work-group size, a power of two (every kernel requires it);
//   -DRADIX_BITS=b   bits per pass, 1..8 (2^b digits); ceil(32/b) passes;
//   -DRADIX_ITEMS=k  keys per work-item in a tile: a tile is RADIX_WG * RADIX_ITEMS keys;
//   -DRADIX_SPLIT=s  bits per stable split of radix_scatter's local sort, 1 or 2.
// Floats become order-preserving uint keys (radix_to_keys: negatives have all bits flipped,
// positives the sign bit set, so -0.0 sorts just below +0.0) and back (radix_from_keys). One pass
// over bits [shift, shift + b):
//   1. radix_histogram: work-group g counts the digits of tile g in local memory and writes
//      hist[d * tiles + g] (digit-major, so that one exclusive scan gives every tile's base);
//   2. radix_scan_reduce / radix_scan_top / radix_scan_down: a hierarchical exclusive scan of
//      hist (block sums, one work-group scans the sums, each block scans itself from its sum);
//   3. radix_scatter: work-group g loads tile g into local memory, sorts it stably by the digit
//      with one split per RADIX_SPLIT bits (one work-group prefix sum of each work-item's packed
//      counts of the 2 or 4 sub-digits; an odd remainder ends on a 1-bit split), and writes
//      key i of digit d to hist[d * tiles + g] + (i - first index of d in the tile): keys of one
//      digit go to consecutive addresses, so the global writes are coalesced.
// The last tile is filled with 0xFFFFFFFF past n: those keys are not counted, stay behind every
// real key of the top digit (the splits are stable) and land at positions >= n, never written.
// Indices are 32-bit: the host refuses n > 2^31.
#ifndef RADIX_WG
#define RADIX_WG 256
#endif
#ifndef RADIX_BITS
#define RADIX_BITS 4
#endif
#ifndef RADIX_ITEMS
#define RADIX_ITEMS 8
#endif
#define RADIX_DIGITS (1u << RADIX_BITS)
#define RADIX_TILE (RADIX_WG * RADIX_ITEMS)

__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_to_keys(__global const float* in, __global uint* keys, const uint n)
{
    for (uint i = (uint)get_global_id(0); i < n; i += (uint)get_global_size(0)) {
        const uint b = as_uint(in[i]);
        keys[i] = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    }
}

__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_from_keys(__global const uint* keys, __global float* out, const uint n)
{
    for (uint i = (uint)get_global_id(0); i < n; i += (uint)get_global_size(0)) {
        const uint k = keys[i];
        out[i] = as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
    }
}

// The local sort of radix_scatter splits RADIX_SPLIT (1 or 2) bits at a time: a stable 2- or
// 4-way split. Each work-item counts its keys of each sub-digit in 16-bit fields of a ulong (a
// tile has at most 65535 keys, so no field overflows), and ONE exclusive scan of those packed
// counts gives every sub-digit's offset at once.
#ifndef RADIX_SPLIT
#define RADIX_SPLIT 2
#endif
#if RADIX_SPLIT != 1 && RADIX_SPLIT != 2
#error "RADIX_SPLIT must be 1 or 2"
#endif
#if RADIX_TILE > 65535
#error "RADIX_WG * RADIX_ITEMS must be at most 65535 (16-bit digit counts)"
#endif
// The scan rakes: RADIX_RAKERS work-items each scan RADIX_RAKE consecutive entries serially.
#if RADIX_WG >= 256
#define RADIX_RAKE (RADIX_WG / 32)
#elif RADIX_WG >= 8
#define RADIX_RAKE 8
#else
#define RADIX_RAKE RADIX_WG
#endif
#define RADIX_RAKERS (RADIX_WG / RADIX_RAKE)
// Local arrays indexed with one padding word per 32 (per RADIX_RAKE ulongs in the scan), so that
// work-items reading consecutive runs of keys hit distinct banks.
#define TILE_AT(i) ((i) + ((i) >> 5))
#define RAKE_AT(i) ((i) + (i) / RADIX_RAKE)

// Exclusive prefix sum of v over the work-group, by raking: two barriers, where a Hillis-Steele
// scan takes two per doubling step. *total gets the sum of all. Every work-item must call it, and
// the caller must pass a barrier before the next call (tmp and part are read after the last one).
ulong wg_exclusive_scan(const ulong v, __local ulong* tmp, __local ulong* part, ulong* total)
{
    const uint lid = (uint)get_local_id(0);
    tmp[RAKE_AT(lid)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < RADIX_RAKERS) {
        ulong s = 0;
        for (uint j = 0; j < RADIX_RAKE; ++j) {  // inclusive scan of the run, in place
            const uint i = RAKE_AT(lid * RADIX_RAKE + j);
            s += tmp[i];
            tmp[i] = s;
        }
        part[lid] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint r = lid / RADIX_RAKE;
    ulong e = (lid % RADIX_RAKE) ? tmp[RAKE_AT(lid - 1u)] : 0;
    ulong t = 0;
    for (uint j = 0; j < RADIX_RAKERS; ++j) {  // the same reads on every work-item: broadcasts
        if (j == r) e += t;
        t += part[j];
    }
    *total = t;
    return e;
}

// One work-group per tile (the NDRange is tiles * RADIX_WG).
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_histogram(__global const uint* keys, __global uint* hist, const uint n, const uint shift)
{
    __local uint counts[RADIX_DIGITS];
    const uint lid = (uint)get_local_id(0);
    const uint g = (uint)get_group_id(0);
    const uint tiles = (uint)get_num_groups(0);
    for (uint d = lid; d < RADIX_DIGITS; d += RADIX_WG) counts[d] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint base = g * RADIX_TILE;
    for (uint k = 0; k < RADIX_ITEMS; ++k) {
        const uint i = base + k * RADIX_WG + lid;
        if (i < n) atomic_inc(&counts[(keys[i] >> shift) & (RADIX_DIGITS - 1u)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = lid; d < RADIX_DIGITS; d += RADIX_WG) hist[d * tiles + g] = counts[d];
}

// Block b (RADIX_TILE entries of a) -> sums[b].
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scan_reduce(__global const uint* a, __global uint* sums, const uint m)
{
    __local ulong tmp[RAKE_AT(RADIX_WG)];
    __local ulong part[RADIX_RAKERS];
    const uint lid = (uint)get_local_id(0);
    const uint base = (uint)get_group_id(0) * RADIX_TILE;
    uint s = 0u;
    for (uint k = 0; k < RADIX_ITEMS; ++k) {
        const uint i = base + k * RADIX_WG + lid;
        if (i < m) s += a[i];
    }
    ulong total;
    wg_exclusive_scan(s, tmp, part, &total);
    if (lid == 0u) sums[get_group_id(0)] = (uint)total;
}

// One work-group: exclusive scan of sums[0, nb) in place, RADIX_WG at a time.
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scan_top(__global uint* sums, const uint nb)
{
    __local ulong tmp[RAKE_AT(RADIX_WG)];
    __local ulong part[RADIX_RAKERS];
    const uint lid = (uint)get_local_id(0);
    uint carry = 0u;
    for (uint base = 0; base < nb; base += RADIX_WG) {
        const uint i = base + lid;
        const uint v = i < nb ? sums[i] : 0u;
        ulong total;
        const uint e = (uint)wg_exclusive_scan(v, tmp, part, &total);
        if (i < nb) sums[i] = carry + e;
        carry += (uint)total;
        barrier(CLK_LOCAL_MEM_FENCE);  // before the next scan overwrites tmp and part
    }
}

// Block b: exclusive scan of its entries in place, starting from sums[b]. Work-item t takes
// RADIX_ITEMS consecutive entries.
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scan_down(__global uint* a, __global const uint* sums, const uint m)
{
    __local ulong tmp[RAKE_AT(RADIX_WG)];
    __local ulong part[RADIX_RAKERS];
    const uint lid = (uint)get_local_id(0);
    const uint first = (uint)get_group_id(0) * RADIX_TILE + lid * RADIX_ITEMS;
    uint v[RADIX_ITEMS];
    uint s = 0u;
    for (uint k = 0; k < RADIX_ITEMS; ++k) {
        v[k] = first + k < m ? a[first + k] : 0u;
        s += v[k];
    }
    ulong total;
    uint run = sums[get_group_id(0)] + (uint)wg_exclusive_scan(s, tmp, part, &total);
    for (uint k = 0; k < RADIX_ITEMS; ++k) {
        if (first + k < m) a[first + k] = run;
        run += v[k];
    }
}

// One work-group per tile: stable local sort of the tile by the digit, then the coalesced
// scatter to dst at the scanned bases (offs = the scanned hist).
__kernel __attribute__((reqd_work_group_size(RADIX_WG, 1, 1)))
void radix_scatter(__global const uint* src, __global uint* dst, __global const uint* offs,
                   const uint n, const uint shift)
{
    // Two tiles: each split reads one and writes the other, so one barrier per split suffices.
    __local uint tile[2][TILE_AT(RADIX_TILE)];
    __local ulong tmp[RAKE_AT(RADIX_WG)];
    __local ulong part[RADIX_RAKERS];
    __local uint first[RADIX_DIGITS];
    const uint lid = (uint)get_local_id(0);
    const uint g = (uint)get_group_id(0);
    const uint tiles = (uint)get_num_groups(0);
    const uint base = g * RADIX_TILE;
    for (uint k = 0; k < RADIX_ITEMS; ++k) {
        const uint i = k * RADIX_WG + lid;
        tile[0][TILE_AT(i)] = base + i < n ? src[base + i] : 0xFFFFFFFFu;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Work-item lid holds the tile's keys [lid * ITEMS, (lid + 1) * ITEMS): the order of the
    // work-items and of their keys is the tile's order, so each split below is stable.
    uint key[RADIX_ITEMS];
    for (uint k = 0; k < RADIX_ITEMS; ++k) key[k] = tile[0][TILE_AT(lid * RADIX_ITEMS + k)];
    // A split writes the tile its keys did not come from: that tile's last reads came before
    // this split's scan, whose barriers separate them from the writes.
    uint cur = 0u;
    const uint top = min(shift + RADIX_BITS, 32u);
    for (uint bit = shift; bit < top; bit += RADIX_SPLIT) {
        const uint mask = (1u << min((uint)RADIX_SPLIT, top - bit)) - 1u;  // 1 or 2 bits
        ulong c = 0;
        for (uint k = 0; k < RADIX_ITEMS; ++k) c += (ulong)1 << (16u * ((key[k] >> bit) & mask));
        ulong total;
        const ulong pre = wg_exclusive_scan(c, tmp, part, &total);
        // Field d of pos: where this work-item's next key of sub-digit d goes, i.e. the keys of
        // the lower sub-digits in the tile plus those of d before this work-item.
        ulong pos = (total << 16) + (total << 32) + (total << 48) + pre;
        for (uint k = 0; k < RADIX_ITEMS; ++k) {
            const uint f = 16u * ((key[k] >> bit) & mask);
            tile[cur ^ 1u][TILE_AT((uint)(pos >> f) & 0xFFFFu)] = key[k];
            pos += (ulong)1 << f;
        }
        cur ^= 1u;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < RADIX_ITEMS; ++k) key[k] = tile[cur][TILE_AT(lid * RADIX_ITEMS + k)];
    }
    __local const uint* sorted = tile[cur];
    // The first index of each digit present in the tile.
    for (uint i = lid; i < RADIX_TILE; i += RADIX_WG) {
        const uint d = (sorted[TILE_AT(i)] >> shift) & (RADIX_DIGITS - 1u);
        if (i == 0u || ((sorted[TILE_AT(i - 1u)] >> shift) & (RADIX_DIGITS - 1u)) != d) first[d] = i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < RADIX_TILE; i += RADIX_WG) {
        const uint k = sorted[TILE_AT(i)];
        const uint d = (k >> shift) & (RADIX_DIGITS - 1u);
        const uint pos = offs[d * tiles + g] + (i - first[d]);
        if (pos < n) dst[pos] = k;
    }
}
