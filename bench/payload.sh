#!/bin/bash
# The cost of a removal's record, three ways: a sweep's removals replayed
# on a copy of the file they were made on, in bounded transactions, each
# removal with (json) its mem_events row and JSON snapshot as the sweep
# writes it, (archive) a row of the removed edge's columns in a keyed
# archive table instead, or (none) no record at all.
#
#   bench/payload.sh BEFORE AFTER ROWS_PER_TX json|archive|none
#
# BEFORE is a memory file, AFTER the same file after a sweep: the edges in
# BEFORE that AFTER lacks are removed again, in key order, on a scratch
# copy of BEFORE (memworker's delete trigger dropped, as a sweep runs them
# without it). Prints the wall time of the removals and how much the file
# grew. The effective weight in each record is a stand-in: what is timed
# is writing it, not computing it.
set -euo pipefail
[ $# -eq 4 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
before=$1 after=$2 per=$3 mode=$4
case $mode in json | archive | none) ;; *) echo "payload.sh: mode must be json, archive or none" >&2; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/copy.db
cp "$before" "$db"
sqlite3 "$db" "DROP TRIGGER IF EXISTS mem_edges_queue_delete;
ATTACH '$after' AS a;
CREATE TABLE doomed AS SELECT e.from_id, e.to_id FROM main.mem_edges e
WHERE NOT EXISTS (SELECT 1 FROM a.mem_edges x WHERE x.from_id = e.from_id AND x.to_id = e.to_id) ORDER BY 1, 2;
DETACH a;
CREATE TABLE mem_edges_removed (sweep_id INTEGER, from_id TEXT, to_id TEXT, at INTEGER, clock_hours REAL,
    action TEXT, reason TEXT, weight, reinforcement_count, relation_type, origin, last_active_hours,
    last_observed_at, pinned, note, created_at, excluded, effective_weight REAL, lambda REAL, elapsed_hours REAL,
    PRIMARY KEY (from_id, to_id, sweep_id)) WITHOUT ROWID;
PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
size0=$(stat -c %s "$db")
n=$(sqlite3 "$db" "SELECT count(*) FROM doomed")
rows="FROM doomed d CROSS JOIN mem_edges e ON e.from_id = d.from_id AND e.to_id = d.to_id WHERE d.rowid BETWEEN"
{
	echo "PRAGMA journal_mode = WAL;"
	for ((lo = 1; lo <= n; lo += per)); do
		hi=$((lo + per - 1))
		echo "BEGIN;"
		case $mode in
		json) echo "INSERT INTO mem_events (sweep_id, at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT 99, 1795621654, 1040.0, 'edge', json_array(e.from_id, e.to_id), 'decay', 'temporal',
  json_patch('{}', json_object('edge', json_object('from_id', e.from_id, 'to_id', e.to_id, 'weight', e.weight,
    'reinforcement_count', e.reinforcement_count, 'relation_type', e.relation_type, 'origin', e.origin,
    'last_active_hours', e.last_active_hours, 'last_observed_at', e.last_observed_at, 'pinned', e.pinned,
    'note', e.note, 'created_at', e.created_at, 'excluded', e.excluded),
    'effective_weight', e.weight * 0.0123456789, 'lambda', 0.005, 'elapsed_hours', 1040.0 - e.last_active_hours))
$rows $lo AND $hi;" ;;
		archive) echo "INSERT INTO mem_edges_removed
SELECT 99, e.from_id, e.to_id, 1795621654, 1040.0, 'decay', 'temporal', e.weight, e.reinforcement_count,
  e.relation_type, e.origin, e.last_active_hours, e.last_observed_at, e.pinned, e.note, e.created_at, e.excluded,
  e.weight * 0.0123456789, 0.005, 1040.0 - e.last_active_hours
$rows $lo AND $hi;" ;;
		esac
		echo "DELETE FROM mem_edges WHERE (from_id, to_id) IN (SELECT from_id, to_id FROM doomed WHERE rowid BETWEEN $lo AND $hi);"
		echo "COMMIT;"
	done
} >"$work/replay.sql"
start=$(date +%s.%N)
sqlite3 "$db" <"$work/replay.sql" >/dev/null
end=$(date +%s.%N)
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
printf '%s: %d removals in %d-row transactions, %.2f s, file +%.1f MB\n' "$mode" "$n" "$per" \
	"$(echo "$end - $start" | bc)" "$(echo "($(stat -c %s "$db") - $size0) / 1048576" | bc -l)"
