// Command ext is the memdecay SQLite loadable extension. Build it with
//
//	go build -buildmode=c-shared -tags memdecay_loadable -o build/memdecay.so ./ext
//
// and load it with `.load ./build/memdecay` (entry point sqlite3_memdecay_init).
// Everything lives in package shim; this file only makes it a shared library.
package main

import "C"

import _ "github.com/memdecay/memdecay/ext/shim"

func main() {}
