#!/usr/bin/env bash
# emulate_nodes.sh COMMAND...: runs COMMAND as one rank of a cluster emulated on this machine, for
# launchers that start every rank with one command line (cluster/slurm/worksize.sbatch's
# WORKSIZE_LAUNCH). The rank (PMI_RANK from MPICH's mpiexec, else SLURM_PROCID, else 0) takes
# its host name from EMULATED_HOSTS ("nodeA nodeA nodeB": ranks 0 and 1 on nodeA, rank 2 on
# nodeB) and its PoCL compute units from EMULATED_CUS (one count per rank; default 1 each).
set -eu
r=${PMI_RANK:-${SLURM_PROCID:-0}}
read -r -a hosts <<<"${EMULATED_HOSTS:?set EMULATED_HOSTS to one host name per rank}"
read -r -a cus <<<"${EMULATED_CUS:-}"
if [ "$r" -ge "${#hosts[@]}" ]; then
  echo "emulate_nodes.sh: rank $r has no host in EMULATED_HOSTS='$EMULATED_HOSTS'" >&2; exit 2
fi
export WORKSIZE_HOSTNAME=${hosts[$r]}
export POCL_MAX_PTHREAD_COUNT=${cus[$r]:-1} POCL_CPU_MAX_CU_NUM=${cus[$r]:-1}
exec "$@"
