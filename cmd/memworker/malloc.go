package main

// glibc gives each thread that calls malloc under contention an arena of
// its own and keeps what is freed in it. Go makes its cgo calls, and so
// SQLite's page cache and sorter allocations, from whichever thread runs
// the goroutine, so a sweep's memory ended up spread over many arenas,
// each holding on to its peak: about 60 MB of a 1M-edge sweep's resident
// memory. One arena is set before Go's runtime starts a thread. Fleet
// sweeps in parallel (-j 2) share it and were measured no slower for it.

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
__attribute__((constructor)) static void memworker_one_malloc_arena(void) {
	mallopt(M_ARENA_MAX, 1);
}
#endif
*/
import "C"
