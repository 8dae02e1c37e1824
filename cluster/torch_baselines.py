#!/usr/bin/env python3
"""Library baselines for issue 14 on a CUDA GPU, measured with PyTorch in one process.

Prints a CSV on standard output, one row per figure: name,size,metric,value,unit. The first
rows name the device, PyTorch and CUDA (name "device", "torch", "cuda"); then

  gemm_fp32   4096, 1531, 8192   FP32 C = A @ B (n x n x n), TF32 off: TFLOPS (2 n^3 per run), ms,
                                  and the error of 8 rows against FP64 (shows which arithmetic ran)
  gemm_tf32   the same sizes      TF32 on (tensor cores; not FP32 arithmetic): the same figures
  copy        8192x8192, 2^28     dst.copy_(src) of float32: GB/s counting the bytes read plus
                                  the bytes written (2 x 4 x n), ms
  sort        2^26, 3000017       torch.sort of uniform float32 keys (values and indices out):
                                  Gkeys/s, ms

Every figure is the median of --runs timed runs (at least 10) after --warmup untimed ones, each
run timed alone between two CUDA events. Without PyTorch or without a CUDA device it prints one
line saying so on standard error and exits 3 (so it can be tried on a machine without a GPU).

  python3 cluster/torch_baselines.py [--runs 20] [--warmup 3] [--only gemm,copy,sort] > baselines.csv
"""
import argparse
import csv
import statistics
import sys

NO_CUDA = 3


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20, help="timed runs per figure (median; >= 10)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs before them (>= 1)")
    p.add_argument("--only", default="gemm,copy,sort",
                   help="comma-separated groups to measure: gemm, copy, sort")
    p.add_argument("--device", type=int, default=0, help="CUDA device index")
    a = p.parse_args()
    if a.runs < 10:
        p.error("--runs must be at least 10")
    if a.warmup < 1:
        p.error("--warmup must be at least 1")
    groups = [g for g in a.only.split(",") if g]
    bad = [g for g in groups if g not in ("gemm", "copy", "sort")]
    if bad or not groups:
        p.error("--only takes gemm, copy and sort, got " + a.only)
    a.groups = groups
    return a


def median_ms(torch, fn, runs, warmup):
    """Median over `runs` of fn()'s device time in ms, each run between its own two events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    args = parse_args()
    try:
        import torch
    except ImportError:
        print("torch_baselines: PyTorch is not installed here; nothing measured", file=sys.stderr)
        return NO_CUDA
    if not torch.cuda.is_available() or torch.cuda.device_count() <= args.device:
        print("torch_baselines: no CUDA device (torch " + torch.__version__ +
              "); nothing measured", file=sys.stderr)
        return NO_CUDA

    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["name", "size", "metric", "value", "unit"])
    out.writerow(["device", "", "name", torch.cuda.get_device_name(dev), ""])
    out.writerow(["torch", "", "version", torch.__version__, ""])
    out.writerow(["cuda", "", "version", torch.version.cuda, ""])
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)

    def timed(fn):
        return median_ms(torch, fn, args.runs, args.warmup)

    if "gemm" in args.groups:
        for tf32 in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            name = "gemm_tf32" if tf32 else "gemm_fp32"
            out.writerow([name, "", "float32_matmul_precision",
                          torch.get_float32_matmul_precision(), ""])
            for n in (4096, 1531, 8192):
                a = torch.rand(n, n, device=dev, generator=gen) - 0.5
                b = torch.rand(n, n, device=dev, generator=gen) - 0.5
                c = torch.empty(n, n, device=dev)
                ms = timed(lambda: torch.matmul(a, b, out=c))
                out.writerow([name, n, "tflops", f"{2.0 * n ** 3 / (ms * 1e-3) / 1e12:.2f}", "TFLOPS"])
                out.writerow([name, n, "time", f"{ms:.4f}", "ms"])
                # What arithmetic ran: the largest error of 8 rows against FP64, relative to the
                # largest |c| (FP32 about 1e-6, TF32 about 1e-3).
                ref = a[:8].double() @ b.double()
                err = ((c[:8].double() - ref).abs().max() / ref.abs().max()).item()
                out.writerow([name, n, "max_rel_err_vs_fp64", f"{err:.2e}", ""])
                del a, b, c, ref
        torch.backends.cuda.matmul.allow_tf32 = False

    if "copy" in args.groups:
        for label, n in (("8192x8192", 8192 * 8192), (str(1 << 28), 1 << 28)):
            src = torch.rand(n, device=dev, generator=gen)
            dst = torch.empty_like(src)
            ms = timed(lambda: dst.copy_(src))
            out.writerow(["copy", label, "bandwidth", f"{2.0 * 4 * n / (ms * 1e-3) / 1e9:.1f}",
                          "GB/s"])
            out.writerow(["copy", label, "time", f"{ms:.4f}", "ms"])
            del src, dst

    if "sort" in args.groups:
        for n in (1 << 26, 3000017):
            keys = torch.rand(n, device=dev, generator=gen)
            values = torch.empty_like(keys)
            indices = torch.empty(n, dtype=torch.int64, device=dev)
            ms = timed(lambda: torch.sort(keys, out=(values, indices)))
            if not bool((values[1:] >= values[:-1]).all()):
                print("torch_baselines: torch.sort's output is not ordered", file=sys.stderr)
                return 1
            out.writerow(["sort", n, "keys_per_s", f"{n / (ms * 1e-3) / 1e9:.3f}", "Gkeys/s"])
            out.writerow(["sort", n, "time", f"{ms:.4f}", "ms"])
            del keys, values, indices
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
