package oracle

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Row is one measure: the real kernel's figure, the simulation's, the
// tolerance and the verdict ("ok", "differs", or "—" for a figure shown
// but not judged).
type Row struct {
	Name      string  `json:"name"`
	Real      float64 `json:"real"`
	Sim       float64 `json:"sim"`
	Tolerance float64 `json:"tolerance"`
	Relative  bool    `json:"relative,omitempty"` // tolerance is a fraction of the real figure
	Verdict   string  `json:"verdict"`
	Unit      string  `json:"unit,omitempty"`
}

// The tolerances, set before any comparison was run and never moved to
// make one pass: a share of wakeups may differ by 10 points, a rate by a
// quarter of the real one, the spread of the first runs by a quarter.
const (
	shareTolerance  = 0.10
	rateTolerance   = 0.25
	spreadTolerance = 0.25
)

// compare lays the measures side by side.
func compare(real, sim *Measures, tm TimeMode) []Row {
	var rows []Row
	share := func(name string, r, s float64) {
		rows = append(rows, judge(Row{Name: name, Real: r, Sim: s, Tolerance: shareTolerance}))
	}
	for d := 0; d < nDist; d++ {
		share("lands vs prev CPU: "+DistNames[d], real.VsPrev[d], sim.VsPrev[d])
	}
	for d := 0; d < nDist; d++ {
		share("lands vs waker's CPU: "+DistNames[d], real.VsWaker[d], sim.VsWaker[d])
	}
	share("placed on a busy CPU", real.PlacedBusy, sim.PlacedBusy)
	for d := SMTSibling; d < nDist; d++ {
		share("migrations per wakeup: "+DistNames[d], real.MigrationsPerWakeup[d], sim.MigrationsPerWakeup[d])
	}
	rows = append(rows, judge(Row{Name: "first runs' LLC spread", Real: real.FirstRunLLCSpread, Sim: sim.FirstRunLLCSpread, Tolerance: spreadTolerance}))
	share("CPU time idle while a task waits elsewhere", real.IdleWhileWaiting, sim.IdleWhileWaiting)
	rows = append(rows, judge(Row{Name: "context switches per wakeup", Real: real.SwitchesPerWakeup, Sim: sim.SwitchesPerWakeup, Tolerance: rateTolerance, Relative: true}))
	rows = append(rows, compareRT(real.RT, sim.RT)...)
	// Per operation: shown, not judged (added after the tolerances were
	// set; the table's counts stay those of the measures above).
	if real.Ops > 0 && sim.Ops > 0 {
		rows = append(rows, Row{Name: "context switches per operation", Real: real.SwitchesPerOp, Sim: sim.SwitchesPerOp, Verdict: "—", Unit: "shown, not judged"},
			Row{Name: "migrations per operation", Real: real.MigrationsPerOp, Sim: sim.MigrationsPerOp, Verdict: "—", Unit: "shown, not judged"})
	}
	// Latencies are shown, not judged: the guest's clock is emulated
	// (icount: a 1 GHz machine whose memory never stalls), the
	// simulation's costs are the preset's hardware.
	unit := "µs, emulated time"
	if tm == HostClock {
		unit = "µs, TCG on a shared host"
	}
	rows = append(rows, Row{Name: "wakeup latency p50", Real: real.LatencyP50, Sim: sim.LatencyP50, Verdict: "—", Unit: unit},
		Row{Name: "wakeup latency p99", Real: real.LatencyP99, Sim: sim.LatencyP99, Verdict: "—", Unit: unit})
	return rows
}

// compareRT lays the RT class's measures side by side, when either side
// had RT tasks: judged with the tolerances above (shares of wakeups ±
// 0.10, the RT share of CPU time ± 0.10; moves per RT wakeup as the
// migrations per wakeup, ± 0.10). Without RT wakeups on both sides (FIFO
// hogs never sleep) the moves are counts per RT task, shown, not judged.
func compareRT(real, sim *RTMeasures) []Row {
	if real == nil && sim == nil {
		return nil
	}
	if real == nil {
		real = &RTMeasures{}
	}
	if sim == nil {
		sim = &RTMeasures{}
	}
	var rows []Row
	share := func(name string, r, s float64) {
		rows = append(rows, judge(Row{Name: name, Real: r, Sim: s, Tolerance: shareTolerance}))
	}
	share("RT: share of CPU time", real.CPUShare, sim.CPUShare)
	if real.Wakeups > 0 && sim.Wakeups > 0 {
		rw, sw := float64(real.Wakeups), float64(sim.Wakeups)
		share("RT wakeups: lands on prev CPU", real.LandsPrev, sim.LandsPrev)
		share("RT wakeups: placed on a busy CPU", real.PlacedBusy, sim.PlacedBusy)
		share("RT wakeups: placed on a CPU running an RT task", real.PlacedOnRT, sim.PlacedOnRT)
		share("RT migrations per RT wakeup", float64(real.Migrations)/rw, float64(sim.Migrations)/sw)
		share("RT moves while queued (push/pull) per RT wakeup", float64(real.QueuedMoves)/rw, float64(sim.QueuedMoves)/sw)
	} else {
		per := func(k int, t int) float64 {
			if t == 0 {
				return 0
			}
			return float64(k) / float64(t)
		}
		rows = append(rows,
			Row{Name: "RT migrations per RT task", Real: per(real.Migrations, real.Tasks), Sim: per(sim.Migrations, sim.Tasks), Verdict: "—", Unit: "shown, not judged (no RT wakeups)"},
			Row{Name: "RT moves while queued (push/pull) per RT task", Real: per(real.QueuedMoves, real.Tasks), Sim: per(sim.QueuedMoves, sim.Tasks), Verdict: "—", Unit: "shown, not judged (no RT wakeups)"})
	}
	if real.FairWakeups > 0 && sim.FairWakeups > 0 {
		share("fair wakeups placed on a CPU running an RT task", real.FairOnRT, sim.FairOnRT)
	}
	return rows
}

func judge(r Row) Row {
	tol := r.Tolerance
	if r.Relative {
		tol *= math.Abs(r.Real)
	}
	r.Verdict = "ok"
	if math.Abs(r.Sim-r.Real) > tol+1e-12 {
		r.Verdict = "differs"
	}
	return r
}

// Differs counts the rows beyond tolerance.
func (c *Comparison) Differs() int {
	n := 0
	for _, r := range c.Measures {
		if r.Verdict == "differs" {
			n++
		}
	}
	return n
}

// WriteText prints the comparison for a person.
func (c *Comparison) WriteText(w io.Writer) {
	fmt.Fprintf(w, "kernel %s (%s %s) under QEMU: %s\n", c.Kernel, c.Package, c.Version, c.Accel)
	fmt.Fprintf(w, "machine: %s\n", c.Shape)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintf(w, "guest: %s, %d CPUs, topology as simulated (packages, SMT siblings, L3, nodes, scheduler domains)\n", c.Guest.Kernel, c.Guest.NCPU)
	fmt.Fprintf(w, "simulation: %v — %s\n", c.Knobs, c.EraNote)
	if len(c.Features) > 0 {
		var ts []string
		for _, f := range c.Features {
			ts = append(ts, f.Token())
		}
		fmt.Fprintf(w, "features: %s written to the guest's %s before the load (its features line shows them), and the same knobs in the simulation\n", strings.Join(ts, " "), schedFeaturesFile)
	}
	fmt.Fprintf(w, "workloads: %v for %g s; guest: %d wakeups of %d tasks over %.3f s, trace %d KB, %.0f s of wall time; sim: %d wakeups of %d tasks\n",
		c.Workloads, c.Duration, c.Real.Wakeups, c.Real.Tasks, float64(c.Real.SpanNS)/1e9, c.TraceKB, c.WallS, c.Sim.Wakeups, c.Sim.Tasks)
	for _, l := range c.Load {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if c.Real.RT != nil || c.Sim.RT != nil {
		rt := func(m *RTMeasures) string {
			if m == nil {
				return "no RT task"
			}
			return fmt.Sprintf("%d RT tasks, %d RT wakeups, %d fair wakeups", m.Tasks, m.Wakeups, m.FairWakeups)
		}
		fmt.Fprintf(w, "RT class (FIFO/RR and deadline): guest %s; sim %s", rt(c.Real.RT), rt(c.Sim.RT))
		if c.SimRT != nil {
			fmt.Fprintf(w, " (the simulation's own counts: %d pushes, %d pulls, %d throttles)", c.SimRT.Pushes, c.SimRT.Pulls, c.SimRT.Throttles)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nmeasure\treal\tsim\tdifference\ttolerance\tverdict\t\n")
	for _, r := range c.Measures {
		tol := fmt.Sprintf("± %.2f", r.Tolerance)
		if r.Relative {
			tol = fmt.Sprintf("± %.0f%%", 100*r.Tolerance)
		}
		if r.Verdict == "—" {
			tol = r.Unit
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.3f\t%s\t%s\t\n", r.Name, r.Real, r.Sim, r.Sim-r.Real, tol, r.Verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d of %d judged measures differ beyond tolerance\n", c.Differs(), c.judged())
}

func (c *Comparison) judged() int {
	n := 0
	for _, r := range c.Measures {
		if r.Verdict != "—" {
			n++
		}
	}
	return n
}
