//go:build !memdecay_loadable

package shim

/*
#cgo CFLAGS: -DSQLITE_CORE
#include <sqlite3.h>
int sqlite3_memdecay_init(sqlite3 *db, char **pzErrMsg, const void *pApi);
static int md_register_auto(void) {
	return sqlite3_auto_extension((void (*)(void))sqlite3_memdecay_init);
}
*/
import "C"

import (
	"fmt"

	_ "github.com/mattn/go-sqlite3" // the SQLite this build links against
)

const buildMode = "linked (SQLITE_CORE)"

// Every connection opened after init — by database/sql with mattn's
// "sqlite3" driver, golang-migrate's included — gets the functions.
func init() {
	if rc := C.md_register_auto(); rc != C.SQLITE_OK {
		panic(fmt.Sprintf("memdecay: sqlite3_auto_extension failed with code %d", rc))
	}
}
