package ui

import (
	"sync"

	"schedplay/engine"
	"schedplay/playground"
)

// Settings the page shell changes from its own event handlers (a
// decision's probe path to highlight, the baseline arm): kept under a
// lock, copied by the canvas once per frame.

// Highlight is a wakeup decision's path to draw on one arm's map: the
// target, the CPUs probed in the order they were probed, and the chosen
// CPU (-1 where unknown).
type Highlight struct {
	Arm    int
	Target int
	Path   []int
	Chosen int
}

// Active reports whether there is anything to draw.
func (h *Highlight) Active() bool {
	return h.Arm >= 0 && (len(h.Path) > 0 || h.Target >= 0 || h.Chosen >= 0)
}

// shellSettings is what the shell sets, guarded by mu; gen counts
// changes so the canvas copies only when something changed.
type shellSettings struct {
	mu        sync.Mutex
	gen       int
	highlight Highlight
	baseline  int
}

func newShellSettings() *shellSettings {
	return &shellSettings{highlight: Highlight{Arm: -1, Target: -1, Chosen: -1}}
}

func (s *shellSettings) setHighlight(h Highlight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Path = append([]int(nil), h.Path...)
	s.highlight = h
	s.gen++
}

func (s *shellSettings) setBaseline(arm int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.baseline = max(arm, 0)
	s.gen++
}

// copyTo copies the settings into h and baseline when they changed since
// gen, returning the new generation.
func (s *shellSettings) copyTo(gen int, h *Highlight, baseline *int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == gen {
		return gen
	}
	h.Arm, h.Target, h.Chosen = s.highlight.Arm, s.highlight.Target, s.highlight.Chosen
	h.Path = append(h.Path[:0], s.highlight.Path...)
	*baseline = s.baseline
	return s.gen
}

// PathOrder returns, for each CPU of a machine of ncpu CPUs, its
// 1-based position in path (0: not on it; a CPU probed twice keeps its
// first position). CPUs out of range are ignored.
func PathOrder(path []int, ncpu int, dst []int) []int {
	if cap(dst) < ncpu {
		dst = make([]int, ncpu)
	}
	dst = dst[:ncpu]
	for i := range dst {
		dst[i] = 0
	}
	for i, c := range path {
		if c >= 0 && c < ncpu && dst[c] == 0 {
			dst[c] = i + 1
		}
	}
	return dst
}

// panelSelection finds the decision the panel selected ("Step one
// wakeup", a click in the decisions list): the first arm whose view
// carries one, and that decision (-1, nil: none).
func panelSelection(arms []*playground.ArmView) (int, *engine.Decision) {
	for i, v := range arms {
		if v.Highlight != nil {
			return i, v.Highlight
		}
	}
	return -1, nil
}

// decisionHighlight is what the canvas draws for decision d of arm arm:
// its target, its probe path in order and its chosen CPU; nothing for a
// nil d.
func decisionHighlight(arm int, d *engine.Decision) Highlight {
	if d == nil {
		return Highlight{Arm: -1, Target: -1, Chosen: -1}
	}
	return Highlight{Arm: arm, Target: d.Target, Path: d.Probes, Chosen: d.Chosen}
}
