//go:build !memdecay_loadable

package shim

/*
#cgo CFLAGS: -DSQLITE_CORE
#include <sqlite3.h>
int sqlite3_memdecay_init(sqlite3 *db, char **pzErrMsg, const void *pApi);

// memdecay_connection_triggers(on): turns the calling connection's triggers
// off (0) or on (1) and returns whether they are on now; with NULL it only
// reports. SQLITE_DIRECTONLY: no trigger or view of a file can call it.
static void md_connection_triggers(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	int on = -1, now = -1;
	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_NULL) {
		if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER || (sqlite3_value_int64(argv[0]) != 0 && sqlite3_value_int64(argv[0]) != 1)) {
			sqlite3_result_error(ctx, "memdecay_connection_triggers: on must be 0, 1 or NULL", -1);
			return;
		}
		on = sqlite3_value_int(argv[0]);
	}
	if (sqlite3_db_config(sqlite3_context_db_handle(ctx), SQLITE_DBCONFIG_ENABLE_TRIGGER, on, &now) != SQLITE_OK) {
		sqlite3_result_error(ctx, "memdecay_connection_triggers: SQLite refused the setting", -1);
		return;
	}
	sqlite3_result_int(ctx, now);
}

#include "blockrates.h"
#include "endsums.h"

static int md_connection_init(sqlite3 *db, char **pzErrMsg, const void *pApi) {
	(void)pzErrMsg;
	(void)pApi;
	int rc = sqlite3_create_function_v2(db, "memdecay_connection_triggers", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
		NULL, md_connection_triggers, NULL, NULL, NULL);
	if (rc == SQLITE_OK) rc = md_register_block_rate(db);
	return rc == SQLITE_OK ? md_register_sum_ends(db) : rc;
}

static int md_register_auto(void) {
	int rc = sqlite3_auto_extension((void (*)(void))sqlite3_memdecay_init);
	if (rc != SQLITE_OK) return rc;
	return sqlite3_auto_extension((void (*)(void))md_connection_init);
}
*/
import "C"

import (
	"fmt"

	_ "github.com/mattn/go-sqlite3" // the SQLite this build links against
)

const buildMode = "linked (SQLITE_CORE)"

// BlockRatesMaxBytes is the most memory memdecay_block_rate holds a rates
// table in, BlockRateRowBytes a row and its id's bytes (blockrates.h); a
// bigger table is looked up row by row. The sweep asks for the hash table
// only where it fits.
const (
	BlockRatesMaxBytes = C.MD_RATES_MAX_BYTES
	BlockRateRowBytes  = C.MD_RATE_ROW_BYTES
)

// SumsMaxBytes is the most memory memdecay_sum_ends holds its sums in,
// SumRowBytes an id's and its bytes (endsums.h); with more ids it writes
// nothing, and the sweep groups by SQL.
const (
	SumsMaxBytes = C.MD_SUMS_MAX_BYTES
	SumRowBytes  = C.MD_SUM_ROW_BYTES
)

// Every connection opened after init — by database/sql with mattn's
// "sqlite3" driver, golang-migrate's included — gets the functions. The
// linked build adds memdecay_connection_triggers, which the worker calls on
// its own connection so that its removals skip the queue triggers,
// memdecay_block_rate (blockrates.c) for its full evaluation, and
// memdecay_sum_ends (endsums.c) for its degrees and each block's loss (the
// loadable extension has none of them: they are not an app's tools).
func init() {
	if rc := C.md_register_auto(); rc != C.SQLITE_OK {
		panic(fmt.Sprintf("memdecay: sqlite3_auto_extension failed with code %d", rc))
	}
}
