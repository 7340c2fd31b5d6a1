package oracle

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"schedplay/engine/machine"
	"schedplay/engine/workload"
	"schedplay/presets"
)

// The initramfs is a newc archive the kernel can unpack: every header
// 110 bytes of hex, names and data padded to 4, directories before their
// entries, and the same inputs give the same bytes.
func TestArchiveIsNewcAndReproducible(t *testing.T) {
	build := func() []byte {
		a := newArchive()
		a.file("bin/busybox", 0o755, []byte("ELF..."))
		a.symlink("bin/sh", "busybox")
		a.file("init", 0o755, []byte("#!/bin/sh\n"))
		var b bytes.Buffer
		if err := a.write(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	one, two := build(), build()
	if !bytes.Equal(one, two) {
		t.Fatal("two builds of the same archive differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	var names []string
	for off := 0; off < len(raw); {
		h := string(raw[off : off+110])
		if !strings.HasPrefix(h, "070701") {
			t.Fatalf("offset %d: magic %q", off, h[:6])
		}
		var size, nameSize int
		fmt.Sscanf(h[54:62], "%08X", &size)
		fmt.Sscanf(h[94:102], "%08X", &nameSize)
		name := string(raw[off+110 : off+110+nameSize-1])
		names = append(names, name)
		off += (110 + nameSize + 3) &^ 3
		off += (size + 3) &^ 3
		if name == "TRAILER!!!" {
			if off != len(raw) {
				t.Errorf("%d bytes after the trailer", len(raw)-off)
			}
			break
		}
	}
	if got := strings.Join(names, " "); got != "bin bin/busybox bin/sh init TRAILER!!!" {
		t.Errorf("entries %s", got)
	}
}

// Scaling keeps the threads per core and the sockets, then the LLC's
// size as long as it can; it says what it kept and dropped.
func TestShapeScale(t *testing.T) {
	for _, c := range []struct {
		preset string
		max    int
		want   Shape
	}{
		{"intel-2s-44c-88t", 16, Shape{2, 1, 4, 2, 21}},
		{"amd-zen4-2s-256c-512t", 64, Shape{2, 2, 8, 2, 32}}, // the example: 2 × 2 CCX × 8 × 2
		{"power9-2s-44c-176t", 32, Shape{2, 2, 2, 4, 40}},
		{"amd-7950x-16c-32t", 64, Shape{1, 2, 8, 2, 0}}, // fits whole
	} {
		spec, err := presets.Machine(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		got, notes := ShapeOf(spec).Scale(c.max)
		if got != c.want || got.NCPU() > c.max {
			t.Errorf("%s in %d: %v, want %v", c.preset, c.max, got, c.want)
		}
		t.Logf("%s: %s", c.preset, strings.Join(notes, "; "))
	}
}

func TestParseSMP(t *testing.T) {
	sh, err := ParseSMP("sockets=2,cores=8,threads=2,llcs=2")
	if err != nil || sh != (Shape{2, 2, 4, 2, 0}) {
		t.Errorf("%v %v", sh, err)
	}
	for _, bad := range []string{"sockets=2", "cores=3,llcs=2", "cores=2,foo=1", "cores=x", "cores=1024,sockets=2"} {
		if _, err := ParseSMP(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The QEMU arguments give one node per socket and one die (L3) per LLC.
func TestQEMUArgs(t *testing.T) {
	got := strings.Join(Shape{2, 2, 2, 2, 0}.qemuArgs(), " ")
	for _, want := range []string{"-smp 16,sockets=2,dies=2,cores=2,threads=2", "vendor=GenuineIntel",
		"node,nodeid=1,cpus=8-15,memdev=m1", "dist,src=0,dst=1,val=21", "-m 1024M"} {
		if !strings.Contains(got, want) {
			t.Errorf("qemu args lack %q: %s", want, got)
		}
	}
}

// The guest gets the machine's node distance, and the simulation of the
// comparison the guest's distances with x86's reclaim rule: the POWER9
// shape's 40 reaches a GenuineIntel guest as 40, compared with 30 there.
func TestGuestNUMAIsTheSimulated(t *testing.T) {
	if got := strings.Join(Shape{2, 1, 2, 2, 40}.qemuArgs(), " "); !strings.Contains(got, "dist,src=0,dst=1,val=40") {
		t.Errorf("qemu args without the machine's distance: %s", got)
	}
	spec, err := presets.Machine("power9-2s-44c-176t")
	if err != nil {
		t.Fatal(err)
	}
	v := &GuestView{Nodes: []GuestNode{{Node: 0, Distance: []int{10, 40}}, {Node: 1, Distance: []int{40, 10}}}}
	sim, note := v.withNUMA(spec)
	if sim.ReclaimDistance != 0 || sim.NodeReclaimDistance != 0 || len(sim.NUMADistance) != 2 || sim.NUMADistance[0][1] != 40 || sim.Validate() != nil {
		t.Errorf("simulated machine: reclaim %d/%d, table %v (%s)", sim.ReclaimDistance, sim.NodeReclaimDistance, sim.NUMADistance, note)
	}
	if spec.ReclaimDistance != 10 {
		t.Errorf("the preset itself changed: reclaim_distance %d", spec.ReclaimDistance)
	}
}

func TestHexMaskList(t *testing.T) {
	for in, want := range map[string]string{"03": "0-1", "0f": "0-3", "ff": "0-7", "00000000,00000100": "8", "f0": "4-7"} {
		if got, err := hexMaskList(in); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
}

// A report like the 6.12 guest's on 2 sockets × 2 cores × 2 threads
// (QEMU, Intel-vendor model) checks out against the simulated machine;
// a guest whose L3 spans the socket when the shape says two LLCs does not.
func TestGuestViewCheck(t *testing.T) {
	report := guestReport(Shape{2, 1, 2, 2, 0})
	v, err := parseGuestView(report)
	if err != nil {
		t.Fatal(err)
	}
	tp := mustTopology(t, Shape{2, 1, 2, 2, 0})
	if d := v.Check(tp); len(d) != 0 {
		t.Errorf("differences: %v", d)
	}
	tp2 := mustTopology(t, Shape{2, 2, 1, 2, 0})
	d := v.Check(tp2)
	if len(d) == 0 || !strings.Contains(strings.Join(d, " "), "L3 0-3 in the guest, LLC 0-1 simulated") {
		t.Errorf("a wrong LLC shape gives %v", d)
	}
	if v.IdleDriver != "none" || v.Kernel != "6.12.117+deb12-amd64" || len(v.Features) != 3 {
		t.Errorf("view %+v", v)
	}
}

func mustTopology(t *testing.T, s Shape) *machine.Topology {
	t.Helper()
	base, _ := presets.Machine("intel-2s-44c-88t")
	tp, err := machine.Build(s.Spec(base))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// guestReport writes the topology block a guest of shape s reports
// (the /init script's format), with its domains SMT ⊂ LLC ⊂ all.
func guestReport(s Shape) string {
	var b strings.Builder
	n := s.NCPU()
	fmt.Fprintf(&b, "uname 6.12.117+deb12-amd64\nncpu %d\n", n)
	perLLC, perSocket := s.CoresPerLLC*s.Threads, s.LLCsPerSocket*s.CoresPerLLC*s.Threads
	span := func(size, cpu int) string { a := cpu / size * size; return fmt.Sprintf("%d-%d", a, a+size-1) }
	mask := func(size, cpu int) string {
		a := cpu / size * size
		return fmt.Sprintf("%x", ((uint64(1)<<size)-1)<<a)
	}
	for c := 0; c < n; c++ {
		fmt.Fprintf(&b, "cpu %d package %d die %d core %d siblings %s l3 %s node %d\n", c, c/perSocket, c/perLLC, c/s.Threads, span(s.Threads, c), span(perLLC, c), c/perSocket)
	}
	for c := 0; c < n; c++ {
		fmt.Fprintf(&b, "cpu%d 0 0\ndomain0 %s 0\ndomain1 %s 0\ndomain2 %s 0\n", c, mask(s.Threads, c), mask(perLLC, c), mask(n, c))
	}
	b.WriteString("features PLACE_LAG SIS_UTIL TTWU_QUEUE\ncpuidle none\n")
	return b.String()
}

// The measures of a small hand-made trace: two tasks on a 2-core SMT2
// machine, one wakeup on the previous CPU, one on the waker's sibling
// while a task runs there, one migration.
func TestMeasuresOfAHandMadeTrace(t *testing.T) {
	tp := mustTopology(t, Shape{1, 1, 2, 2, 0})
	lines := []string{
		"w-1 [000] d..3 1.000000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=work-a next_pid=1 next_prio=120",
		"w-2 [002] d..3 1.000000000: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=work-b next_pid=2 next_prio=120",
		"w-1 [000] d..3 1.000010000: sched_switch: prev_comm=work-a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
		// b wakes a back onto its previous CPU 0 (idle): prev same, waker other core same LLC.
		"work-b-2 [002] d..3 1.000020000: sched_waking: comm=work-a pid=1 prio=120 target_cpu=000",
		"work-b-2 [002] d..3 1.000020000: sched_wakeup: comm=work-a pid=1 prio=120 target_cpu=000",
		"w-1 [000] d..3 1.000025000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=work-a next_pid=1 next_prio=120",
		"w-1 [000] d..3 1.000030000: sched_switch: prev_comm=work-a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
		// b wakes a onto CPU 3, b's sibling... no: onto CPU 2, busy with b itself.
		"work-b-2 [002] d..3 1.000040000: sched_waking: comm=work-a pid=1 prio=120 target_cpu=000",
		"work-b-2 [002] d..3 1.000040000: sched_wakeup: comm=work-a pid=1 prio=120 target_cpu=002",
		"w-2 [002] d..3 1.000050000: sched_switch: prev_comm=work-b prev_pid=2 prev_prio=120 prev_state=S ==> next_comm=work-a next_pid=1 next_prio=120",
		"kworker-9 [001] d..3 1.000060000: sched_waking: comm=kworker/1 pid=9 prio=120 target_cpu=001",
	}
	m, err := measure(strings.NewReader(strings.Join(lines, "\n")+"\n"), tp, kindFilter([]string{"work"}))
	if err != nil {
		t.Fatal(err)
	}
	if m.Wakeups != 2 || m.VsPrev[SameCPU] != 0.5 || m.VsPrev[SameLLC] != 0.5 || m.VsWaker[SameLLC] != 0.5 || m.VsWaker[SameCPU] != 0.5 {
		t.Errorf("landing: %+v", m)
	}
	if m.PlacedBusy != 0.5 || m.MigrationsPerWakeup[SameLLC] != 0.5 || m.LatencyP50 != 10 {
		t.Errorf("busy %v, migrations %v, latency %v", m.PlacedBusy, m.MigrationsPerWakeup, m.LatencyP50)
	}
	if m.SwitchesPerWakeup != 3 { // 6 switches to or from a work task, 2 wakeups
		t.Errorf("switches per wakeup %v", m.SwitchesPerWakeup)
	}
	// Per operation: the counts behind the rates, over the workload's
	// operations (4 here: 1.5 switches and 0.25 migrations each).
	m.setOps(4)
	if m.Switches != 6 || m.Migrations != 1 || m.SwitchesPerOp != 1.5 || m.MigrationsPerOp != 0.25 {
		t.Errorf("switches %d, migrations %d, per op %v, %v", m.Switches, m.Migrations, m.SwitchesPerOp, m.MigrationsPerOp)
	}
}

// The guest load's operations come from its report lines, one per
// workload.
func TestGuestOps(t *testing.T) {
	load := []string{
		`guestload: {"kind":"hackbench","threads":16,"ops":6400,"finished":true,"completion_s":0.043381,"wall_s":0.043391,"wakeup_latency_us":null}`,
		`guestload: {"kind":"schbench","threads":10,"ops":150,"finished":false}`,
		"exit 0",
	}
	if n := guestOps(load); n != 6550 {
		t.Errorf("ops %d", n)
	}
	rows := compare(&Measures{Ops: 10, SwitchesPerOp: 2}, &Measures{Ops: 20, SwitchesPerOp: 3}, Icount)
	var names []string
	for _, r := range rows {
		if strings.Contains(r.Name, "per operation") {
			names = append(names, r.Name)
			if r.Verdict != "—" {
				t.Errorf("%s judged", r.Name)
			}
		}
	}
	if len(names) != 2 {
		t.Errorf("per-operation rows %v", names)
	}
	if rows := compare(&Measures{}, &Measures{Ops: 20}, Icount); strings.Contains(fmt.Sprint(rows), "per operation") {
		t.Error("per-operation rows without the guest's operations")
	}
}

// Every key of a spec goes to the guest load, as the simulator's parser
// resolves it; the simulator's own cost keys do not, latency_nice is
// refused, and kinds without a guest load are refused by name.
func TestGuestLoadArgs(t *testing.T) {
	r, err := workload.Resolve("schbench:m=2,t=4", 8)
	if err != nil {
		t.Fatal(err)
	}
	args, err := guestLoadArgs(1e9, []workload.Resolved{r})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " ")
	if got != "1000000000 schbench R=0 c=30000 cpus= m=2 nice=0 p=0 policy=normal rtprio=0 s=30000 slice_us=0 t=4" {
		t.Errorf("args %s", got)
	}
	// The RT class reaches the guest load (sched_setscheduler), and
	// cyclictest is a guest kind.
	var rs []workload.Resolved
	for _, spec := range []string{"hog:n=2,policy=fifo,rtprio=50", "cyclictest:t=2,p=80"} {
		r, err := workload.Resolve(spec, 8)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if args, err = guestLoadArgs(1e9, rs); err != nil {
		t.Fatal(err)
	}
	got = strings.Join(args, " ")
	if want := "1000000000 hog cpus= n=2 nice=0 place=free policy=fifo rtprio=50 slice_us=0 -- cyclictest a=0 cpus= d=500 i=1000 l=0 latency=0 nice=0 p=80 policy=normal rtprio=0 slice_us=0 t=2"; got != want {
		t.Errorf("args %s\nwant %s", got, want)
	}
	for spec, want := range map[string]string{"schbench:latency_nice=-5": "latency-nice", "netperf:n=2": "runs schbench, hackbench, pipe, hog and cyclictest"} {
		r, _ := workload.Resolve(spec, 8)
		if _, err := guestLoadArgs(1e9, []workload.Resolved{r}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

func TestJudge(t *testing.T) {
	if r := judge(Row{Real: 0.5, Sim: 0.6, Tolerance: 0.10}); r.Verdict != "ok" {
		t.Error("a difference at the tolerance differs")
	}
	if r := judge(Row{Real: 0.5, Sim: 0.62, Tolerance: 0.10}); r.Verdict != "differs" {
		t.Error("a difference past the tolerance is ok")
	}
	if r := judge(Row{Real: 4, Sim: 4.9, Tolerance: 0.25, Relative: true}); r.Verdict != "ok" {
		t.Error("relative tolerance")
	}
}

// The report's gzip'd trace is taken out by its byte count, even when its
// bytes hold a newline or a marker-like line.
func TestSplitTrace(t *testing.T) {
	blob := []byte("\x1f\x8b\n=== schedplay end ===\nzz")
	rep := append([]byte("=== schedplay load ===\nexit 0\n"+markTrace+" "+fmt.Sprint(len(blob))+" ===\n"), blob...)
	rep = append(rep, []byte("\n"+markEnd+"\n")...)
	text, gz := splitTrace(rep)
	if !bytes.Equal(gz, blob) || text != "=== schedplay load ===\nexit 0\n\n"+markEnd+"\n" {
		t.Errorf("text %q, trace %q", text, gz)
	}
	if kept, written, ok := traceEntries("# tracer: nop\n#\n# entries-in-buffer/entries-written: 1754/1821   #P:8\n"); !ok || kept != 1754 || written != 1821 {
		t.Errorf("entries %d/%d %v", kept, written, ok)
	}
}

// A guest task names itself (prctl) after its first run: that run, under
// the runner's name and maybe on another CPU than its next, is where its
// fork placement put it, and the LLC spread counts it.
func TestFirstRunCountsBeforeTheTaskNamesItself(t *testing.T) {
	tp := mustTopology(t, Shape{1, 2, 1, 1, 0}) // CPU 0 in LLC 0, CPU 1 in LLC 1
	lines := []string{
		"x-0 [000] d..3 1.000000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=guestload next_pid=1 next_prio=120",
		"x-0 [000] d..3 1.000010000: sched_switch: prev_comm=work-a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
		"x-0 [001] d..3 1.000020000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=work-b next_pid=2 next_prio=120",
		"work-b-2 [001] d..3 1.000030000: sched_waking: comm=work-a pid=1 prio=120 target_cpu=000",
		"work-b-2 [001] d..3 1.000030000: sched_wakeup: comm=work-a pid=1 prio=120 target_cpu=001",
		"x-0 [001] d..3 1.000040000: sched_switch: prev_comm=work-b prev_pid=2 prev_prio=120 prev_state=S ==> next_comm=work-a next_pid=1 next_prio=120",
	}
	m, err := measure(strings.NewReader(strings.Join(lines, "\n")+"\n"), tp, kindFilter([]string{"work"}))
	if err != nil {
		t.Fatal(err)
	}
	if m.Tasks != 2 || m.FirstRunLLCSpread != 1 {
		t.Errorf("tasks %d, first runs' LLC spread %v (want 2 tasks over both LLCs: 1)", m.Tasks, m.FirstRunLLCSpread)
	}
}

// The RT measures of a hand-made trace: a task is RT when any of its
// lines has a prio below 100 (rt-h shows 49 only when it exits), its
// wakeups are counted by where they land, a run that starts away from
// the CPU it was woken onto is a move while queued, and a fair wakeup
// onto a CPU running an RT task is counted.
func TestRTMeasuresOfAHandMadeTrace(t *testing.T) {
	tp := mustTopology(t, Shape{1, 1, 2, 2, 0})
	lines := []string{
		"w-1 [002] d..3 1.000000000: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=work-f next_pid=3 next_prio=120",
		"w-1 [000] d..3 1.000000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt-h next_pid=2 next_prio=120",
		"w-1 [001] d..3 1.000000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt-a next_pid=1 next_prio=49",
		"w-1 [001] d..3 1.000010000: sched_switch: prev_comm=rt-a prev_pid=1 prev_prio=49 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
		// work-f wakes rt-a back onto its idle previous CPU 1.
		"work-f-3 [002] d..3 1.000020000: sched_waking: comm=rt-a pid=1 prio=49 target_cpu=001",
		"work-f-3 [002] d..3 1.000020000: sched_wakeup: comm=rt-a pid=1 prio=49 target_cpu=001",
		"w-1 [001] d..3 1.000025000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt-a next_pid=1 next_prio=49",
		"w-1 [001] d..3 1.000030000: sched_switch: prev_comm=rt-a prev_pid=1 prev_prio=49 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
		// Then onto CPU 0, running the RT hog; CPU 3 pulls it.
		"work-f-3 [002] d..3 1.000040000: sched_waking: comm=rt-a pid=1 prio=49 target_cpu=001",
		"work-f-3 [002] d..3 1.000040000: sched_wakeup: comm=rt-a pid=1 prio=49 target_cpu=000",
		"w-1 [003] d..3 1.000050000: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt-a next_pid=1 next_prio=49",
		// A fair wakeup onto the hog's CPU.
		"work-f-3 [002] d..3 1.000055000: sched_waking: comm=work-g pid=4 prio=120 target_cpu=000",
		"work-f-3 [002] d..3 1.000055000: sched_wakeup: comm=work-g pid=4 prio=120 target_cpu=000",
		"w-1 [003] d..3 1.000060000: sched_switch: prev_comm=rt-a prev_pid=1 prev_prio=49 prev_state=X ==> next_comm=swapper/3 next_pid=0 next_prio=120",
		"w-1 [000] d..3 1.000070000: sched_switch: prev_comm=rt-h prev_pid=2 prev_prio=49 prev_state=X ==> next_comm=work-g next_pid=4 next_prio=120",
		"w-1 [002] d..3 1.000080000: sched_switch: prev_comm=work-f prev_pid=3 prev_prio=120 prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120",
	}
	m, err := measure(strings.NewReader(strings.Join(lines, "\n")+"\n"), tp, kindFilter([]string{"rt", "work"}))
	if err != nil {
		t.Fatal(err)
	}
	rt := m.RT
	if rt == nil {
		t.Fatal("no RT measures")
	}
	if rt.Tasks != 2 || rt.Wakeups != 2 || rt.FairWakeups != 1 {
		t.Errorf("tasks %d, RT wakeups %d, fair wakeups %d", rt.Tasks, rt.Wakeups, rt.FairWakeups)
	}
	if rt.LandsPrev != 0.5 || rt.PlacedBusy != 0.5 || rt.PlacedOnRT != 0.5 || rt.FairOnRT != 1 {
		t.Errorf("lands on prev %v, busy %v, on RT %v, fair on RT %v", rt.LandsPrev, rt.PlacedBusy, rt.PlacedOnRT, rt.FairOnRT)
	}
	if rt.Migrations != 1 || rt.QueuedMoves != 1 {
		t.Errorf("migrations %d, moves while queued %d", rt.Migrations, rt.QueuedMoves)
	}
	// RT run time 70 + 10 + 5 + 10 µs of 4 CPUs × 80 µs.
	if math.Abs(rt.CPUShare-95.0/320) > 1e-9 {
		t.Errorf("RT CPU share %v", rt.CPUShare)
	}
	rows := compare(m, &Measures{Wakeups: 1}, Icount)
	judged := map[string]string{}
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "RT") || strings.HasPrefix(r.Name, "fair wakeups") {
			judged[r.Name] = r.Verdict
		}
	}
	// The simulation without RT tasks: its share is 0, beyond the
	// tolerance; without its RT wakeups the moves are per task, shown.
	if judged["RT: share of CPU time"] != "differs" || judged["RT migrations per RT task"] != "—" || len(judged) != 3 {
		t.Errorf("RT rows %v", judged)
	}
	// No RT task on either side: no RT rows.
	for _, r := range compare(&Measures{Wakeups: 1}, &Measures{Wakeups: 1}, Icount) {
		if strings.HasPrefix(r.Name, "RT") {
			t.Errorf("an RT row without RT tasks: %s", r.Name)
		}
	}
}

// The simulation's refusal comes before any boot: both eras take RT
// tasks (6.12 with its fair server); a per-task slice is 6.12's only.
func TestSimTakesBeforeBooting(t *testing.T) {
	base, _ := presets.Machine("intel-2s-44c-88t")
	spec := Shape{1, 1, 2, 2, 0}.Spec(base)
	rt := []string{"hog:n=2,policy=fifo,rtprio=50", "schbench:m=1,t=2"}
	slice := []string{"schbench:m=1,t=2,slice_us=500"}
	for _, name := range []string{"6.1", "6.12"} {
		k, err := KernelByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := simTakes(spec, Options{Kernel: k, Workloads: rt, Duration: 1e9, Seed: 1}); err != nil {
			t.Errorf("era %s refuses RT: %v", name, err)
		}
		err = simTakes(spec, Options{Kernel: k, Workloads: slice, Duration: 1e9, Seed: 1})
		var refused *SimRefusedError
		switch {
		case name == "6.12" && err != nil:
			t.Errorf("era 6.12 refuses a custom slice: %v", err)
		case name == "6.1" && (!errors.As(err, &refused) || !strings.Contains(err.Error(), "slice")):
			t.Errorf("era 6.1 takes a custom slice: %v", err)
		}
	}
}

// policy=deadline reaches the guest load (sched_setattr) with its
// dl_* keys, which other policies do not pass.
func TestGuestLoadArgsDeadline(t *testing.T) {
	r, err := workload.Resolve("hog:n=2,policy=deadline,dl_runtime_us=1000,dl_period_us=10000,dl_reclaim=1", 8)
	if err != nil {
		t.Fatal(err)
	}
	args, err := guestLoadArgs(1e9, []workload.Resolved{r})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(args, " "), "1000000000 hog cpus= dl_deadline_us=0 dl_period_us=10000 dl_reclaim=1 dl_runtime_us=1000 n=2 nice=0 place=free policy=deadline rtprio=0 slice_us=0"; got != want {
		t.Errorf("args %s\nwant %s", got, want)
	}
}
