// Host-to-device write rate from pinned host memory onto one GPU and onto two GPUs at once, the
// way a rank's inputs go (one clEnqueueWriteBuffer per device from memory pinned by
// CL_MEM_ALLOC_HOST_PTR and mapped). Modes, each at every size (MiB per GPU, default 256 512 1024):
//   alone-A, alone-B        one GPU, memory pinned in its own context
//   both-own                both GPUs at once, a thread each, each from memory pinned in its own context
//   both-shared             both at once, one context over both GPUs, its halves of one pinned region
//   both-shared-pieces      as both-shared, in writes of 64 MiB
//   alone-A-shared          GPU A alone from the shared context's region
//   alone-A-cross, both-cross  from the shared context's region into buffers of each GPU's own
//                           context (memory pinned in another context than the buffer's)
// Prints "mode,MiB_per_gpu,rep,ms,GB/s_total". Used by cluster/gpu-engine-model.sh (PART=pinwrites).
// Build: cc -O2 cluster/h2d-bw.c -o h2d-bw -lOpenCL -lpthread      Run: ./h2d-bw [MiB...]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "h2d-bw: %s: %d\n", #x, e_); exit(1); } } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct {
    cl_command_queue queue;
    cl_mem device;
    const char* host;
    size_t bytes, piece;
} Write;

static void* write_all(void* arg) {
    Write* w = arg;
    size_t piece = w->piece ? w->piece : w->bytes;
    for (size_t at = 0; at < w->bytes; at += piece) {
        size_t n = w->bytes - at < piece ? w->bytes - at : piece;
        CHECK(clEnqueueWriteBuffer(w->queue, w->device, CL_FALSE, at, n, w->host + at, 0, NULL, NULL));
    }
    CHECK(clFinish(w->queue));
    return NULL;
}

// Runs the writes at once (a thread each) and returns the seconds until the last has finished.
static double run(Write* w, int n) {
    pthread_t t[2];
    double t0 = now();
    for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, write_all, &w[i]);
    for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
    return now() - t0;
}

static char* pinned(cl_context c, cl_command_queue q, size_t bytes) {
    cl_int e;
    cl_mem m = clCreateBuffer(c, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &e);
    CHECK(e);
    char* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &e);
    CHECK(e);
    memset(p, 1, bytes);
    return p;  // kept mapped until exit
}

static void report(const char* mode, size_t mib, int rep, double s, size_t bytes) {
    printf("%s,%zu,%d,%.2f,%.2f\n", mode, mib, rep, s * 1e3, bytes / s / 1e9);
    fflush(stdout);
}

int main(int argc, char** argv) {
    cl_platform_id platforms[8];
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(8, platforms, &np));
    cl_device_id gpu[2];
    cl_uint ng = 0;
    // H2D_ALL=1: any two devices of a platform (a dry run on PoCL's CPU devices)
    cl_device_type type = getenv("H2D_ALL") ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_GPU;
    for (cl_uint p = 0; p < np && ng < 2; ++p)
        if (clGetDeviceIDs(platforms[p], type, 2, gpu, &ng) != CL_SUCCESS) ng = 0;
    if (ng < 2) { fprintf(stderr, "h2d-bw: fewer than two GPUs on one platform\n"); return 1; }
    cl_int e;
    cl_context own[2], shared = clCreateContext(NULL, 2, gpu, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue oq[2], sq[2];
    for (int i = 0; i < 2; ++i) {
        own[i] = clCreateContext(NULL, 1, &gpu[i], NULL, NULL, &e);
        CHECK(e);
        oq[i] = clCreateCommandQueue(own[i], gpu[i], 0, &e);
        CHECK(e);
        sq[i] = clCreateCommandQueue(shared, gpu[i], 0, &e);
        CHECK(e);
    }
    size_t sizes[8] = {256, 512, 1024};
    int nsizes = 3;
    if (argc > 1) for (nsizes = 0; nsizes < argc - 1 && nsizes < 8; ++nsizes) sizes[nsizes] = (size_t)atoi(argv[nsizes + 1]);
    printf("mode,MiB_per_gpu,rep,ms,GBps_total\n");
    for (int s = 0; s < nsizes; ++s) {
        size_t bytes = sizes[s] << 20;
        char* oh[2];
        cl_mem od[2], sd[2];
        char* sh = pinned(shared, sq[0], 2 * bytes);
        for (int i = 0; i < 2; ++i) {
            oh[i] = pinned(own[i], oq[i], bytes);
            od[i] = clCreateBuffer(own[i], CL_MEM_READ_WRITE, bytes, NULL, &e);
            CHECK(e);
            sd[i] = clCreateBuffer(shared, CL_MEM_READ_WRITE, bytes, NULL, &e);
            CHECK(e);
        }
        for (int rep = 0; rep < 4; ++rep) {  // rep 0 warms the buffers up
            Write a[2] = {{oq[0], od[0], oh[0], bytes, 0}, {oq[1], od[1], oh[1], bytes, 0}};
            Write b[2] = {{sq[0], sd[0], sh, bytes, 0}, {sq[1], sd[1], sh + bytes, bytes, 0}};
            report("alone-A", sizes[s], rep, run(&a[0], 1), bytes);
            report("alone-B", sizes[s], rep, run(&a[1], 1), bytes);
            report("both-own", sizes[s], rep, run(a, 2), 2 * bytes);
            report("alone-A-shared", sizes[s], rep, run(&b[0], 1), bytes);
            report("both-shared", sizes[s], rep, run(b, 2), 2 * bytes);
            b[0].piece = b[1].piece = 64u << 20;
            report("both-shared-pieces", sizes[s], rep, run(b, 2), 2 * bytes);
            Write c[2] = {{oq[0], od[0], sh, bytes, 0}, {oq[1], od[1], sh + bytes, bytes, 0}};
            report("alone-A-cross", sizes[s], rep, run(&c[0], 1), bytes);
            report("both-cross", sizes[s], rep, run(c, 2), 2 * bytes);
        }
        for (int i = 0; i < 2; ++i) { clReleaseMemObject(od[i]); clReleaseMemObject(sd[i]); }
    }
    return 0;
}
