#!/usr/bin/env python3
"""Times how long a rollout change made through one replica takes to be served by every other.

    propagation.py CHANGES WRITER_URL ADMIN_TOKEN APP_KEY MODEL READER_URL...

Alternates the model's default version between 1 and 2 through WRITER_URL's admin API; after
each change, asks every READER_URL for the manifest every 2 ms until all of them hand out the
new version. Prints one line per change (milliseconds until the last reader served it), then
p50, p99 and max.
"""
import base64
import json
import sys
import time
import urllib.request

changes, writer, admin, app, model = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
readers = sys.argv[6:]


def served_version(base):
    request = urllib.request.Request(f"{base}/v1/models/{model}/manifest", headers={"Authorization": f"Bearer {app}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        envelope = json.load(answer)
    return json.loads(base64.b64decode(envelope["payload"]))["version"]


def set_default(version):
    request = urllib.request.Request(f"{writer}/v1/admin/models/{model}/rollout/default", method="PUT",
                                     data=json.dumps({"version": version}).encode(),
                                     headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


latencies = []
for index in range(changes):
    version = 1 if index % 2 else 2
    set_default(version)
    changed = time.monotonic()
    waiting = set(readers)
    while waiting:
        waiting = {reader for reader in waiting if served_version(reader) != version}
        if waiting:
            time.sleep(0.002)
        if time.monotonic() - changed > 30:
            sys.exit(f"change {index} did not reach {sorted(waiting)} within 30 s")
    latencies.append((time.monotonic() - changed) * 1000)
    time.sleep(0.05)

latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
print(f"changes {changes}: p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {latencies[-1]:.1f} ms")
