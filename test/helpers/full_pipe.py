"""A pipe filled to its last byte and never read: every write to it finds it
full. Run as a script, `full_pipe.py CMD...` runs CMD with its stdout on such
a pipe (stderr captured) and prints `<exit code> <stderr>`, or `alive` when
CMD had not ended 8 s later (it is then killed)."""
import os, subprocess, sys


def full_pipe():
    """(read end, write end) of a pipe whose buffer is full, the write end blocking again."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    for chunk in (65536, 4096, 1):
        try:
            while True:
                os.write(w, b"x" * chunk)
        except BlockingIOError:
            pass
    os.set_blocking(w, True)
    return r, w


if __name__ == "__main__":
    r, w = full_pipe()
    p = subprocess.Popen(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    try:
        _, err = p.communicate(timeout=8)
        print(p.returncode, err.decode() or "-")
    except subprocess.TimeoutExpired:
        p.kill()
        print("alive")
