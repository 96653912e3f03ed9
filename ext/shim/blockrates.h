/* memdecay_block_rate (blockrates.c), linked build only. */
#ifndef MD_BLOCKRATES_H
#define MD_BLOCKRATES_H

/* The most a rates table held in memory may take: MD_RATE_ROW_BYTES a row
 * and its id's bytes (the hash table's slots, 8 to 16 bytes a row, come on
 * top). A bigger table is looked up row by row, as the query would. */
#define MD_RATES_MAX_BYTES (8 << 20)
#define MD_RATE_ROW_BYTES 24

int md_register_block_rate(sqlite3 *db);

#endif
