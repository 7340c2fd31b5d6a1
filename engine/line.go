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
//   - a transfer in flight at that moment (another CPU fetching or
//     writing the line): the access waits for the rest of it, since the
//     line's home agent serves one request at a time.
//
// Under overload the owners rewrite their lines at every enqueue, dequeue
// and switch, so more probes find them written and pay a transfer, and a
// probe that arrives while another waker is fetching the line waits: that
// is how the search gets dearer on a busy machine, and more so across
// sockets. A search's probes are priced at decision time at the moments
// they would happen (the decision time plus the earlier probes' cost), so
// a transfer only delays accesses that fall inside its own window; the
// wait is at most one transfer (requests are not queued several deep).

// line is the coherence state of one runqueue's hot line.
type line struct {
	owner int32 // CPU that last wrote it
	dirty bool  // written since anyone else read it
	// The last transfer of the line occupies [xferFrom, xferTo).
	xferFrom, xferTo int64
}

// waitAt is how long an access at time at waits for a transfer in flight.
func (l *line) waitAt(at int64) int64 {
	if at >= l.xferFrom && at < l.xferTo {
		return l.xferTo - at
	}
	return 0
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
	wait := l.waitAt(at)
	var x int64
	switch d := s.topo.Distance(r, owner); {
	case l.dirty:
		x = s.lineCost[d]
		l.dirty = false
		l.xferFrom, l.xferTo = at+wait, at+wait+x
	case d == machine.SameCore || d == machine.SameLLC:
		x = min(s.l3HitNS, s.lineCost[d])
	default:
		x = s.lineCost[d]
	}
	return wait + x
}

// writeLine is CPU w writing c's runqueue line at time at (an enqueue,
// dequeue or switch under c's rq lock); it returns what the write cost w:
// a remote writer fetches the line from its last writer. The owner's own
// writes cost nothing extra (the store buffer hides the upgrade of a
// shared copy), but they make the line dirty again.
func (s *Sim) writeLine(w int, c *cpu, at int64) int64 {
	l := &c.rqLine
	cost := int64(0)
	if int(l.owner) != w {
		wait := l.waitAt(at)
		x := s.lineCost[s.topo.Distance(w, int(l.owner))]
		cost = wait + x
		l.xferFrom, l.xferTo = at+wait, at+cost
	}
	l.owner = int32(w)
	l.dirty = true
	return cost
}
