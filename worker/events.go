package worker

import "strings"

// Events: every archive, prune, decay, exclusion, readmission, restore and
// feedback is a mem_events row, written in the same transaction as the
// change. This file holds what an event says: the JSON snapshots of the
// rows removed (encoders, expanded into apply.sql by name), the restore's
// decoders of those snapshots, and the reason format.

// edgeSnapshot is the JSON snapshot of an edge row e kept in mem_events, so
// restore can bring the row back exactly (edgeFromSnapshot).
const edgeSnapshot = `json_object('from_id', e.from_id, 'to_id', e.to_id, 'weight', e.weight,
	'reinforcement_count', e.reinforcement_count, 'relation_type', e.relation_type, 'origin', e.origin,
	'last_active_hours', e.last_active_hours, 'last_observed_at', e.last_observed_at, 'pinned', e.pinned,
	'note', e.note, 'created_at', e.created_at, 'excluded', e.excluded)`

// blockSnapshot and blockTags are the JSON snapshot of a block row b and
// of its tags.
const blockSnapshot = `json_object('id', b.id, 'category', b.category, 'status', b.status,
	'archive_reason', b.archive_reason, 'confidence', b.confidence, 'reinforcement_count', b.reinforcement_count,
	'last_reinforced_hours', b.last_reinforced_hours, 'content', b.content, 'created_at', b.created_at)`

const blockTags = `json((SELECT json_group_array(t.tag) FROM main.mem_block_tags t WHERE t.block_id = b.id))`

// factSnapshot is the JSON snapshot of a fact row f (factFromSnapshot).
const factSnapshot = `json_object('id', f.id, 'segment', f.segment, 'tier', f.tier, 'importance', f.importance,
	'decay_rate', f.decay_rate, 'access_count', f.access_count, 'last_accessed_at', f.last_accessed_at,
	'status', f.status, 'content', f.content, 'created_at', f.created_at)`

// edgeFromSnapshot inserts the edge in the JSON snapshot at '$.edge' of the
// event detail d, with its anchors refreshed to :now and :wall.
const edgeFromSnapshot = `
INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours,
                       last_observed_at, pinned, note, created_at)
SELECT json_extract(d, '$.edge.from_id'), json_extract(d, '$.edge.to_id'), json_extract(d, '$.edge.weight'),
       json_extract(d, '$.edge.reinforcement_count'), json_extract(d, '$.edge.relation_type'), json_extract(d, '$.edge.origin'),
       CASE WHEN json_extract(d, '$.edge.last_active_hours') IS NULL THEN NULL ELSE :now END,
       CASE WHEN json_extract(d, '$.edge.last_observed_at') IS NULL THEN NULL ELSE :wall END,
       json_extract(d, '$.edge.pinned'), json_extract(d, '$.edge.note'), json_extract(d, '$.edge.created_at')
FROM (SELECT detail AS d FROM mem_events WHERE id = :event)`

// blockTagsFromSnapshot puts back the tags of the archived block :id from
// the event :event.
const blockTagsFromSnapshot = `INSERT OR IGNORE INTO mem_block_tags (block_id, tag)
SELECT :id, value FROM mem_events, json_each(json_extract(detail, '$.tags')) WHERE mem_events.id = :event`

// factFromSnapshot inserts the pruned fact of the event :event, active and
// accessed at :wall.
const factFromSnapshot = `INSERT INTO mem_facts (id, segment, tier, importance, decay_rate, access_count,
	last_accessed_at, status, content, created_at)
SELECT json_extract(detail, '$.fact.id'), json_extract(detail, '$.fact.segment'), json_extract(detail, '$.fact.tier'),
       json_extract(detail, '$.fact.importance'), json_extract(detail, '$.fact.decay_rate'),
       json_extract(detail, '$.fact.access_count'), :wall, 'active', json_extract(detail, '$.fact.content'),
       json_extract(detail, '$.fact.created_at')
FROM mem_events WHERE id = :event`

// restoreEvent records a restore, pointing at the event it undid; a
// restore appends the WHERE under which the row it records comes back.
const restoreEvent = `INSERT INTO mem_events (at, clock_hours, subject_kind, subject_id, action, reason, detail)
SELECT :wall, :now, :kind, :subject, 'restore', 'manual', json_object('from_event', :event)`

// An event's reason is a word ('temporal', 'static', 'decayed',
// 'orphaned', 'block_archived', 'faded', 'manual'), or for a relation
// policy's decisions the word, a colon and the relation type
// ('policy:supersedes', 'below_minimum:cites', 'reobserved:cites').

// policyOfReason is the relation type a policy's reason names, "" for any
// other reason.
func policyOfReason(reason string) string {
	_, relation, _ := strings.Cut(reason, ":")
	return relation
}
