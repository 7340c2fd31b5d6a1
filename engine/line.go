package engine

import (
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Cache lines of shared scheduler state. The idle search reads other CPUs'
// runqueue lines (rq->curr, rq->nr_running and rq->wake_list share the
// line of rq->lock in v5.2's struct rq), and a same-LLC waker takes the
// remote rq lock and writes the runqueue. What such an access costs
// depends on where the line is, MESI-style:
//
//   - written since anyone else read it (Modified in its writer's cache):
//     a core-to-core transfer, priced by the distance between the reader
//     and the writer (line_smt/llc/cross_llc/cross_socket_ns);
//   - read since (Shared): an LLC hit for a reader in the writer's LLC
//     (l3_hit_ns), otherwise still a transfer from that LLC;
//   - a transfer already in flight (another CPU fetching or writing the
//     line): the access waits for it first, since the line's home agent
//     serves one request at a time.
//
// Under overload the owners rewrite their lines at every enqueue, dequeue
// and switch, so nearly every probe is a transfer, and probes of a line
// that several wakers want at once queue behind each other: that is how
// the search gets expensive on a busy machine, and more so across sockets.

// line is the coherence state of one runqueue's hot line.
type line struct {
	owner     int32 // CPU that last wrote it
	dirty     bool  // written since anyone else read it
	busyUntil int64 // a transfer of the line is in flight until then
}

// initLineCosts caches the per-distance transfer costs.
func (s *Sim) initLineCosts() {
	s.lineCost[machine.SameCPU] = 0
	s.lineCost[machine.SameCore] = s.k.Get(knob.LineSMTNS)
	s.lineCost[machine.SameLLC] = s.k.Get(knob.LineLLCNS)
	s.lineCost[machine.SameSocket] = s.k.Get(knob.LineCrossLLCNS)
	s.lineCost[machine.CrossSocket] = s.k.Get(knob.LineCrossSocketNS)
	s.l3HitNS = s.k.Get(knob.L3HitNS)
}

// lineXfer is the cost of moving a written line from CPU from to CPU to.
func (s *Sim) lineXfer(from, to int) int64 {
	return s.lineCost[s.topo.Distance(from, to)]
}

// readLine is CPU r reading c's runqueue line at time at; it returns what
// the read cost r (waiting included).
func (s *Sim) readLine(r int, c *cpu, at int64) int64 {
	l := &c.rqLine
	owner := int(l.owner)
	if owner == r {
		return 0
	}
	wait := max(0, l.busyUntil-at)
	var x int64
	switch d := s.topo.Distance(r, owner); {
	case l.dirty:
		x = s.lineCost[d]
		l.dirty = false
		l.busyUntil = at + wait + x
	case d == machine.SameCore || d == machine.SameLLC:
		x = min(s.l3HitNS, s.lineCost[d])
	default:
		x = s.lineCost[d]
	}
	return wait + x
}

// writeLine is CPU w writing c's runqueue line at time at (an enqueue,
// dequeue or switch under c's rq lock); it returns what the write cost w.
// The owner's own writes to a line it holds cost nothing extra (the store
// buffer hides them), but they make the line dirty again.
func (s *Sim) writeLine(w int, c *cpu, at int64) int64 {
	l := &c.rqLine
	cost := int64(0)
	if int(l.owner) != w || !l.dirty {
		wait := max(0, l.busyUntil-at)
		x := s.lineCost[s.topo.Distance(w, int(l.owner))]
		if int(l.owner) == w {
			x = min(s.l3HitNS, x) // upgrade of a shared copy: invalidate the readers
		}
		cost = wait + x
		l.busyUntil = at + cost
	}
	l.owner = int32(w)
	l.dirty = true
	return cost
}
