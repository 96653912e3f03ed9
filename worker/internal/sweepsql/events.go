package sweepsql

import (
	"strings"
)

// Events: every archive, prune, decay, exclusion, readmission, restore and
// feedback is a mem_events row, written in the same transaction as the
// change (a removal's as a row of its table's archive, archive.go). This
// file holds what an event says: the JSON snapshots of rows (encoders,
// which also build an archive row's detail on read), the restore's
// decoders of those snapshots, and the reason format.

// snapshotValue is the JSON of a column's value in a snapshot, written so
// that snapshotRead gives back the same SQLite value, type and bytes: NULL,
// an integer and a finite real as JSON's null and numbers (SQLite writes a
// real with a point or an exponent, to the bit, and reads it back as a
// real), a text as a JSON string, and what JSON cannot hold as an object
// naming its type: a blob as {"blob": "<hex>"}, an infinite real as
// {"real": "9e999"} or {"real": "-9e999"}. A blob is never handed to
// json_object as it is: SQLite refuses it, or from 3.45 reads it as JSONB
// (x'00' would be null).
func snapshotValue(col string) string {
	return `CASE typeof(` + col + `) WHEN 'blob' THEN json_object('blob', hex(` + col + `))
	    WHEN 'real' THEN CASE WHEN abs(` + col + `) > ` + maxFinite + `
	        THEN json_object('real', CASE WHEN ` + col + ` > 0 THEN '9e999' ELSE '-9e999' END) ELSE ` + col + ` END
	    ELSE ` + col + ` END`
}

// SnapshotRead is the SQLite value that snapshotValue wrote at path (an SQL
// expression) of the JSON doc; a plain value, as every snapshot held
// before, reads as json_extract reads it.
func SnapshotRead(doc, path string) string {
	at := func(key string) string { return `json_extract(` + doc + `, ` + path + ` || '.` + key + `')` }
	return `(CASE WHEN json_type(` + doc + `, ` + path + `) = 'object' AND json_type(` + doc + `, ` + path + ` || '.blob') = 'text'
	    THEN unhex(` + at("blob") + `)
	    WHEN json_type(` + doc + `, ` + path + `) = 'object' AND json_type(` + doc + `, ` + path + ` || '.real') = 'text'
	    THEN CAST(` + at("real") + ` AS REAL)
	    ELSE json_extract(` + doc + `, ` + path + `) END)`
}

// snapshotObject is the JSON object of the columns cols of a row alias,
// each value by snapshotValue.
func snapshotObject(alias string, cols ...string) string {
	fields := make([]string, len(cols))
	for i, c := range cols {
		fields[i] = `'` + c + `', ` + snapshotValue(alias+`.`+c)
	}
	return `json_object(` + strings.Join(fields, ",\n\t") + `)`
}

// snapshotColumns are the columns of the snapshot at path of an event's
// detail d, each by snapshotRead, for an INSERT … SELECT of them.
func snapshotColumns(doc, path string, cols ...string) string {
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = SnapshotRead(doc, `'`+path+`.`+c+`'`)
	}
	return strings.Join(vals, ",\n\t")
}

// EdgeColumns are the columns of an edge row a snapshot keeps.
var EdgeColumns = []string{"from_id", "to_id", "weight", "reinforcement_count", "relation_type", "origin",
	"last_active_hours", "last_observed_at", "pinned", "note", "created_at", "excluded"}

// edgeSnapshot is the JSON snapshot of an edge row e kept in mem_events, so
// restore can bring the row back exactly (edgeFromSnapshot).
var edgeSnapshot = snapshotObject("e", EdgeColumns...)

// blockTags is the JSON array of the tags of a block row b.

// BlockColumns are the columns of a block row a snapshot keeps.
var BlockColumns = []string{"id", "category", "status", "archive_reason", "confidence",
	"reinforcement_count", "last_reinforced_hours", "content", "created_at"}

var blockTags = `json((SELECT json_group_array(` + snapshotValue("t.tag") + `) FROM @TAGS t WHERE t.block_id = b.id))`

// FactColumns are the columns of a fact row a snapshot keeps.
var FactColumns = []string{"id", "segment", "tier", "importance", "decay_rate", "access_count", "last_accessed_at",
	"status", "content", "created_at"}

// A restore takes back only the row its subject names: the ids in the
// snapshot it reads must be the subject's (an edited event is refused, see
// restore.go), and the row's key is written from the subject, not from
// the snapshot.

// EdgeSnapshotIsSubject holds while the event :event's snapshot is of the
// edge :from — :to.
var EdgeSnapshotIsSubject = `EXISTS (SELECT 1 FROM mem_events v WHERE v.id = :event
	AND ` + SnapshotRead("v.detail", "'$.edge.from_id'") + ` IS :from AND ` + SnapshotRead("v.detail", "'$.edge.to_id'") + ` IS :to)`

// EdgeFromSnapshot inserts the edge :from — :to from the JSON snapshot at
// '$.edge' of the event :event's detail d, with its anchors refreshed to
// :now and :wall; a restore appends the conditions (AND …) under which it
// comes back.
var EdgeFromSnapshot = `
INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours,
                       last_observed_at, pinned, note, created_at)
SELECT :from, :to, ` + snapshotColumns("d", "$.edge", "weight", "reinforcement_count", "relation_type", "origin") + `,
       CASE WHEN json_extract(d, '$.edge.last_active_hours') IS NULL THEN NULL ELSE :now END,
       CASE WHEN json_extract(d, '$.edge.last_observed_at') IS NULL THEN NULL ELSE :wall END,
       ` + snapshotColumns("d", "$.edge", "pinned", "note", "created_at") + `
FROM (SELECT detail AS d FROM mem_events WHERE id = :event) WHERE ` + EdgeSnapshotIsSubject

// BlockSnapshotIsSubject holds while the event :event's snapshot is of the
// block :id.
var BlockSnapshotIsSubject = `EXISTS (SELECT 1 FROM mem_events v WHERE v.id = :event
	AND ` + SnapshotRead("v.detail", "'$.block.id'") + ` IS :id)`

// BlockTagsFromSnapshot puts back the tags of the archived block :id from
// the event :event (tags an older sweep kept as a string holding the JSON
// array included).
var BlockTagsFromSnapshot = `INSERT OR IGNORE INTO mem_block_tags (block_id, tag)
SELECT :id, ` + SnapshotRead("json_extract(detail, '$.tags')", "fullkey") + `
FROM mem_events, json_each(json_extract(detail, '$.tags'))
WHERE mem_events.id = :event AND ` + BlockSnapshotIsSubject

// FactSnapshotIsSubject holds while the event :event's snapshot is of the
// fact :id.
var FactSnapshotIsSubject = `EXISTS (SELECT 1 FROM mem_events v WHERE v.id = :event
	AND ` + SnapshotRead("v.detail", "'$.fact.id'") + ` IS :id)`

// FactFromSnapshot inserts the pruned fact :id of the event :event, active
// and accessed at :wall.
var FactFromSnapshot = `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count,
	last_accessed_at, status, content, created_at)
SELECT :id, ` + snapshotColumns("detail", "$.fact", "segment", "tier", "importance", "decay_rate", "access_count") + `,
       :wall, 'active', ` + snapshotColumns("detail", "$.fact", "content", "created_at") + `
FROM mem_events WHERE id = :event AND ` + FactSnapshotIsSubject

// RestoreEvent records a restore, pointing at the event it undid; a
// restore appends the WHERE under which the row it records comes back.
const RestoreEvent = EventLogInsert + `
SELECT ` + NextEventID + `, NULL, :wall, :now, :kind, :subject, 'restore', 'manual', json_object('from_event', :event)`

// An event's reason is a word ('temporal', 'static', 'decayed',
// 'orphaned', 'block_archived', 'faded', 'manual'), or for a relation
// policy's decisions the word, a colon and the relation type
// ('policy:supersedes', 'below_minimum:cites', 'reobserved:cites').

// PolicyOfReason is the relation type a policy's reason names, "" for any
// other reason.
func PolicyOfReason(reason string) string {
	_, relation, _ := strings.Cut(reason, ":")
	return relation
}
