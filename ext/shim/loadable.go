//go:build memdecay_loadable

package shim

const buildMode = "loadable extension"
