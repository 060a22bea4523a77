-- wrk script for scripts/bench/fleet, run with one connection per thread so that each thread
-- knows which installation its one outstanding request is for. Thread k draws installations at
-- random from its own table (FLEET_DEVICES_PREFIX-k.lua, written by fleet_devices.py), each
-- request with the SDK's full header set: 94% conditional manifest checks (If-None-Match with
-- the ETag the installation last got and Depot-Exposure with the token it holds; an answer's
-- ETag and token replace them, as the SDK does), 5% first checks (no ETag: a 200), 1% a 64 KiB
-- range of the installation's blob. With FLEET_EVENT_PERCENT=p, p% of
-- the requests are instead outcome batches as the SDK sends them (POST /v1/models/fleet/events:
-- the installation's hour of model health and one app metric, 7 entries, a fresh batch id), taken
-- from the conditional checks' share. Devices build their batches on their own CPUs, so the batch
-- comes ready from the device table (fleet_devices.py) and only its id is made here: building it
-- here cost wrk, on the 2 cores it shares with the server, about 68 us a batch against nginx (4 us
-- ready-made). `done` prints one line, "FLEET {json}": requests/s, latency percentiles, errors, the
-- answers by status, and the 304s per second.
local key = os.getenv("FLEET_KEY")
local eventPercent = tonumber(os.getenv("FLEET_EVENT_PERCENT") or "0")
local threads = {}
local devices, current, idPrefix, sent
-- Answers by status, as globals (wrk copies only plain values between threads).
answered200, answered206, answered304, answeredOther = 0, 0, 0, 0

function setup(thread)
    table.insert(threads, thread)
    thread:set("number", #threads)
end

function init(args)
    devices = dofile(os.getenv("FLEET_DEVICES_PREFIX") .. "-" .. number .. ".lua")
    math.randomseed(os.time() * 1000 + number)
    local ms = os.time() * 1000 + number
    idPrefix = string.format("%08x-%04x-7%03x-%04x-%04x", math.floor(ms / 65536), ms % 65536, math.random(0, 0xfff),
        0x8000 + math.random(0, 0x3fff), math.random(0, 0xffff))
    sent = 0
end

-- A batch id as the SDK makes them (OutcomeBatch.makeID): a version 7 UUID, time ordered (the
-- thread's start and random bits, then the thread's count of batches sent).
local function batchID()
    sent = sent + 1
    return idPrefix .. bit.tohex(sent, 8)
end

function request()
    current = devices[math.random(#devices)]
    local headers = {
        ["Authorization"] = "Bearer " .. key,
        ["Depot-Installation-ID"] = current[1],
        ["Depot-Platform"] = current[2],
        ["Depot-App-Version"] = current[3],
        ["Depot-OS-Version"] = current[4],
        ["Depot-SDK-Version"] = "1.0.0",
        ["Depot-Country"] = current[5],
        ["Depot-Attributes"] = current[6],
    }
    local roll = math.random(100)
    if roll <= eventPercent then
        headers["Content-Type"] = "application/json"
        return wrk.format("POST", "/v1/models/fleet/events", headers, '{"batch":"' .. batchID() .. current[12])
    end
    if roll <= 99 then
        if roll <= 94 then
            headers["If-None-Match"] = current[7]
            if current[13] ~= "" then headers["Depot-Exposure"] = current[13] end
        end
        return wrk.format("GET", "/v1/models/fleet/manifest", headers)
    end
    local size = current[9]
    local start = math.random(0, math.max(0, size - 65536))
    headers["Range"] = "bytes=" .. start .. "-" .. math.min(size - 1, start + 65535)
    -- The manifest's download URL, with the arm token that counts a completed download for its arm.
    return wrk.format("GET", current[8], headers)
end

function response(status, headers, body)
    if status == 304 then
        answered304 = answered304 + 1
    elseif status == 206 then
        answered206 = answered206 + 1
    elseif status == 200 then
        answered200 = answered200 + 1
    else
        answeredOther = answeredOther + 1
    end
    local exposure = headers["Depot-Exposure"] or headers["depot-exposure"]
    if exposure then current[13] = exposure end
    if status == 200 then
        local etag = headers["ETag"] or headers["etag"]
        if etag and string.sub(etag, 1, 1) == '"' and #body < 100000 and string.find(body, '"payload"', 1, true) then
            current[7] = etag
        end
    end
end

function done(summary, latency, requests)
    local totals = {answered200 = 0, answered206 = 0, answered304 = 0, answeredOther = 0}
    for _, thread in ipairs(threads) do
        for name, count in pairs(totals) do totals[name] = count + thread:get(name) end
    end
    local statuses = {
        string.format('"200": %d', totals.answered200), string.format('"206": %d', totals.answered206),
        string.format('"304": %d', totals.answered304), string.format('"other": %d', totals.answeredOther),
    }
    local errors = summary.errors
    io.write(string.format(
        'FLEET {"requests_per_second": %f, "not_modified_per_second": %f, "p50_ms": %f, "p99_ms": %f, "p999_ms": %f, '
            .. '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, "answers": {%s}}\n',
        summary.requests / (summary.duration / 1e6), totals.answered304 / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
        latency:percentile(99.9) / 1000, errors.connect, errors.read, errors.write, errors.status, errors.timeout,
        table.concat(statuses, ", ")))
end
