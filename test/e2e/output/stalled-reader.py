"""Run a command with stdout on a pipe nobody reads. Once the pipe is full
(the command now waits on its reader), wait SETTLE seconds, send SIGNAL, and
time how long the command takes to end. Nothing is ever read from the pipe.
Prints one JSON line: {"code": <exit code, or null when it had not ended
TIMEOUT s after the signal (it is then killed)>, "ms": <signal to exit>,
"full": <the pipe filled before the command ended>, "stderr": "<text>"}.
With STDERR_FULL=1 in the environment, stderr is a second pipe, filled to
its last byte before the command starts and never read ("stderr" is then
empty): every diagnostic the command writes finds it full. With
SIGNAL_AFTER=<s> the signal goes that long after the start, whatever stdout
holds ("full" then says the command had not ended by then)."""
import array, fcntl, json, os, signal, subprocess, sys, tempfile, termios, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "helpers"))
from full_pipe import full_pipe

sig, settle, timeout = getattr(signal, sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
cmd = sys.argv[4:]
F_GETPIPE_SZ = 1032
r, w = os.pipe()
err = tempfile.TemporaryFile()
stderr_full = os.environ.get("STDERR_FULL") == "1"
if stderr_full:
    er, ew = full_pipe()
    p = subprocess.Popen(cmd, stdout=w, stderr=ew)
    os.close(ew)
else:
    p = subprocess.Popen(cmd, stdout=w, stderr=err)
os.close(w)


def unread():
    n = array.array("i", [0])
    fcntl.ioctl(r, termios.FIONREAD, n)
    return n[0]


# Full: no room for another page (the kernel fills a pipe page by page, so the last one may
# stay partly empty), and nothing more arrived for 50 ms. The pipe's size is read each time:
# a large output widens it (src/cli/pipe-buffer.ts).
full = False
last = -1
signal_after = os.environ.get("SIGNAL_AFTER")
if signal_after:
    time.sleep(float(signal_after))
    full = p.poll() is None
while not signal_after and p.poll() is None:
    n = unread()
    if n >= fcntl.fcntl(r, F_GETPIPE_SZ) - 4096 and n == last:
        full = True
        break
    last = n
    time.sleep(0.05)
code = ms = None
if full:
    time.sleep(settle)
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        code = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    ms = (time.monotonic() - t0) * 1000
else:
    code = p.wait()
os.close(r)
err.seek(0)
print(json.dumps({"code": code, "ms": ms, "full": full, "stderr": err.read().decode("utf-8", "replace")}))
