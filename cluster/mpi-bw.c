// Intra-node MPI bandwidth: rank 0 sends one message of MiB (default 64) to every other rank at
// once (MPI_Isend), then receives one from each at once. Prints the aggregate rate of each phase;
// with two ranks it is the plain point-to-point rate. Used by cluster/gpu-*.sh.
// Build: mpicc -O2 cluster/mpi-bw.c -o mpi-bw      Run: mpiexec -n 3 ./mpi-bw [MiB]
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 64) << 20;
    const int peers = size - 1;
    char* buf = malloc(n * (size_t)(rank == 0 ? peers : 1));
    memset(buf, 1, n * (size_t)(rank == 0 ? peers : 1));
    MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)(peers > 0 ? peers : 1));
    for (int it = 0; it < 6; ++it) {
        double t[2];
        for (int phase = 0; phase < 2; ++phase) {  // 0: rank 0 -> all, 1: all -> rank 0
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank == 0) {
                for (int p = 1; p < size; ++p) {
                    if (phase == 0) MPI_Isend(buf + (size_t)(p - 1) * n, (int)n, MPI_BYTE, p, 0, MPI_COMM_WORLD, &req[p - 1]);
                    else MPI_Irecv(buf + (size_t)(p - 1) * n, (int)n, MPI_BYTE, p, 0, MPI_COMM_WORLD, &req[p - 1]);
                }
                MPI_Waitall(peers, req, MPI_STATUSES_IGNORE);
            } else if (phase == 0) {
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
            t[phase] = MPI_Wtime() - t0;
        }
        if (rank == 0 && it > 0)
            printf("mpi-bw,%d,%zu,%.2f,%.2f\n", peers, n >> 20, (double)n * peers / t[0] / 1e9, (double)n * peers / t[1] / 1e9);
    }
    free(req);
    free(buf);
    MPI_Finalize();
    return 0;
}
