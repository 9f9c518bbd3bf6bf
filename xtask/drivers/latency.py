"""Per-command latency the way Python agents run commands: subprocess.run(cmd, shell=True,
capture_output=True). Input: one JSON argument {"commands": [...], "runs": N, "warmup": W}.
Output: {"<command>": [microseconds, ...], ...}."""
import json
import subprocess
import sys
import time

config = json.loads(sys.argv[1])
result = {}
for cmd in config["commands"]:
    for _ in range(config["warmup"]):
        subprocess.run(cmd, shell=True, capture_output=True, check=True)
    samples = []
    for _ in range(config["runs"]):
        start = time.perf_counter_ns()
        subprocess.run(cmd, shell=True, capture_output=True, check=True)
        samples.append((time.perf_counter_ns() - start) / 1000.0)
    result[cmd] = samples
print(json.dumps(result))
