/* memdecay_sum_ends (endsums.c), linked build only. */
#ifndef MD_ENDSUMS_H
#define MD_ENDSUMS_H

/* The most memory the sums may take: MD_SUM_ROW_BYTES an id and its id's
 * bytes (the hash table's slots, 8 to 16 bytes an id, come on top). More
 * ids than fit, and memdecay_sum_ends writes nothing: the caller groups by
 * SQL instead. */
#define MD_SUMS_MAX_BYTES (8 << 20)
#define MD_SUM_ROW_BYTES 48

int md_register_sum_ends(sqlite3 *db);

#endif
