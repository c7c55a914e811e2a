"""Run a command with stdout on a pipe that nobody reads for a while, then
read it slowly; write what arrived to OUT. Modes:
  file      stdout is the file OUT itself (the reference bytes)
  slow      a blocking pipe; the reader sleeps before reading, then reads small chunks
  nonblock  the same, with O_NONBLOCK set on the pipe's write end before the
            child gets it (what a non-blocking parent or a dup'ed stream does)
Prints one JSON line: {"code": <exit code>, "stderr": "<text>", "pipe": <the pipe's
size in bytes once the command ended (F_GETPIPE_SZ)>, "pipe0": <its size when it
was made>}; both null in file mode."""
import fcntl, json, os, subprocess, sys, time

mode, out, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
cmd = sys.argv[4:]
err = open(out + ".stderr", "w+b")
F_GETPIPE_SZ = 1032
pipe = pipe0 = None
if mode == "file":
    with open(out, "wb") as f:
        code = subprocess.call(cmd, stdout=f, stderr=err)
else:
    r, w = os.pipe()
    pipe0 = fcntl.fcntl(r, F_GETPIPE_SZ)
    if mode == "nonblock":
        fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    p = subprocess.Popen(cmd, stdout=w, stderr=err)
    os.close(w)
    time.sleep(delay)
    with open(out, "wb") as f:
        n = 0
        while True:
            chunk = os.read(r, 16384)
            if not chunk:
                break
            f.write(chunk)
            n += 1
            if n % 8 == 0:
                time.sleep(0.002)
    code = p.wait()
    pipe = fcntl.fcntl(r, F_GETPIPE_SZ)
err.seek(0)
print(json.dumps({"code": code, "stderr": err.read().decode("utf-8", "replace"), "pipe": pipe, "pipe0": pipe0}))
