/* The hash the linked build's hash tables share (blockrates.c, endsums.c). */
#ifndef MD_MDHASH_H
#define MD_MDHASH_H

#include <stdint.h>

/* md_hash is FNV-1a over an id's bytes, its high bits folded in. */
static inline uint64_t md_hash(const unsigned char *s, uint32_t n) {
	uint64_t h = 1469598103934665603ull;
	uint32_t i;
	for (i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

#endif
