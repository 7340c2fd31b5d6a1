//go:build !js

package json_test

import (
	"bytes"
	stdjson "encoding/json"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"schedplay/engine"
	"schedplay/playground"
	"schedplay/presets"
)

// TestSameBytesBothWays marshals what the page marshals — every machine
// preset (the share link carries a custom machine as JSON), a run's
// results, the decision log, a link's state and a build's progress — with
// go-json (the CLI's library) and encoding/json (the browser's) and wants
// the same bytes: a link made in the page must reopen the same run on the
// command line, and the page's results must read like the CLI's.
func TestSameBytesBothWays(t *testing.T) {
	st, err := playground.Parse("preset=intel-2s-44c-88t&w=schbench:m=2,t=22&seed=3")
	if err != nil {
		t.Fatal(err)
	}
	arm, err := playground.BuildArm(st, 0, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := playground.NewRunner(arm, 1, 1, false)
	r.RunUntil(200 * engine.Millisecond)
	res, err := r.Results()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{
		"state":    st,
		"results":  res,
		"decoded":  decodeStd(t, res),
		"log":      r.Log.Last(playground.LogSize),
		"progress": playground.BuildProgress{},
	}
	for _, m := range presets.Machines() {
		values["machine "+m.Name] = m
	}
	for name, v := range values {
		a, errA := gojson.Marshal(v)
		b, errB := stdjson.Marshal(v)
		if errA != nil || errB != nil {
			t.Fatalf("%s: go-json %v, encoding/json %v", name, errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the two libraries disagree\ngo-json:       %.300s\nencoding/json: %.300s", name, a, b)
		}
		ia, _ := gojson.MarshalIndent(v, "", "  ")
		ib, _ := stdjson.MarshalIndent(v, "", "  ")
		if !bytes.Equal(ia, ib) {
			t.Errorf("%s: indented forms disagree", name)
		}
	}
	if len(r.Log.Last(playground.LogSize)) == 0 {
		t.Error("the run logged no decisions: the log comparison compared nothing")
	}
}

// decodeStd reads results back as generic JSON (floats, nested maps), the
// shape the page's experiment code re-encodes.
func decodeStd(t *testing.T, b []byte) any {
	var v any
	if err := stdjson.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
