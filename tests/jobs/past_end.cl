// Writes one element past the end of its slice of z (tests/cli/hostile.sh: --check-bounds names
// the kernel and the buffer; without it the write lands in memory the buffer does not own).
__kernel void past_end(__global float* z, int origin, int end) {
    const int i = get_global_id(0);
    if (i < end) z[i - origin + 1] = 1.0f;
}
