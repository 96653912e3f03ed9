#!/bin/bash
# Two memworker builds, one after the other on the same machine: a first
# sweep, then an hourly sweep and the next hour's, each on its own copy of
# its graph, for ROUNDS rounds (the medians are what to compare).
#
#   bench/ab.sh ROUNDS BEFORE_MEMWORKER BEFORE_GRAPH AFTER_MEMWORKER AFTER_GRAPH
#
# Each graph is bench/gen's, made by the same build's bench/gen (its schema
# version is the build's): go run ./bench/gen -blocks 100000 -edges 1000000
# -seed 1 -out GRAPH. The hourly writes are bench/run's (scenarios.go),
# applied by the sqlite3 shell. Times go to stdout, one line each.
# BEFORE_FIRST and AFTER_FIRST, when set, are further flags for that
# side's first sweep (AFTER_FIRST=--bulk: a bulk first sweep against a
# default one, with one build given for both sides).
set -euo pipefail
rounds=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hourly="UPDATE mem_config SET value = value + 1 WHERE key = 'active_hours';
UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1,
    last_active_hours = (SELECT value FROM mem_config WHERE key = 'active_hours')
WHERE (CAST(substr(from_id, 2) AS INTEGER) * 7919 + CAST(substr(to_id, 2) AS INTEGER)) % 1000 = 0;
UPDATE mem_blocks SET reinforcement_count = reinforcement_count + 1,
    last_reinforced_hours = (SELECT value FROM mem_config WHERE key = 'active_hours')
WHERE status = 'active' AND CAST(substr(id, 2) AS INTEGER) * 7919 % 1000 = 0;"
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    if [ "$side" = before ]; then bin=$2 graph=$3 first=${BEFORE_FIRST:-}; else bin=$4 graph=$5 first=${AFTER_FIRST:-}; fi
    db=$work/$side.db
    rm -f "$db" "$db-wal" "$db-shm"
    cp "$graph" "$db"
    # shellcheck disable=SC2086 # $first: flags, split on purpose
    /usr/bin/time -f "round $round $side first %e s" "$bin" sweep --db "$db" --wall-now 1800000000 $first >/dev/null
    sqlite3 "$db" "$hourly"
    /usr/bin/time -f "round $round $side hourly %e s" "$bin" sweep --db "$db" --wall-now 1800003600 >/dev/null
    sqlite3 "$db" "$hourly"
    /usr/bin/time -f "round $round $side next-hour %e s" "$bin" sweep --db "$db" --wall-now 1800007200 >/dev/null
  done
done 2>&1
