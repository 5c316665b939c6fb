#!/usr/bin/env python3
"""Records what libcprof.so writes to its FIFO during a real run, as wire seeds for fuzz_wire.
usage: capture.py OUTDIR NAME LIBCPROF CMD [ARGS...]   (run on the simulated GPU by seeds.sh)
Writes NAME.stream (the byte stream, cut at a frame boundary under 60 KiB) and NAME-N.frame (each
distinct message type's first frames)."""
import os, select, struct, subprocess, sys, tempfile, time

out, name, lib, cmd = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
d = tempfile.mkdtemp()
fifo = os.path.join(d, "f")
os.mkfifo(fifo, 0o600)
fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader first, or the library finds none
env = dict(os.environ, CPROF_FIFO=fifo, LD_PRELOAD=lib, CUDA_INJECTION64_PATH=lib)
p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
data = b""
while True:
    done = p.poll() is not None
    if select.select([fd], [], [], 0.02)[0]:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:  # readable a moment ago; the writer may have closed and reopened it
            continue
        data += chunk
        if chunk:
            continue
        time.sleep(0.01)  # EOF while no writer has the FIFO open
    if done:
        break
os.close(fd)
os.unlink(fifo)
os.rmdir(d)
frames, off = [], 0
while off + 24 <= len(data):
    magic, ver, typ, length = struct.unpack_from("<IHHI", data, off)
    if magic != 0x46525043 or length < 24 or off + length > len(data):
        break
    frames.append((typ, data[off:off + length]))
    off += length
if not frames:
    sys.exit("capture.py: no frames from " + " ".join(cmd))
stream, seen = b"", {}
for typ, f in frames:
    if len(stream) + len(f) <= 60 * 1024:
        stream += f
    if seen.get(typ, 0) < 3:
        seen[typ] = seen.get(typ, 0) + 1
        open(os.path.join(out, "%s-%d-%d.frame" % (name, typ, seen[typ])), "wb").write(f)
open(os.path.join(out, name + ".stream"), "wb").write(stream)
# cprof-run's RUN_END, which a target never sends: header (magic, version, type 6, len 40, pid, seq 0, count 1)
run_end = struct.pack("<IHHIIII", 0x46525043, 1, 6, 40, 1, 0, 1) + struct.pack("<Qii", 1, 3, 0)
open(os.path.join(out, name + ".stream-end"), "wb").write(stream + run_end)
print("%s: %d frames, %d bytes" % (name, len(frames), len(data)))
