# Sourced by scripts/bench/fleet and scripts/bench/events: the fleet's model on the server at
# $DEPOT_SERVER (CLI config in $DEPOT_CONFIG) and its installations' first checks.
#
#   fleet_setup DEPOT DEVICES CONNECTIONS PREFIX
#
# Model "fleet": three versions, v1 by default, rule "android" (platform = android) -> v3, rule
# "main" 90/10 v1/v2. Sets $key to a new app key; writes CONNECTIONS device tables for fleet.lua
# (PREFIX-1.lua …) with DEVICES installations, each after its first check (fleet_devices.py).
fleet_setup() {
    local depot=$1 devices=$2 connections=$3 prefix=$4
    "$depot" models create fleet > /dev/null
    for fixture in float_classifier int8_conv float_classifier_labels; do
        "$depot" upload fleet "Tests/Fixtures/tflite/$fixture.tflite" --publish > /dev/null
    done
    "$depot" rollout set fleet --default 1 > /dev/null
    "$depot" rollout set fleet --rule android --split 3=100 --when platform=android > /dev/null
    "$depot" rollout set fleet --rule main --split 1=90,2=10 > /dev/null
    key=$("$depot" keys create --app --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["secret"])')
    python3 scripts/bench/fleet_devices.py "$DEPOT_SERVER" "$key" "$devices" "$connections" "$prefix" | sed 's/^/  /'
}
