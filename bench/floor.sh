#!/bin/bash
# The floor under a first sweep that keeps memworker's record of each
# removal, with nothing else memworker does: bench/plain.sql's rules (the
# sqlite3 shell's built-in exp(), each block's rate in a temp table), then
# bench/bounded.sql's plan, then the removals in transactions of CHUNK
# edges (memworker's apply fits about 20,000 in its hold time at 1M edges),
# each edge's typed archive row (its own columns, the event's, the numbers
# that decided it) inserted with its delete, and the WAL checkpointed after
# each commit, as memworker does. No derived state (due times, degrees,
# block states), no re-check of what changed since the plan, no saved
# plan. Beside it, plain SQL on a copy of the same graph; both with
# memworker's mem_edges triggers dropped, as bench/run's peers have them.
#
#   bench/floor.sh GRAPH [ROUNDS] [CHUNK]
#
# GRAPH is a bench/gen graph of this build's schema. Prints each run's wall
# time and the file's size before and after.
set -euo pipefail
graph=$1
rounds=${2:-3}
chunk=${3:-20000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

edges=$(sqlite3 "$graph" 'SELECT count(*) FROM mem_edges')
{
  echo 'PRAGMA wal_autocheckpoint = 0;'
  sed '/^-- The rules/,$d' "$here/plain.sql"
  sed -n '/^-- name: plan$/,/^-- name: chunk$/p' "$here/bounded.sql" | sed '$d'
  for ((lo = 1; lo <= edges; lo += chunk)); do
    cat <<EOF
.parameter set :lo $lo
.parameter set :hi $((lo + chunk - 1))
BEGIN IMMEDIATE;
INSERT INTO mem_archive_mem_edges (mem_sweep_id, mem_at, mem_clock_hours, mem_subject, mem_action, mem_reason,
    mem_effective_weight, mem_lambda, mem_elapsed, from_id, to_id, weight, reinforcement_count, relation_type, origin,
    last_active_hours, last_observed_at, pinned, note, created_at, excluded)
SELECT 0, CAST(strftime('%s', 'now') AS INTEGER), (SELECT now FROM cfg), json_array(e.from_id, e.to_id),
       CASE d.reason WHEN 'static' THEN 'prune' ELSE 'decay' END, d.reason, d.effective, d.lambda, d.elapsed,
       e.from_id, e.to_id, e.weight, e.reinforcement_count, e.relation_type, e.origin, e.last_active_hours,
       e.last_observed_at, e.pinned, e.note, e.created_at, e.excluded
FROM doomed d JOIN mem_edges e ON e.from_id = d.from_id AND e.to_id = d.to_id
WHERE d.seq BETWEEN :lo AND :hi;
DELETE FROM mem_edges WHERE (from_id, to_id) IN (SELECT from_id, to_id FROM doomed WHERE seq BETWEEN :lo AND :hi);
COMMIT;
PRAGMA wal_checkpoint(PASSIVE);
EOF
  done
  sed -n '/^-- name: report$/,$p' "$here/bounded.sql"
} > "$work/floor.sql"

copy() {
  rm -f "$work/db" "$work/db-wal" "$work/db-shm"
  cp "$graph" "$work/db"
  sqlite3 "$work/db" "SELECT 'DROP TRIGGER ' || name || ';' FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'mem_edges'" |
    sqlite3 "$work/db"
}
size() { stat -c %s "$work/db"; }
before=$(stat -c %s "$graph")
for round in $(seq 1 "$rounds"); do
  copy
  /usr/bin/time -f "round $round floor %e s" sqlite3 "$work/db" < "$work/floor.sql" > /dev/null
  echo "round $round floor file $before -> $(size) bytes"
  copy
  /usr/bin/time -f "round $round plain %e s" sqlite3 "$work/db" < "$here/plain.sql" > /dev/null
done 2>&1
