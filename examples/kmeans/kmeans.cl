// k-means, one iteration = assign (one work-item per point) + accumulate (one work-item per point;
// each work-group sums its points per centre in __local memory and writes one record); the host
// turns the combined sums into the next centres.
// centres[j*(d+1)+dd] (dd<d): centre j; centres[j*(d+1)+d]: its point count (0: empty, skipped).
// sums / records[j*(d+1)+dd]: coordinate sums of the points of centre j; [j*(d+1)+d]: their count.
// Item indices are GLOBAL (the launch may cover a slice with a global offset and be padded,
// hence the guards); a buffer's element 0 holds global point `*_origin`.
#pragma OPENCL FP_CONTRACT OFF

__kernel void assign(__global const float* points, const int p_origin,
                     __global const float* centres,
                     __global int* labels, const int l_origin,
                     const int k, const int d, const int end) {
    const int i = get_global_id(0);
    if (i >= end) return;
    __global const float* p = points + (i - p_origin) * d;
    int best = 0;
    float best_dist = 0.0f;
    bool found = false;
    for (int j = 0; j < k; ++j) {
        __global const float* c = centres + j * (d + 1);
        if (c[d] == 0.0f) continue;
        float dist = 0.0f;
        for (int dd = 0; dd < d; ++dd) {
            const float diff = p[dd] - c[dd];
            dist += diff * diff;
        }
        if (!found || dist < best_dist) {
            best = j;
            best_dist = dist;
            found = true;
        }
    }
    labels[i - l_origin] = best;
}

// For each centre j in turn, the work-group's (d+1) sums of its points labelled j, by a tree in
// `scratch` (local size x (d+1) floats); work-item 0 writes them to the group's record,
// records[get_group_id(0) * k * (d+1) + j * (d+1) + dd].
__kernel void accumulate(__global const float* points, const int p_origin,
                         __global const int* labels, const int l_origin,
                         __global float* records, const int k, const int d, const int end,
                         __local float* scratch) {
    const int i = get_global_id(0);
    const int lid = get_local_id(0), w = d + 1;
    const int label = i < end ? labels[i - l_origin] : -1;
    __global const float* p = points + (i < end ? i - p_origin : 0) * d;
    __global float* rec = records + get_group_id(0) * k * w;
    __local float* mine = scratch + lid * w;
    for (int j = 0; j < k; ++j) {
        const float on = label == j ? 1.0f : 0.0f;
        for (int dd = 0; dd < d; ++dd) mine[dd] = on * p[dd];
        mine[d] = on;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int n = get_local_size(0); n > 1;) {
            const int up = (n + 1) >> 1;
            if (lid + up < n)
                for (int dd = 0; dd < w; ++dd) mine[dd] += scratch[(lid + up) * w + dd];
            barrier(CLK_LOCAL_MEM_FENCE);
            n = up;
        }
        if (lid == 0)
            for (int dd = 0; dd < w; ++dd) rec[j * w + dd] = scratch[dd];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
