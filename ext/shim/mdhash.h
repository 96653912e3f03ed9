/* What the linked build's hash tables share (blockrates.c, endsums.c): the
 * hash of an id, and the buffer their rows' ids are kept in. */
#ifndef MD_MDHASH_H
#define MD_MDHASH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* md_hash is FNV-1a over an id's bytes, its high bits folded in. */
static inline uint64_t md_hash(const unsigned char *s, uint32_t n) {
	uint64_t h = 1469598103934665603ull;
	uint32_t i;
	for (i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

/* md_ids_append copies an id's n bytes to the end of the buffer *ids (*len
 * of its *cap bytes in use), growing it: the id's offset, or -1 when out of
 * memory. */
static inline int64_t md_ids_append(char **ids, size_t *len, size_t *cap, const unsigned char *id, uint32_t n) {
	int64_t off = (int64_t)*len;
	if (*len + n > *cap) {
		size_t grown = *cap ? *cap : 8192;
		char *bigger;
		while (grown < *len + n) grown *= 2;
		if (!(bigger = realloc(*ids, grown))) return -1;
		*ids = bigger, *cap = grown;
	}
	memcpy(*ids + *len, id, n);
	*len += n;
	return off;
}

#endif
