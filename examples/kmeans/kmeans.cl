// k-means, one iteration = assign (1 item per point) + accumulate (1 item per chunk of points);
// the host sums the chunks' records in chunk order (in double) into the next `sums`.
// sums[j*(d+1)+dd] (dd<d): coordinate sum of cluster j; sums[j*(d+1)+d]: its point count (float).
// Item indices are GLOBAL (the launch may cover a slice with a global offset and be padded,
// hence the guards); a buffer's element 0 holds global point `*_origin`.
#pragma OPENCL FP_CONTRACT OFF

__kernel void assign(__global const float* points, const int p_origin,
                     __global const float* sums,
                     __global int* labels, const int l_origin,
                     const int k, const int d, const int end) {
    const int i = get_global_id(0);
    if (i >= end) return;
    __global const float* p = points + (i - p_origin) * d;
    int best = 0;
    float best_dist = 0.0f;
    bool found = false;
    for (int j = 0; j < k; ++j) {
        __global const float* s = sums + j * (d + 1);
        const float count = s[d];
        if (count == 0.0f) continue;
        float dist = 0.0f;
        for (int dd = 0; dd < d; ++dd) {
            const float diff = p[dd] - s[dd] / count;
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

__kernel void accumulate(__global const float* points, const int p_origin,
                         __global const int* labels, const int l_origin,
                         __global float* records, const int begin,
                         const int k, const int d, const int chunk, const int n_end) {
    const int g = get_global_id(0);
    const int first = g * chunk;
    if (first >= n_end) return;
    const int last = min(first + chunk, n_end);
    __global float* rec = records + (g - begin) * k * (d + 1);
    for (int j = 0; j < k; ++j) {
        __global float* r = rec + j * (d + 1);
        for (int dd = 0; dd <= d; ++dd) r[dd] = 0.0f;
    }
    for (int i = first; i < last; ++i) {
        __global float* r = rec + labels[i - l_origin] * (d + 1);
        __global const float* p = points + (i - p_origin) * d;
        for (int dd = 0; dd < d; ++dd) r[dd] += p[dd];
        r[d] += 1.0f;
    }
}
