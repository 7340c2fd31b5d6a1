package ui

import (
	"slices"
	"testing"

	"schedplay/engine"
	"schedplay/playground"
)

// The decision the panel selects (ArmView.Highlight, set by "Step one
// wakeup" or a click in the decisions list) becomes the canvas highlight
// of its arm: target, probe path in order, chosen CPU; no selection
// draws nothing. (Game.followPanelHighlight hands this to the shell
// settings the canvas copies each frame.)
func TestPanelSelectionBecomesTheHighlight(t *testing.T) {
	d := &engine.Decision{Target: 3, Probes: []int{3, 7, 5}, Chosen: 5}
	arms := []*playground.ArmView{{}, {Highlight: d}}
	arm, got := panelSelection(arms)
	if arm != 1 || got != d {
		t.Fatalf("selection arm %d %p, want arm 1 %p", arm, got, d)
	}
	s := newShellSettings()
	s.setHighlight(decisionHighlight(arm, got))
	var h Highlight
	var base int
	s.copyTo(-1, &h, &base)
	if h.Arm != 1 || h.Target != 3 || h.Chosen != 5 || !slices.Equal(h.Path, []int{3, 7, 5}) || !h.Active() {
		t.Fatalf("canvas highlight %+v, want arm 1, target 3, path [3 7 5], chosen 5", h)
	}
	arms[1].Highlight = nil
	arm, got = panelSelection(arms)
	s.setHighlight(decisionHighlight(arm, got))
	s.copyTo(-1, &h, &base)
	if h.Active() {
		t.Fatalf("no selection left %+v on the canvas", h)
	}
}
