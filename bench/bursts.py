"""Bursts of app writes beside a running sweep, for the first-write wait.

    /usr/bin/python3 bench/bursts.py DB SECONDS

Every 4 s, for SECONDS, a new connection (busy timeout 5 s, SQLite's
default busy handler) writes for 1 s, one edge every 5 ms; the 3 s of quiet
between bursts is longer than the 2 s after which a sweep goes back to its
bigger transactions. Prints each burst's start, its first write's latency
and its worst, then the largest of each, in milliseconds. No write may fail.
"""
import random
import sqlite3
import sys
import time


def main():
    db, seconds = sys.argv[1], float(sys.argv[2])
    end = time.time() + seconds
    edges = sqlite3.connect(db).execute("SELECT max(rowid) FROM mem_edges").fetchone()[0] or 1
    bursts = []
    while time.time() < end:
        time.sleep(3)
        conn = sqlite3.connect(db, timeout=5.0, isolation_level=None)
        began, waits = time.strftime("%H:%M:%S"), []
        t0 = time.time()
        while time.time() - t0 < 1.0:
            start = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("UPDATE mem_edges SET reinforcement_count = reinforcement_count + 1 WHERE rowid = ?",
                         (random.randint(1, edges),))
            conn.execute("COMMIT")
            waits.append((time.perf_counter() - start) * 1000)
            time.sleep(0.005)
        conn.close()
        bursts.append((began, waits[0], max(waits)))
        print(f"{began} first {waits[0]:.0f} ms, worst {max(waits):.0f} ms", flush=True)
    print(f"{len(bursts)} bursts: first writes at most {max(b[1] for b in bursts):.0f} ms, "
          f"every write at most {max(b[2] for b in bursts):.0f} ms")


if __name__ == "__main__":
    main()
