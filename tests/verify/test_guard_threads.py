"""The static guard under threads: the service judges samples from a pool of threads, and a
correct sample came back as "verifier crashed: SystemError: AST constructor recursion depth
mismatch" (CPython 3.11's AST constructor keeps its depth per interpreter, not per thread)."""

from __future__ import annotations

import subprocess
import sys

# A fresh interpreter: the collision needs garbage collections (with finalizers that switch
# threads) to land inside parses, which this script arranges from a known state.
SCRIPT = """
import threading, time
from referee.verify.guard import scan
body = "\\n".join(f"    y{i} = [a for a in range({i}) if a % 2 == {i} % 2]" for i in range(200))
source = "def f(x):\\n" + body + "\\n    return x\\n"
class Cycle:
    def __del__(self):
        time.sleep(0)  # a finalizer that lets another thread run
errors = []
def work():
    for _ in range(15):
        for _ in range(50):
            c = Cycle()
            c.me = c
        try:
            scan(source)
        except SystemError as e:
            errors.append(repr(e))
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(errors), errors[:1])
"""


def test_scan_from_many_threads_never_raises_systemerror() -> None:
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[0] == "0", p.stdout
