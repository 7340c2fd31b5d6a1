package main

import (
	"context"
	"testing"

	json "github.com/goccy/go-json"

	"schedplay/scenario"
)

// Running in steps (as the terminal progress display does) gives the
// same result as one advance: the display never changes a number.
func TestSteppedAdvanceSameResult(t *testing.T) {
	cfg := scenario.Config{Preset: "intel-2s-44c-88t", Workloads: []string{"schbench:m=2,t=22", "hog:n=4"}, Seed: 3, Duration: 300e6}
	a, _ := cfg.Build()
	scenario.AdvanceContext(context.Background(), a, cfg.Duration)
	b, _ := cfg.Build()
	for now := int64(0); now < cfg.Duration; {
		now = min(now+cfg.Duration/200, cfg.Duration)
		scenario.AdvanceContext(context.Background(), b, now)
	}
	ja, _ := json.Marshal(scenario.Summarize(&cfg, a, 0))
	jb, _ := json.Marshal(scenario.Summarize(&cfg, b, 0))
	if string(ja) != string(jb) {
		t.Errorf("stepped run differs:\n%s\n%s", ja, jb)
	}
}
