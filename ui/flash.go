package ui

import "schedplay/engine"

// Wakeup flashes: the most recent wakeup decisions, drawn on the map for
// FlashLife seconds of wall time as a line from the target (wake_affine's
// choice) to the chosen CPU, with the CPUs select_idle_sibling probed.

const (
	// FlashLife is how long a flash stays visible, in wall seconds.
	FlashLife = 0.45
	// MaxFlashProbes is how many probes of one decision are marked.
	MaxFlashProbes = 32
	// flashCap is the ring's size; FlashesPerFrame the most decisions one
	// frame adds (the newest), so a busy machine stays readable.
	flashCap        = 64
	FlashesPerFrame = 6
)

// Flash is one remembered decision.
type Flash struct {
	Target, Chosen, Prev int
	Stage                engine.Stage
	NProbes              int // probes made (may exceed the stored ones)
	Probes               [MaxFlashProbes]int32
	Age                  float64 // wall seconds since it was added
}

// Stored returns the stored probes.
func (f *Flash) Stored() []int32 { return f.Probes[:min(f.NProbes, MaxFlashProbes)] }

// Alpha is the flash's opacity: 1 when new, fading linearly to 0.
func (f *Flash) Alpha() float64 { return max(0, 1-f.Age/FlashLife) }

// FlashRing keeps the newest flashes in preallocated storage.
type FlashRing struct {
	buf  [flashCap]Flash
	next int
	n    int
}

// Add records decision d as a new flash, overwriting the oldest.
func (r *FlashRing) Add(d *engine.Decision) {
	fill(&r.buf[r.next], d)
	r.advance()
}

func (r *FlashRing) push(f *Flash) {
	r.buf[r.next] = *f
	r.advance()
}

func (r *FlashRing) advance() {
	r.next = (r.next + 1) % flashCap
	r.n = min(r.n+1, flashCap)
}

func fill(f *Flash, d *engine.Decision) {
	f.Target, f.Chosen, f.Prev, f.Stage, f.Age = d.Target, d.Chosen, d.Prev, d.Stage, 0
	f.NProbes = len(d.Probes)
	for i := 0; i < min(len(d.Probes), MaxFlashProbes); i++ {
		f.Probes[i] = int32(d.Probes[i])
	}
}

// Len is the number of flashes held (visible or faded).
func (r *FlashRing) Len() int { return r.n }

// At returns flash i, 0 being the oldest.
func (r *FlashRing) At(i int) *Flash { return &r.buf[(r.next-r.n+i+flashCap)%flashCap] }

// Tick ages every flash by dt wall seconds and forgets the faded ones.
func (r *FlashRing) Tick(dt float64) {
	for i := 0; i < r.n; i++ {
		r.At(i).Age += dt
	}
	for r.n > 0 && r.At(0).Age >= FlashLife {
		r.n--
	}
}

// Live reports whether a flash is still fading (the canvas animates it).
func (r *FlashRing) Live() bool { return r.n > 0 }

// Reset forgets every flash.
func (r *FlashRing) Reset() { r.next, r.n = 0, 0 }

// Staging collects the newest FlashesPerFrame decisions seen during one
// DecisionsSince call; Flush moves them into a ring.
type Staging struct {
	buf  [FlashesPerFrame]Flash
	next int
	n    int
}

// Add keeps decision d, dropping the oldest staged one when full.
func (s *Staging) Add(d *engine.Decision) {
	fill(&s.buf[s.next], d)
	s.next = (s.next + 1) % FlashesPerFrame
	s.n = min(s.n+1, FlashesPerFrame)
}

// Flush moves the staged decisions, oldest first, into r.
func (s *Staging) Flush(r *FlashRing) {
	for i := 0; i < s.n; i++ {
		r.push(&s.buf[(s.next-s.n+i+FlashesPerFrame)%FlashesPerFrame])
	}
	s.next, s.n = 0, 0
}
