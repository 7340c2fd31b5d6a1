package engine

// decisionRing keeps the most recent wakeup decisions, with their probe
// lists, in preallocated storage (the live view flashes these).
type decisionRing struct {
	decs   []Decision
	probes [][]int
	next   int
	count  int64
}

const maxTracedProbes = 64

func (r *decisionRing) init(n int) {
	r.decs = make([]Decision, n)
	r.probes = make([][]int, n)
	for i := range r.probes {
		r.probes[i] = make([]int, 0, maxTracedProbes)
	}
}

func (r *decisionRing) add(d *Decision) {
	i := r.next
	p := r.probes[i][:0]
	n := min(len(d.Probes), maxTracedProbes)
	p = append(p, d.Probes[:n]...)
	r.probes[i] = p
	r.decs[i] = *d
	r.decs[i].Probes = p
	r.next = (i + 1) % len(r.decs)
	r.count++
}

// RecentDecisions returns up to n of the most recent wakeup decisions,
// newest first. Probe lists are truncated to 64 entries; the slices are
// copies.
func (s *Sim) RecentDecisions(n int) []Decision {
	r := &s.trace
	n = int(min(int64(n), r.count, int64(len(r.decs))))
	out := make([]Decision, 0, n)
	for k := 1; k <= n; k++ {
		i := (r.next - k + len(r.decs)) % len(r.decs)
		d := r.decs[i]
		d.Probes = append([]int(nil), d.Probes...)
		out = append(out, d)
	}
	return out
}
