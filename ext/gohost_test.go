package main

import (
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"
)

var goHostDrivers atomic.Int64

// A Go program that loads memdecay.so runs two Go runtimes in one process,
// which Go does not support: the extension refuses to load, saying why and
// what to do instead. This test binary is such a program.
func TestLoadedIntoGoIsRefused(t *testing.T) {
	name := "memdecay-go-host-" + string(rune('a'+goHostDrivers.Add(1)))
	sql.Register(name, &sqlite3.SQLiteDriver{Extensions: []string{extensionPath(t)}})
	db, err := sql.Open(name, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Ping()
	if err == nil {
		t.Fatal("memdecay.so loaded into a Go program")
	}
	for _, want := range []string{"memdecay: this process already runs Go", "ext/shim instead of loading memdecay.so"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q lacks %q", err, want)
		}
	}
}
