// Intra-node MPI bandwidth of one 64 MiB message, rank 1 -> rank 0 (used by cluster/gpu-mpi-check.sh).
// Build: mpicc -O2 cluster/mpi-bw.c -o mpi-bw
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int c,char**v){MPI_Init(&c,&v);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);size_t n=64<<20;char*b=malloc(n);memset(b,1,n);
for(int it=0;it<6;it++){MPI_Barrier(MPI_COMM_WORLD);double t=MPI_Wtime();if(r==0)MPI_Recv(b,n,MPI_BYTE,1,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);else MPI_Send(b,n,MPI_BYTE,0,0,MPI_COMM_WORLD);t=MPI_Wtime()-t;if(r==0&&it>0)printf("%.2f GB/s\n",n/t/1e9);}
MPI_Finalize();}
