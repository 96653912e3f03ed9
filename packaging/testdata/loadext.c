/* loadext: a minimal SQLite host for the dist tests, cross-built for the
 * platforms this machine cannot run SQLite's shell for (linux/arm64 under
 * qemu, windows/amd64 under wine). It opens DB, loads EXTENSION through
 * sqlite3_load_extension, as any host does, and prints each row of SQL
 * (columns joined by |). Built against mattn/go-sqlite3's copy of SQLite's
 * amalgamation (sqlite3-binding.c), which the project already depends on. */
#include <stdio.h>
#include "sqlite3-binding.h"

static int print_row(void *unused, int n, char **values, char **names) {
	int i;
	(void)unused;
	(void)names;
	for (i = 0; i < n; i++)
		printf("%s%s", i ? "|" : "", values[i] ? values[i] : "");
	printf("\n");
	return 0;
}

int main(int argc, char **argv) {
	sqlite3 *db;
	char *err = NULL;
	if (argc != 4) {
		fprintf(stderr, "usage: loadext DB EXTENSION SQL\n");
		return 2;
	}
	if (sqlite3_open(argv[1], &db) != SQLITE_OK) {
		fprintf(stderr, "loadext: open %s: %s\n", argv[1], sqlite3_errmsg(db));
		return 1;
	}
	sqlite3_enable_load_extension(db, 1);
	if (sqlite3_load_extension(db, argv[2], NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "loadext: load %s: %s\n", argv[2], err);
		return 1;
	}
	if (sqlite3_exec(db, argv[3], print_row, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "loadext: %s\n", err);
		return 1;
	}
	if (sqlite3_close(db) != SQLITE_OK) {
		fprintf(stderr, "loadext: close: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	return 0;
}
