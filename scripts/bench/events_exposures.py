#!/usr/bin/env python3
"""The exposure tokens of scripts/bench/events' installations:

    events_exposures.py SERVER APP_KEY COUNT OUT

Asks the server for model `events`' manifest once for each installation device-1 … device-COUNT
(8 threads, keep-alive), and writes OUT, which events.lua reads line by line (a table of 100,000
entries is past what LuaJIT compiles): per installation, the version its bucket got and the
`Depot-Exposure` token of the answer, which the SDK sends with each of the version's events.
Exits non-zero when a check is not a 200 with a token.
"""
import base64
import http.client
import json
import sys
import threading
import urllib.parse

server, key, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
url = urllib.parse.urlsplit(server)
exposures = [None] * count
failures = []


def check(indices):
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    for index in indices:
        connection.request("GET", "/v1/models/events/manifest",
                           headers={"Authorization": "Bearer " + key, "Depot-Installation-ID": "device-%d" % (index + 1)})
        response = connection.getresponse()
        body = response.read()
        token = response.getheader("Depot-Exposure")
        if response.status != 200 or not token:
            failures.append("device-%d: %d %s" % (index + 1, response.status, body[:200]))
            return
        exposures[index] = (json.loads(base64.b64decode(json.loads(body)["payload"]))["version"], token)


threads = [threading.Thread(target=check, args=(range(n, count, 8),)) for n in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
if failures:
    sys.exit("manifest checks failed: " + "; ".join(failures[:5]))
with open(out, "w") as file:
    for version, token in exposures:
        file.write("%d %s\n" % (version, token))
