#!/usr/bin/env python3
"""The fleet's installations and their first checks, for scripts/bench/fleet:

    fleet_devices.py SERVER APP_KEY COUNT PARTS OUT_PREFIX

Makes COUNT installations (ids, platforms, app and OS versions, countries, attributes, fixed by
a seed), asks the server for each one's manifest once with the SDK's full header set (8
threads, keep-alive), and writes PARTS Lua tables for fleet.lua (OUT_PREFIX-1.lua …, one per
wrk thread, installation i in part i mod PARTS + 1): per installation its headers, the ETag it
got, its blob's download URL (with the arm token) and size, its arm and version, and the outcome
batch it sends (its hour of model health and one app metric, 7 entries, as the SDK adds them up,
with the exposure token of the first check's answer for its version and arm, as the SDK 2.0 sends it)
after the batch id, so that the load generator does not build it for every request. Prints how
the installations landed on the arms.
Exits non-zero when a first check is not a 200.
"""
import base64
import collections
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

server, key, count, parts, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
url = urllib.parse.urlsplit(server)
generator = random.Random(20261123)
PLATFORMS = [("ios", 50, ["17.6", "18.1"]), ("android", 30, ["14", "15"]), ("macos", 20, ["15.1"])]
APP_VERSIONS = ["3.1.0", "3.2.0", "3.4.1"]
COUNTRIES = ["US", "DE", "IN", "BR", "JP"]


def platform():
    roll = generator.randrange(100)
    for name, share, versions in PLATFORMS:
        if roll < share:
            return name, generator.choice(versions)
        roll -= share
    raise AssertionError("shares add up to 100")


devices = []
for index in range(count):
    name, os_version = platform()
    devices.append({
        "id": "%08x-%04x-4%03x-8%03x-%012x" % (generator.getrandbits(32), generator.getrandbits(16), generator.getrandbits(12),
                                               generator.getrandbits(12), generator.getrandbits(48)),
        "platform": name, "app": generator.choice(APP_VERSIONS), "os": os_version, "country": generator.choice(COUNTRIES),
        "attributes": "cohort=%s,device=model%%2C%d" % (generator.choice(["a", "b"]), generator.randrange(10)),
    })


def headers(device):
    return {"Authorization": "Bearer " + key, "Depot-Installation-ID": device["id"], "Depot-Platform": device["platform"],
            "Depot-App-Version": device["app"], "Depot-OS-Version": device["os"], "Depot-SDK-Version": "1.0.0",
            "Depot-Country": device["country"], "Depot-Attributes": device["attributes"]}


failures = []


def first_checks(part):
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    for device in part:
        connection.request("GET", "/v1/models/fleet/manifest", headers=headers(device))
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            failures.append("%s: %d %s" % (device["id"], response.status, body[:200]))
            return
        manifest = json.loads(base64.b64decode(json.loads(body)["payload"]))
        device.update(etag=response.getheader("ETag"), arm=manifest["arm"], version=manifest["version"],
                      download=manifest["downloadURL"], size=manifest["size"], exposure=response.getheader("Depot-Exposure"))


threads = [threading.Thread(target=first_checks, args=(devices[n::8],)) for n in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
if failures:
    sys.exit("first checks failed: " + "; ".join(failures[:5]))

landed = collections.Counter((device["arm"], device["version"]) for device in devices)
print("first checks: %d installations, one 200 each" % count)
for (arm, version), number in sorted(landed.items()):
    print("  %-14s v%d  %6d installations (%.2f%%)" % (arm, version, number, 100 * number / count))


def batch_tail(device):
    """The batch's JSON after its id: fleet.lua sends '{"batch":"<a fresh UUID>' followed by this."""
    at = int(time.time()) - generator.randrange(3001)
    entries = [("installed", 1, 1), ("download_finished", 1, 1), ("load_succeeded", 1, 1), ("inferences", 40, 40),
               ("inference_latency_ms", 40, round(40 * (10 + generator.random() * 5), 3)), ("inference_failed", 1, 1), ("accepted", 3, 3)]
    events = [{"metric": metric, "version": device["version"], "arm": device["arm"], "at": at, "count": count, "value": value}
              for metric, count, value in entries]
    exposures = [{"version": device["version"], "arm": device["arm"], "token": device["exposure"]}] if device["exposure"] else []
    return '",' + json.dumps({"installation": device["id"], "dropped": 0, "events": events, "exposures": exposures},
                             separators=(",", ":"))[1:]


def lua(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


for part in range(parts):
    with open("%s-%d.lua" % (prefix, part + 1), "w") as file:
        file.write("return {\n")
        for device in devices[part::parts]:
            fields = [device[name] for name in ("id", "platform", "app", "os", "country", "attributes", "etag", "download")]
            file.write("{" + ",".join(lua(field) for field in fields) + ",%d,%s,%d,%s,%s},\n" % (device["size"], lua(device["arm"]), device["version"], lua(batch_tail(device)), lua(device["exposure"] or "")))
        file.write("}\n")
