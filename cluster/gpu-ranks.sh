# Sourced by gpu-bench.sh and gpu-bench-tuned.sh: the three-rank layout of issue 4 on a GPU+CPU
# node (rank 0 master, rank 1 the GPU, rank 2 the CPU through PoCL with all cores but three, left
# to the three MPI ranks, which busy-poll) and a logged, time-limited step.
# Needs: out (the output folder). Sets: cpus, sel, log, WORKSIZE_DB; writes the log's header.
cpus=$(( $(nproc) > 6 ? $(nproc) - 3 : $(nproc) ))
export WORKSIZE_DB="$out/db.json"
sel=${WORKSIZE_SELECT:-1=gpu,2=cpu}
log="$out/bench-log.txt"
echo "# machine: $(hostname), $(nproc) CPU cores (PoCL on rank 2 limited to $cpus), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); date: $(date -u +%Y-%m-%dT%H:%MZ)" >"$log"
ws3() { # worksize ARGS on 3 ranks
  mpiexec -n 2 worksize "$@" --select "$sel" : \
          -n 1 env POCL_MAX_PTHREAD_COUNT="$cpus" POCL_CPU_MAX_CU_NUM="$cpus" worksize "$@" --select "$sel"
}
step() { # limit ARGS...: run worksize ARGS on 3 ranks for at most `limit` seconds, into the log
  local limit=$1; shift
  echo "\$ mpiexec -n 3 worksize $* --select $sel" >>"$log"
  local t0=$SECONDS
  timeout "$limit" bash -c "$(declare -f ws3); cpus=$cpus; sel=$sel; ws3 \"\$@\"" _ "$@" >>"$log" 2>&1
  echo "exit $? after $((SECONDS-t0)) s" >>"$log"
}
