package oracle

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"schedplay/engine"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
	"schedplay/scenario"
	"schedplay/trace"
)

// Options describe one comparison: a kernel, a machine shape, the
// workloads and how long they run.
type Options struct {
	Kernel    *Kernel
	Base      *machine.Spec // the preset the shape comes from (costs, idle states)
	Shape     Shape
	Notes     []string // what scaling kept and dropped
	Workloads []string
	Duration  time.Duration
	Seed      uint64
	Time      TimeMode
	Cache     string // the kernels' cache
	Keep      string // keep the guest's files here ("": a temporary directory)
	Logf      func(string, ...any)
	// Features are set in the guest (sched/features, before the load)
	// and in the simulation (the knobs); Kernel.ParseFeatures makes them.
	Features []Feature
}

// Requirements names what the host lacks to boot a guest, as the Debian
// packages to install (empty: nothing).
func Requirements() []string {
	var missing []string
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		missing = append(missing, "qemu-system-x86")
	}
	if err := staticBusybox(busyboxPath); err != nil {
		missing = append(missing, "busybox-static")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		missing = append(missing, "gcc (and libc6-dev: the guest load is compiled static)")
	}
	for _, tool := range []string{"apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, "a Debian system ("+tool+")")
		}
	}
	return missing
}

// busyboxPath is where busybox-static installs busybox.
const busyboxPath = "/bin/busybox"

// staticBusybox checks that path is a static executable (Debian's
// busybox package is dynamic; the guest has no libc).
func staticBusybox(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (install busybox-static)", path)
		}
	}
	return nil
}

// Comparison is the real kernel beside the simulation.
type Comparison struct {
	Kernel    string     `json:"kernel"`
	Package   string     `json:"package"`
	Version   string     `json:"version"`
	Shape     string     `json:"shape"`
	Notes     []string   `json:"notes"`
	Time      TimeMode   `json:"time_mode"`
	Accel     string     `json:"accel"`
	Workloads []string   `json:"workloads"`
	Duration  float64    `json:"duration_s"`
	Era       string     `json:"sim_era"`
	Knobs     []string   `json:"sim_knobs"`
	EraNote   string     `json:"sim_note"`
	Guest     *GuestView `json:"guest_topology"`
	Load      []string   `json:"guest_load"`
	Real      *Measures  `json:"real"`
	Sim       *Measures  `json:"sim"`
	Measures  []Row      `json:"measures"`
	WallS     float64    `json:"guest_wall_s"`
	TraceKB   int        `json:"guest_trace_kb"`
	// Features are the --feature settings, applied on both sides (the
	// guest's features line confirmed them).
	Features []Feature `json:"features,omitempty"`
	// SimRT is the simulation's own count of its RT class (pushes,
	// pulls, throttles; nil without RT tasks): the trace's measures
	// cannot tell a push from a pull.
	SimRT *engine.RTStats `json:"sim_rt,omitempty"`
}

// TopologyError is a guest whose topology differs from the simulated
// machine's: nothing is compared.
type TopologyError struct{ Diffs []string }

func (e *TopologyError) Error() string {
	return "the guest's topology differs from the simulated machine's: " + strings.Join(e.Diffs, "; ")
}

// Run boots the kernel on the shape, runs the workloads in the guest and
// in the simulation, and compares them.
func Run(ctx context.Context, o Options) (*Comparison, error) {
	if missing := Requirements(); len(missing) > 0 {
		return nil, fmt.Errorf("booting a guest needs %s (apt-get install qemu-system-x86 busybox-static)", strings.Join(missing, ", "))
	}
	spec := o.Shape.Spec(o.Base)
	tp, err := machine.Build(spec)
	if err != nil {
		return nil, fmt.Errorf("the simulated machine %s: %v", o.Shape, err)
	}
	var kinds []string
	var resolved []workload.Resolved
	for _, w := range o.Workloads {
		r, err := workload.Resolve(w, tp.NCPU)
		if err != nil {
			return nil, err
		}
		kinds, resolved = append(kinds, r.Kind), append(resolved, r)
	}
	args, err := guestLoadArgs(o.Duration, resolved)
	if err != nil {
		return nil, err
	}
	for _, ft := range o.Features {
		if _, err := o.Kernel.ParseFeature(ft.String()); err != nil {
			return nil, err
		}
	}
	// The simulation must take the workloads before a guest boots for
	// them (an era refuses what it does not model, such as 6.1 a custom
	// slice).
	if err := simTakes(spec, o); err != nil {
		return nil, err
	}
	f, err := Fetch(o.Kernel, o.Cache, o.Logf)
	if err != nil {
		return nil, err
	}
	hz, err := configHZ(f.Config)
	if err != nil {
		return nil, err
	}
	dir := o.Keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "schedplay-kernel-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	o.Logf("building the guest load and the initramfs")
	load, err := buildGuestLoad()
	if err != nil {
		return nil, err
	}
	initrd, err := buildInitramfs(initramfsOptions{Busybox: busyboxPath, GuestLoad: load, LoadArgs: args, BufferKB: traceBufferKB(o.Duration, tp.NCPU), Features: o.Features})
	if err != nil {
		return nil, err
	}
	initrdPath := filepath.Join(dir, "initrd.gz")
	if err := os.WriteFile(initrdPath, initrd, 0o644); err != nil {
		return nil, err
	}
	qemu, _ := exec.LookPath("qemu-system-x86_64")
	o.Logf("booting %s (%s) on %s, %s", f.Package, f.Version, o.Shape, accelText(o.Time))
	res, err := boot(ctx, bootOptions{QEMU: qemu, Kernel: f.Image, Initrd: initrdPath, Shape: o.Shape, Time: o.Time, Dir: dir,
		Timeout: bootTimeout(o.Duration, tp.NCPU)})
	if err != nil {
		return nil, err
	}
	if o.Time != Icount && o.Kernel.TimeNote != "" {
		o.Notes = append(o.Notes, "time: "+o.Kernel.TimeNote)
	}
	c := &Comparison{Kernel: o.Kernel.Name, Package: f.Package, Version: f.Version, Shape: o.Shape.String(), Notes: o.Notes,
		Time: o.Time, Accel: res.Accel, Workloads: o.Workloads, Duration: o.Duration.Seconds(),
		Era: o.Kernel.Era, EraNote: o.Kernel.Note, Features: o.Features, WallS: res.Wall.Seconds()}
	topo, _ := section(res.Report, markTopology)
	if c.Guest, err = parseGuestView(topo); err != nil {
		return nil, err
	}
	if diffs := c.Guest.Check(tp); len(diffs) > 0 {
		return c, &TopologyError{Diffs: diffs}
	}
	if err := c.Guest.CheckFeatures(o.Features); err != nil {
		return c, err
	}
	simSpec, idleNote := c.Guest.withIdle(spec)
	simSpec, numaNote := c.Guest.withNUMA(simSpec)
	c.Notes = append(c.Notes, idleNote, numaNote)
	loadOut, _ := section(res.Report, markLoad)
	for _, l := range strings.Split(strings.TrimSpace(loadOut), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			c.Load = append(c.Load, l)
		}
	}
	if len(c.Load) == 0 || c.Load[len(c.Load)-1] != "exit 0" {
		return c, fmt.Errorf("the guest load failed: %s", strings.Join(c.Load, " | "))
	}
	if res.TraceGz == nil {
		return c, fmt.Errorf("the guest's report has no trace")
	}
	zr, err := gzip.NewReader(bytes.NewReader(res.TraceGz))
	if err != nil {
		return c, fmt.Errorf("the guest's trace: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return c, fmt.Errorf("the guest's trace: %v", err)
	}
	traceText := string(raw)
	if kept, written, ok := traceEntries(traceText); ok && kept < written {
		return c, fmt.Errorf("the guest's trace buffer overflowed: it kept %d of %d events; run shorter (--duration) or a lighter workload", kept, written)
	}
	c.TraceKB = len(traceText) >> 10
	if o.Keep != "" {
		os.WriteFile(filepath.Join(dir, "guest.ftrace.txt"), []byte(traceText), 0o644)
	}
	keep := kindFilter(kinds)
	if c.Real, err = measure(strings.NewReader(traceText), tp, keep); err != nil {
		return c, fmt.Errorf("the guest's trace: %v", err)
	}
	c.Real.setOps(guestOps(c.Load))
	// The simulation of the closest era on the same machine, HZ as the
	// guest kernel was built with.
	c.Knobs = append([]string{"era=" + o.Kernel.Era}, o.Kernel.Knobs...)
	c.Knobs = append(c.Knobs, fmt.Sprintf("hz=%d", hz))
	for _, ft := range o.Features {
		c.Knobs = append(c.Knobs, ft.Knob())
	}
	cfg := scenario.Config{Machine: simSpec, Preset: simSpec.Name, Workloads: o.Workloads, Knobs: c.Knobs, Seed: o.Seed, Duration: int64(o.Duration)}
	sim, err := cfg.Build()
	if err != nil {
		return c, fmt.Errorf("the simulation: %v", err)
	}
	var simTrace bytes.Buffer
	tw := trace.AttachFtrace(sim, &simTrace, trace.Options{})
	scenario.AdvanceContext(ctx, sim, cfg.Duration)
	if err := tw.Close(); err != nil {
		return c, err
	}
	if o.Keep != "" {
		os.WriteFile(filepath.Join(dir, "sim.ftrace.txt"), simTrace.Bytes(), 0o644)
	}
	if c.Sim, err = measure(&simTrace, tp, keep); err != nil {
		return c, fmt.Errorf("the simulation's trace: %v", err)
	}
	var simOps int64
	for _, w := range sim.Workloads() {
		simOps += w.Ops
	}
	c.Sim.setOps(simOps)
	c.SimRT = sim.RT()
	c.Measures = compare(c.Real, c.Sim, o.Time)
	return c, nil
}

// SimRefusedError is a comparison the simulation cannot run: its era
// does not take a workload (no guest was booted).
type SimRefusedError struct {
	Era string
	Err error
}

func (e *SimRefusedError) Error() string {
	return fmt.Sprintf("the simulation (era %s) refuses the workloads, no guest booted: %v", e.Era, e.Err)
}

// simTakes builds the comparison's simulation on spec with the kernel's
// era, knobs and features, and runs nothing.
func simTakes(spec *machine.Spec, o Options) error {
	knobs := append([]string{"era=" + o.Kernel.Era}, o.Kernel.Knobs...)
	for _, ft := range o.Features {
		knobs = append(knobs, ft.Knob())
	}
	cfg := scenario.Config{Machine: spec, Preset: spec.Name, Workloads: o.Workloads, Knobs: knobs, Seed: o.Seed, Duration: int64(o.Duration)}
	if _, err := cfg.Build(); err != nil {
		return &SimRefusedError{Era: o.Kernel.Era, Err: err}
	}
	return nil
}

// configHZ reads CONFIG_HZ from a kernel's config.
func configHZ(path string) (int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CONFIG_HZ="); ok {
			var hz int
			if _, err := fmt.Sscan(v, &hz); err == nil && hz > 0 {
				return hz, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no CONFIG_HZ", path)
}

// traceBufferKB sizes the guest's per-CPU trace buffer: about 64 bytes
// an event and up to ~200,000 events a CPU-second (a busy ping-pong),
// at least 4 MB, at most what a 1 GB guest can spare.
func traceBufferKB(d time.Duration, ncpu int) int {
	kb := int(d.Seconds()*200_000*64/1024) + 1
	return min(max(kb, 4096), 256<<10/ncpu)
}

// bootTimeout bounds a boot's wall time: TCG boots a small guest in
// tens of seconds; each guest second of each vCPU costs a few more.
func bootTimeout(d time.Duration, ncpu int) time.Duration {
	return 3*time.Minute + time.Duration(ncpu)*time.Duration(float64(d)*30)
}

// traceEntries reads the trace file's "# entries-in-buffer/entries-written:
// KEPT/WRITTEN" header (more written than kept: the ring buffer wrapped
// and the oldest events are gone).
func traceEntries(text string) (kept, written int, ok bool) {
	const h = "# entries-in-buffer/entries-written: "
	i := strings.Index(text, h)
	if i < 0 {
		return 0, 0, false
	}
	_, err := fmt.Sscanf(text[i+len(h):], "%d/%d", &kept, &written)
	return kept, written, err == nil
}
