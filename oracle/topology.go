package oracle

import (
	"fmt"
	"strings"

	"schedplay/engine/machine"
)

// Shape is a machine's shape as the guest gets it: sockets (one NUMA
// node each), LLCs per socket (a die each: with an Intel-vendor CPU
// model QEMU gives every die its own L3), cores per LLC and threads per
// core. CPUs are numbered socket by socket, die by die, core by core,
// the threads of a core next to each other (QEMU's order; the
// simulator's "contiguous" numbering).
type Shape struct {
	Sockets, LLCsPerSocket, CoresPerLLC, Threads int
	// Distance is the SLIT distance between two nodes QEMU gives the
	// guest (the machine's largest off-diagonal one; 0: 21).
	Distance int
}

// NCPU is the number of CPUs.
func (s Shape) NCPU() int { return s.Sockets * s.LLCsPerSocket * s.CoresPerLLC * s.Threads }

func (s Shape) String() string {
	return fmt.Sprintf("%d socket(s) × %d LLC(s) × %d cores × %d threads = %d CPUs", s.Sockets, s.LLCsPerSocket, s.CoresPerLLC, s.Threads, s.NCPU())
}

// MaxGuestCPUs bounds a guest: TCG emulates every vCPU on one host
// thread (icount), so boot and run time grow with the count.
const MaxGuestCPUs = 64

// ShapeOf is a machine spec's shape.
func ShapeOf(spec *machine.Spec) Shape {
	t := spec.Topology
	dist := 0
	for _, row := range spec.NUMADistance {
		for _, d := range row {
			dist = max(dist, d)
		}
	}
	if dist <= machine.LocalDistance {
		dist = 0
	}
	return Shape{Sockets: t.Sockets, LLCsPerSocket: t.CoresPerSocket / t.CoresPerLLC, CoresPerLLC: t.CoresPerLLC, Threads: t.ThreadsPerCore, Distance: dist}
}

// Scale fits s into at most max CPUs, keeping what shapes the wakeup
// path: the threads per core, the number of sockets (nodes) and, as long
// as it can, the LLC's size in cores. It halves the LLCs per socket
// first (down to 2, then 1), then the cores per LLC (down to 2). It
// returns the shape and a line each for what it kept and dropped.
func (s Shape) Scale(limit int) (Shape, []string) {
	out := s
	for out.NCPU() > limit && out.LLCsPerSocket > 2 {
		out.LLCsPerSocket = (out.LLCsPerSocket + 1) / 2
	}
	fitCores := func() {
		if out.NCPU() > limit {
			out.CoresPerLLC = min(out.CoresPerLLC, max(2, limit/(out.Sockets*out.LLCsPerSocket*out.Threads)))
		}
	}
	fitCores()
	for out.NCPU() > limit && out.LLCsPerSocket > 1 {
		out.LLCsPerSocket--
		out.CoresPerLLC = s.CoresPerLLC
		fitCores()
	}
	var notes []string
	if out == s {
		return out, []string{"kept the whole machine: " + s.String()}
	}
	notes = append(notes, fmt.Sprintf("scaled %s down to %s (at most %d vCPUs)", s, out, limit))
	kept := []string{fmt.Sprintf("%d threads per core", out.Threads), fmt.Sprintf("%d socket(s)", out.Sockets)}
	var dropped []string
	if out.CoresPerLLC == s.CoresPerLLC {
		kept = append(kept, fmt.Sprintf("LLCs of %d cores", out.CoresPerLLC))
	} else {
		dropped = append(dropped, fmt.Sprintf("LLCs of %d cores (now %d)", s.CoresPerLLC, out.CoresPerLLC))
	}
	if out.LLCsPerSocket == s.LLCsPerSocket {
		kept = append(kept, fmt.Sprintf("%d LLC(s) per socket", out.LLCsPerSocket))
	} else {
		dropped = append(dropped, fmt.Sprintf("%d LLCs per socket (now %d)", s.LLCsPerSocket, out.LLCsPerSocket))
	}
	notes = append(notes, "kept: "+strings.Join(kept, ", "))
	if len(dropped) > 0 {
		notes = append(notes, "dropped: "+strings.Join(dropped, ", "))
	}
	return out, notes
}

// ParseSMP reads --smp sockets=S,cores=C,threads=T[,llcs=L]: C cores per
// socket, in L LLCs (default 1).
func ParseSMP(s string) (Shape, error) {
	sh := Shape{Sockets: 1, LLCsPerSocket: 1, Threads: 1}
	cores := 0
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		var n int
		if _, err := fmt.Sscanf(v, "%d", &n); !ok || err != nil || n < 1 || n > 1024 || fmt.Sprint(n) != v {
			return sh, fmt.Errorf("--smp %q: %q is not KEY=N with N in 1..1024 (keys: sockets, cores, threads, llcs)", s, kv)
		}
		switch k {
		case "sockets":
			sh.Sockets = n
		case "cores":
			cores = n
		case "threads":
			sh.Threads = n
		case "llcs":
			sh.LLCsPerSocket = n
		default:
			return sh, fmt.Errorf("--smp %q: unknown key %q (keys: sockets, cores, threads, llcs)", s, k)
		}
	}
	if cores == 0 {
		return sh, fmt.Errorf("--smp %q: cores= is required (cores per socket)", s)
	}
	if cores%sh.LLCsPerSocket != 0 {
		return sh, fmt.Errorf("--smp %q: %d cores per socket do not split into %d LLCs", s, cores, sh.LLCsPerSocket)
	}
	sh.CoresPerLLC = cores / sh.LLCsPerSocket
	if n := sh.NCPU(); n > MaxGuestCPUs {
		return sh, fmt.Errorf("--smp %q: %d CPUs, more than a guest here may have (%d)", s, n, MaxGuestCPUs)
	}
	return sh, nil
}

// Spec is base's spec with this shape: the machine the simulation runs
// beside the guest (the costs, idle states and SMT throughput are base's;
// the numbering is the guest's).
func (s Shape) Spec(base *machine.Spec) *machine.Spec {
	sp := *base
	sp.Name = fmt.Sprintf("%s-as-guest-%ds%dl%dc%dt", base.Name, s.Sockets, s.LLCsPerSocket, s.CoresPerLLC, s.Threads)
	sp.Topology = machine.TopologySpec{Sockets: s.Sockets, CoresPerSocket: s.LLCsPerSocket * s.CoresPerLLC,
		ThreadsPerCore: s.Threads, CoresPerLLC: s.CoresPerLLC, Numbering: machine.Contiguous}
	if len(sp.SMTThroughput) > s.Threads {
		sp.SMTThroughput = sp.SMTThroughput[:s.Threads]
	}
	// The nodes are as far apart as qemuArgs puts them, and the guest's
	// kernel is x86's with a GenuineIntel vCPU: the generic reclaim
	// distance (GuestView.withNUMA reads what the guest really got).
	sp.NUMADistance, sp.NUMADistanceNote = nil, ""
	sp.ReclaimDistance, sp.NodeReclaimDistance, sp.ReclaimDistanceNote = 0, 0, ""
	if s.Sockets > 1 {
		d := s.guestDistance()
		sp.NUMADistance = make([][]int, s.Sockets)
		for i := range sp.NUMADistance {
			sp.NUMADistance[i] = make([]int, s.Sockets)
			for j := range sp.NUMADistance[i] {
				sp.NUMADistance[i][j] = d
				if i == j {
					sp.NUMADistance[i][j] = machine.LocalDistance
				}
			}
		}
		sp.NUMADistanceNote = "assumed: what QEMU's -numa dist gives the guest (oracle qemuArgs)"
	}
	return &sp
}

// guestDistance is the distance QEMU gives between two of the guest's
// nodes: the machine's, or 21 (a common two-socket SLIT) without one.
func (s Shape) guestDistance() int {
	if s.Distance == 0 {
		return 21
	}
	return s.Distance
}

// qemuArgs are the -smp, -cpu, -m and -numa arguments of the shape: one
// node per socket, 256 MB each (at least 1 GB in all), the machine's
// distance between nodes (21, a common two-socket SLIT, when it has none:
// the guest's distance table says what it got), so that the guest's
// sd_init sees the distance the machine's kernel would.
func (s Shape) qemuArgs() []string {
	memPerNode := max(256, (1024+s.Sockets-1)/s.Sockets)
	args := []string{
		// An Intel-vendor model: QEMU then gives each die its own L3
		// (an AMD one under TCG does not).
		// No RDRAND/RDSEED: the host's randomness would seed the guest.
		"-cpu", "max,vendor=GenuineIntel,rdrand=off,rdseed=off",
		"-smp", fmt.Sprintf("%d,sockets=%d,dies=%d,cores=%d,threads=%d", s.NCPU(), s.Sockets, s.LLCsPerSocket, s.CoresPerLLC, s.Threads),
		"-m", fmt.Sprintf("%dM", memPerNode*s.Sockets),
	}
	if s.Sockets > 1 {
		per := s.NCPU() / s.Sockets
		for n := 0; n < s.Sockets; n++ {
			args = append(args,
				"-object", fmt.Sprintf("memory-backend-ram,id=m%d,size=%dM", n, memPerNode),
				"-numa", fmt.Sprintf("node,nodeid=%d,cpus=%d-%d,memdev=m%d", n, n*per, (n+1)*per-1, n))
		}
		for a := 0; a < s.Sockets; a++ {
			for b := a + 1; b < s.Sockets; b++ {
				args = append(args, "-numa", fmt.Sprintf("dist,src=%d,dst=%d,val=%d", a, b, s.guestDistance()))
			}
		}
	}
	return args
}
