package shim

import "testing"

// TestRegistryRows checks what the C table and the tests take for granted
// about each row of the registry.
func TestRegistryRows(t *testing.T) {
	for _, f := range registry {
		if (f.impl == nil) == (f.numeric == nil) {
			t.Errorf("%s: want exactly one of impl and numeric", f.Name)
		}
		if f.MinArgs < 0 || f.MinArgs > f.MaxArgs() {
			t.Errorf("%s: MinArgs %d is outside 0..%d", f.Name, f.MinArgs, f.MaxArgs())
		}
		if len(f.Example) != len(f.Args) {
			t.Errorf("%s: %d example arguments for %d arguments", f.Name, len(f.Example), len(f.Args))
		}
		names := map[string]bool{}
		for _, a := range f.Args {
			if a.Name == "" || names[a.Name] {
				t.Errorf("%s: argument name %q is empty or used twice", f.Name, a.Name)
			}
			names[a.Name] = true
			if f.numeric != nil && a.Kind != ArgNumber {
				t.Errorf("%s: argument %s of a numeric function is not a number", f.Name, a.Name)
			}
		}
		if j := f.AuxArg(); j >= 0 && j != len(f.Args)-1 && j >= f.MinArgs {
			t.Errorf("%s: an optional JSON argument %d must be the last one", f.Name, j)
		}
	}
}
