package presets

import (
	"reflect"
	"testing"
	"testing/fstest"
)

// TestLazyPresetsMatchTheRegistry: a preset parsed from its own file, and
// the list read from the files' headers, are what the full parse of every
// preset gives.
func TestLazyPresetsMatchTheRegistry(t *testing.T) {
	r := loadFS(embedded)
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, name := range r.machineNames {
		if got := lazyMachine(name); !reflect.DeepEqual(got, r.machines[name]) {
			t.Errorf("machine %s: parsed alone %+v, in the registry %+v", name, got, r.machines[name])
		}
	}
	for _, name := range r.experimentNames {
		if got := lazyExperiment(name); !reflect.DeepEqual(got, r.experiments[name]) {
			t.Errorf("experiment %s differs when parsed alone", name)
		}
	}
	if got, want := listHeaders(embedded), listRegistry(r); !reflect.DeepEqual(got, want) {
		t.Errorf("List from the headers:\n%v\nfrom the registry:\n%v", got, want)
	}
	for _, bad := range []string{"no-such-machine", "../machines/intel-2s-44c-88t", ""} {
		if lazyMachine(bad) != nil || lazyExperiment(bad) != nil {
			t.Errorf("%q: parsed lazily, want nil (the registry's error)", bad)
		}
	}
	if _, err := Machine("no-such-machine"); err == nil {
		t.Error("an unknown machine gave no error")
	}
}

// TestListHeadersLeavesOutUnreadableFiles: a file without a readable
// header, or named unlike its preset, is not listed.
func TestListHeadersLeavesOutUnreadableFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"machines/good.json":       {Data: []byte(`{"name": "good", "kind": "machine", "title": "A machine", "topology": {}}`)},
		"machines/misnamed.json":   {Data: []byte(`{"name": "other", "kind": "machine", "title": "x"}`)},
		"machines/broken.json":     {Data: []byte(`{"name": "broken", `)},
		"experiments/exp.json":     {Data: []byte(`{"name": "exp", "kind": "experiment", "title": "An experiment"}`)},
		"experiments/notes.txt":    {Data: []byte(`not a preset`)},
		"experiments/array.json":   {Data: []byte(`[1, 2]`)},
		"machines/sub/nested.json": {Data: []byte(`{"name": "nested"}`)},
	}
	got := listHeaders(fsys)
	want := []Info{{Name: "exp", Kind: "experiment", Title: "An experiment"}, {Name: "good", Kind: "machine", Title: "A machine"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
