#!/usr/bin/python3
"""The application loop of reference 000 (edge temporal decay at curate()),
written the way its users write it, against the mem_ schema.

    /usr/bin/python3 bench/apploop.py DB

Standard library only (sqlite3, no extension). One run of:

1. read the settings and the clock from mem_config;
2. prune_weak_edges(): the static prune, one DELETE (weight below the prune
   threshold, never reinforced, not pinned), as reference 000's existing
   helper does it;
3. _prune_decayed_edges(): fetch every edge, batch-fetch the endpoints' tags
   and the active blocks' categories, compute each edge's tier, lambda_edge
   and effective weight with math.exp in Python, and collect the edges below
   the decay threshold (skipping agent edges, edges with no anchor and
   pinned edges);
4. delete_edges_bulk(): delete them pair by pair;
5. count_edges(), commit.

Prints one JSON line: edges_pruned, edges_decayed, total_edges_after.
"""

import json
import math
import sqlite3
import sys

ESTABLISHED_EDGE_THRESHOLD = 10
LAMBDA = {"permanent": 0.00001, "durable": 0.001, "standard": 0.010, "ephemeral": 0.050}
DURABLE_TAGS = {"self/value", "self/constraint", "self/goal"}
BATCH = 999  # SQLite's classic limit on bound variables per statement


def get_config(conn):
    cfg = {k: v for k, v in conn.execute("SELECT key, value FROM mem_config")}
    prune = float(cfg["edge_prune_threshold"])
    decay = cfg.get("edge_decay_threshold", "auto")
    decay = prune if decay == "auto" else float(decay)
    established = float(cfg.get("established_edge_threshold", ESTABLISHED_EDGE_THRESHOLD))
    return float(cfg["active_hours"]), prune, decay, established


def prune_weak_edges(conn, threshold):
    cur = conn.execute(
        "DELETE FROM mem_edges WHERE weight < ? AND reinforcement_count = 0 AND pinned = 0", (threshold,))
    return cur.rowcount


def get_all_edges(conn):
    return [dict(row) for row in conn.execute("SELECT * FROM mem_edges")]


def get_tags_batch(conn, block_ids):
    tags = {}
    for i in range(0, len(block_ids), BATCH):
        chunk = block_ids[i:i + BATCH]
        marks = ",".join("?" * len(chunk))
        for block_id, tag in conn.execute(
                f"SELECT block_id, tag FROM mem_block_tags WHERE block_id IN ({marks})", chunk):
            tags.setdefault(block_id, []).append(tag)
    return tags


def get_active_blocks(conn):
    return [dict(row) for row in conn.execute("SELECT * FROM mem_blocks WHERE status = 'active'")]


def determine_decay_tier(tags, category):
    if "self/constitutional" in tags:
        return "permanent"
    if DURABLE_TAGS.intersection(tags) or category == "mind":
        return "durable"
    if category == "observation":
        return "ephemeral"
    return "standard"


def compute_lambda_edge(tier_a, tier_b, reinforcement_count=0, established=ESTABLISHED_EDGE_THRESHOLD):
    lam = min(LAMBDA[tier_a], LAMBDA[tier_b]) * 0.5
    if reinforcement_count >= established:
        lam *= 0.5
    return lam


def delete_edges_bulk(conn, pairs):
    deleted = 0
    for from_id, to_id in pairs:
        cur = conn.execute("DELETE FROM mem_edges WHERE from_id = ? AND to_id = ?", (from_id, to_id))
        deleted += cur.rowcount
    return deleted


def prune_decayed_edges(conn, now, threshold, established):
    all_edges = get_all_edges(conn)
    if not all_edges:
        return 0
    endpoint_ids = list({e["from_id"] for e in all_edges} | {e["to_id"] for e in all_edges})
    tags_map = get_tags_batch(conn, endpoint_ids)
    category_map = {b["id"]: b["category"] for b in get_active_blocks(conn)}

    def tier(block_id):
        return determine_decay_tier(tags_map.get(block_id, []), category_map.get(block_id, "knowledge"))

    to_delete = []
    for edge in all_edges:
        if edge["origin"] == "agent" or edge["last_active_hours"] is None or edge["pinned"]:
            continue
        hours_since = max(0.0, now - float(edge["last_active_hours"]))
        lam = compute_lambda_edge(tier(edge["from_id"]), tier(edge["to_id"]),
                                  int(edge["reinforcement_count"]), established)
        effective_weight = float(edge["weight"]) * math.exp(-lam * hours_since)
        if effective_weight < threshold:
            to_delete.append((edge["from_id"], edge["to_id"]))
    return delete_edges_bulk(conn, to_delete)


def curate(path):
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    now, prune, decay, established = get_config(conn)
    pruned = prune_weak_edges(conn, prune)
    decayed = prune_decayed_edges(conn, now, decay, established)
    total = conn.execute("SELECT count(*) FROM mem_edges").fetchone()[0]
    conn.commit()
    conn.close()
    return {"edges_pruned": pruned, "edges_decayed": decayed, "total_edges_after": total}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: apploop.py DB")
    print(json.dumps(curate(sys.argv[1])))
