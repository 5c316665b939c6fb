# A job launcher shaped like torchrun: starts WORLD ranks with multiprocessing (fork or spawn start
# method); each rank sets RANK/LOCAL_RANK/WORLD_SIZE and runs the CUDA workload as its worker.
import multiprocessing as mp
import os
import subprocess
import sys


def rank_main(rank, world, workload, counts, pace_us, wait_ms, status):
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    subprocess.run([workload, "paced", str(counts[rank]), str(pace_us[rank]), str(wait_ms[rank]),
                    str(status[rank])], env=env, check=True, stdout=subprocess.DEVNULL)


def main():
    method, workload = sys.argv[1], sys.argv[2]
    counts = [int(x) for x in sys.argv[3].split(",")]
    pace_us = [int(x) for x in sys.argv[4].split(",")]
    # optional: per rank, the rendezvous wait after its first CUDA call (ms) and its exit status
    wait_ms = [int(x) for x in sys.argv[5].split(",")] if len(sys.argv) > 5 else [0] * len(counts)
    status = [int(x) for x in sys.argv[6].split(",")] if len(sys.argv) > 6 else [0] * len(counts)
    mp.set_start_method(method)
    procs = [mp.Process(target=rank_main, args=(r, len(counts), workload, counts, pace_us, wait_ms, status))
             for r in range(len(counts))]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    print("ranks done" if not bad else "ranks failed: %s" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
