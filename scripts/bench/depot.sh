# Sourced by the shell scripts in scripts/bench: how they start `depot serve`, know it is ready and
# stop it (scripts/depot_server.py does the same for the Python scripts). Ready means the server
# wrote its address to its --ready-file, which it does once it listens.
#
#   depot_start BINARY STORAGE LOG [serve options...]
#       runs `BINARY serve --port 0 --storage STORAGE --ready-file STORAGE.ready [options...]` in
#       the background (stdout and stderr appended to LOG, DEPOT_ADMIN_TOKEN from the environment),
#       waits at most 60 s until it is ready and sets started_pid and started_url; when it is not,
#       stops it, prints the end of LOG on stderr and returns 1.
#   sdk_headers
#       what the SDK sends with every manifest check (ModelDownloader.manifestRequest), as curl
#       and wrk arguments: the `304` benchmarks send the same set.
#   depot_stop PID
#       SIGTERM, up to 10 s for the process to end, then SIGKILL (for any process the script
#       started in the background: a server, nginx, a sampler).

depot_start() {
    local binary=$1 storage=$2 log=$3 i
    shift 3
    rm -f "$storage.ready"
    "$binary" serve --port 0 --storage "$storage" --ready-file "$storage.ready" "$@" >> "$log" 2>&1 < /dev/null &
    started_pid=$!
    for ((i = 0; i < 600; i++)); do
        if [ -s "$storage.ready" ]; then
            read -r started_url < "$storage.ready"
            return 0
        fi
        kill -0 "$started_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "depot serve ($storage) was not ready; the end of its log:" >&2
    tail -n 15 "$log" >&2
    depot_stop "$started_pid"
    return 1
}

depot_stop() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

sdk_headers=(-H "Depot-Installation-ID: 3f6c2a9e-5b1d-4c8e-9a7f-0d2e4b6c8a10" -H "Depot-Platform: ios"
    -H "Depot-App-Version: 3.2.0" -H "Depot-OS-Version: 18.1" -H "Depot-SDK-Version: 1.0.0" -H "Depot-Country: US"
    -H "Depot-Attributes: cohort=beta,device=iphone15%2C2")
