-- wrk script for scripts/bench/events: outcome batches as many SDK installations send them.
-- Each request is one installation's batch (EVENTS_INSTALLATIONS installations drawn at random)
-- of 50 entries: the 9 model-health metrics and one app metric over 5 hours, for the version and
-- arm the installation's bucket got (EVENTS_ARM; the version and the exposure token of its
-- manifest answer from EVENTS_EXPOSURES, made by events_exposures.py), with a fresh batch id. `done` prints "EVENTS {json}": batches/s, entries/s, latency, errors.
local key = os.getenv("EVENTS_KEY")
local arm = os.getenv("EVENTS_ARM")
local installations = tonumber(os.getenv("EVENTS_INSTALLATIONS") or "100000")
local exposures = {}
for line in io.lines(os.getenv("EVENTS_EXPOSURES")) do
    local version, token = line:match("^(%d+) (%S+)$")
    table.insert(exposures, {tonumber(version), token})
end
local threads = {}
accepted, refused = 0, 0

function setup(thread)
    table.insert(threads, thread)
    thread:set("number", #threads)
end

function init(args)
    math.randomseed(os.time() * 1000 + number)
end

-- A batch id as the SDK makes them (OutcomeBatch.makeID): a version 7 UUID, the time in ms then random bits.
local sent = 0
local function uuid()
    sent = sent + 1
    local ms = os.time() * 1000 + sent % 1000
    return string.format("%08x-%04x-7%03x-%04x-%06x%06x", math.floor(ms / 65536), ms % 65536, math.random(0, 0xfff),
        0x8000 + math.random(0, 0x3fff), math.random(0, 0xffffff), math.random(0, 0xffffff))
end

local metrics = {"download_finished", "download_failed", "verification_refused", "installed", "load_succeeded", "load_failed",
    "inferences", "inference_failed", "inference_latency_ms", "accepted"}

function request()
    local device = math.random(installations)
    local version, exposure = exposures[device][1], exposures[device][2]
    local now = os.time()
    local parts = {}
    for hour = 0, 4 do
        for _, metric in ipairs(metrics) do
            local count = math.random(1, 30)
            table.insert(parts, string.format('{"metric":"%s","version":%d,"arm":"%s","at":%d,"count":%d,"value":%.2f}',
                metric, version, arm, now - hour * 3600, count, count * (5 + math.random() * 20)))
        end
    end
    local body = string.format('{"batch":"%s","installation":"device-%d","dropped":0,"events":[%s],"exposures":[{"version":%d,"arm":"%s","token":"%s"}]}',
        uuid(), device, table.concat(parts, ","), version, arm, exposure)
    return wrk.format("POST", "/v1/models/events/events", {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
    if status == 200 then accepted = accepted + 1 else refused = refused + 1 end
end

function done(summary, latency, requests)
    local ok, bad = 0, 0
    for _, thread in ipairs(threads) do
        ok = ok + thread:get("accepted")
        bad = bad + thread:get("refused")
    end
    local seconds = summary.duration / 1e6
    local errors = summary.errors
    io.write(string.format('EVENTS {"batches_per_second": %f, "entries_per_second": %f, "p50_ms": %f, "p99_ms": %f, '
        .. '"accepted": %d, "refused": %d, "socket_errors": %d}\n', ok / seconds, ok * 50 / seconds, latency:percentile(50) / 1000,
        latency:percentile(99) / 1000, ok, bad, errors.connect + errors.read + errors.write + errors.timeout))
end
