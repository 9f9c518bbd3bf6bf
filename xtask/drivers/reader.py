"""Throughput baseline: read a generator's output through a pipe from subprocess.Popen, counting bytes
and lines. Input: the generator script as one argument. Output: {"bytes": B, "lines": L}."""
import json
import subprocess
import sys

child = subprocess.Popen(["bash", "-c", sys.argv[1]], stdout=subprocess.PIPE)
total = 0
lines = 0
while True:
    chunk = child.stdout.read(65536)
    if not chunk:
        break
    total += len(chunk)
    lines += chunk.count(b"\n")
code = child.wait()
print(json.dumps({"bytes": total, "lines": lines, "code": code}))
