package engine

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/presets"
)

// Wakeup-path scenario tests, written as data files under
// testdata/wakeup (the etcd-io/raft style): set up busy and idle CPUs and a
// sleeping task, issue a wakeup, and compare the decision — wake_affine's
// target, the chosen CPU, the stage that chose it and every CPU probed in
// order — with the expected rendering.
//
// Commands:
//
//	machine preset=intel|small|<preset name> [sockets= cores= threads= llc= numbering=] [set=(K=V,...)]
//	knob K=V ...              change knobs in place
//	busy cpus=(LIST)          pin a spinning task on each CPU and let it start
//	idle cpus=(LIST)          stop those spinning tasks
//	task name=N prev=CPU [allowed=(LIST)] [recent=CPU] [flips=N] [nice=N] [latency_nice=N]
//	                          a sleeping task that last ran on prev; once
//	                          woken and enqueued it spins for good
//	flips cpu=C n=N           set the wakee_flips of the task running on C
//	avg cpu=C idle=NS [scan=NS]  set a CPU's avg_idle / avg_scan_cost
//	hint llc=L [value=true|false]  show or set an LLC's has_idle_cores
//	wake task=N waker=CPU [sync] [enqueue]
//	                          run select_task_rq_fair from CPU waker
//	show task=N               the task's recent_used_cpu and CPU
//	next cpu=C                SIS_ROTATE's next_cpu[C]
//	nr_idle_scan llc=L n=N    set SIS_UTIL's nr_idle_scan of an LLC
//	srq                       the shared runqueue's shard lists
type scenario struct {
	s     *Sim
	tasks map[string]*Task
	stop  map[int]*bool
}

func TestWakeupScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/wakeup", func(t *testing.T, path string) {
		var sc scenario
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := sc.run(t, td)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

func argList(td *datadriven.TestData, key string) (string, bool) {
	a, ok := td.Arg(key)
	if !ok {
		return "", false
	}
	return strings.Join(a.Vals, ","), true
}

func argInt(t *testing.T, td *datadriven.TestData, key string, def int) int {
	v, ok := argList(td, key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %s=%q is not a number", td.Pos, key, v)
	}
	return n
}

func (sc *scenario) run(t *testing.T, td *datadriven.TestData) (string, error) {
	switch td.Cmd {
	case "machine":
		var spec *machine.Spec
		preset, _ := argList(td, "preset")
		switch preset {
		case "intel":
			spec = intelSpec()
		case "intel-2s-44c-88t", "power9-2s-44c-176t", "sparc-2s-16c-128t", "amd-zen3-2s-128c-256t":
			ps, err := presets.Machine(preset)
			if err != nil {
				return "", err
			}
			spec = ps
		case "small", "":
			numbering, ok := argList(td, "numbering")
			if !ok {
				numbering = machine.Interleaved
			}
			spec = smallSpec(argInt(t, td, "sockets", 1), argInt(t, td, "cores", 4), argInt(t, td, "threads", 2),
				argInt(t, td, "llc", 4), numbering)
		default:
			return "", fmt.Errorf("unknown preset %q", preset)
		}
		var sets []string
		if v, ok := argList(td, "set"); ok {
			for _, kv := range strings.Split(v, ",") {
				k, val, _ := strings.Cut(kv, "=")
				sets = append(sets, k, val)
			}
		}
		sc.s = newSim(t, spec, 1, sets...)
		sc.s.debug = true
		sc.tasks = map[string]*Task{}
		sc.stop = map[int]*bool{}
		return sc.s.topo.Describe() + "\n", nil

	case "knob":
		for _, a := range td.CmdArgs {
			if err := sc.s.k.Set(a.Key, strings.Join(a.Vals, ",")); err != nil {
				return "", err
			}
		}
		return "ok\n", nil

	case "busy":
		list, _ := argList(td, "cpus")
		m, err := cpumask.Parse(list, sc.s.topo.NCPU)
		if err != nil {
			return "", err
		}
		w := sc.s.AddWorkload("busy", "busy")
		for c := m.First(); c >= 0; c = m.Next(c + 1) {
			stop := new(bool)
			sc.stop[c] = stop
			_, err := sc.s.Spawn(w, TaskSpec{Name: fmt.Sprintf("spin/%d", c), Allowed: cpumask.Of(sc.s.topo.NCPU, c),
				ParentCPU: c, Program: ProgramFunc(func(*Ctx) Action {
					if *stop {
						return Exit()
					}
					return Run(Millisecond)
				})})
			if err != nil {
				return "", err
			}
		}
		sc.settle()
		return sc.cpuLine(), nil

	case "idle":
		list, _ := argList(td, "cpus")
		m, err := cpumask.Parse(list, sc.s.topo.NCPU)
		if err != nil {
			return "", err
		}
		for c := m.First(); c >= 0; c = m.Next(c + 1) {
			if p := sc.stop[c]; p != nil {
				*p = true
			}
		}
		sc.settle()
		return sc.cpuLine(), nil

	case "task":
		name, _ := argList(td, "name")
		prev := argInt(t, td, "prev", 0)
		allowed := sc.s.topo.All.Clone()
		if v, ok := argList(td, "allowed"); ok {
			m, err := cpumask.Parse(v, sc.s.topo.NCPU)
			if err != nil {
				return "", err
			}
			allowed = m
		}
		tk := &Task{ID: TaskID(len(sc.s.tasks)), Name: name, weight: NiceToWeight(argInt(t, td, "nice", 0)),
			allowed: allowed, smtPressure: 1024, state: TaskBlocked, cpu: prev, wokenAt: -1,
			lastRanCPU: prev, recentUsedCPU: argInt(t, td, "recent", -1), lastWakee: -1, srqShard: -1,
			LatencyNice: argInt(t, td, "latency_nice", 0), mm: sc.s.NewAddressSpace(),
			wakeeFlips: int64(argInt(t, td, "flips", 0)), prog: ProgramFunc(func(*Ctx) Action { return Run(1 << 40) })}
		tk.workload = int(sc.s.AddWorkload(name, "test"))
		sc.s.tasks = append(sc.s.tasks, tk)
		sc.s.growSlots()
		sc.tasks[name] = tk
		return "ok\n", nil

	case "flips":
		c := sc.s.cpus[argInt(t, td, "cpu", 0)]
		cur := c.curr
		if cur == nil {
			cur = c.idleTask
		}
		cur.wakeeFlips = int64(argInt(t, td, "n", 0))
		cur.flipDecayTS = sc.s.now / sc.s.tickNS
		return "ok\n", nil

	case "avg":
		c := sc.s.cpus[argInt(t, td, "cpu", 0)]
		c.avgIdle = int64(argInt(t, td, "idle", int(c.avgIdle)))
		c.avgScanCost = int64(argInt(t, td, "scan", int(c.avgScanCost)))
		return fmt.Sprintf("cpu %d avg_idle=%d avg_scan_cost=%d\n", c.id, c.avgIdle, c.avgScanCost), nil

	case "hint":
		l := argInt(t, td, "llc", 0)
		if v, ok := argList(td, "value"); ok {
			sc.s.llcs[l].hasIdleCores = v == "true"
		}
		return fmt.Sprintf("llc %d has_idle_cores=%t\n", l, sc.s.llcs[l].hasIdleCores), nil

	case "wake":
		name, _ := argList(td, "task")
		p := sc.tasks[name]
		if p == nil {
			return "", fmt.Errorf("no task %q", name)
		}
		waker := argInt(t, td, "waker", 0)
		c := sc.s.cpus[waker]
		cur := c.curr
		if cur == nil {
			cur = c.idleTask
		}
		d := sc.s.class.selectTaskRq(p, waker, cur, td.HasArg("sync"))
		out := renderDecision(d)
		if td.HasArg("enqueue") {
			sc.s.actor = waker
			sc.s.claimWake(sc.s.cpus[d.Chosen])
			sc.s.ttwuQueue(p, sc.s.cpus[d.Chosen], waker, sc.s.now, 0)
			sc.settle()
			out += sc.cpuLine()
		}
		return out, nil

	case "srq":
		var b strings.Builder
		for llc, shards := range sc.s.srq {
			for i, sh := range shards {
				var names []string
				for _, t := range sh.list {
					names = append(names, t.Name)
				}
				fmt.Fprintf(&b, "llc %d shard %d: [%s]\n", llc, i, strings.Join(names, " "))
			}
		}
		if b.Len() == 0 {
			return "no shards\n", nil
		}
		return b.String(), nil

	case "nr_idle_scan":
		l := argInt(t, td, "llc", 0)
		sc.s.llcs[l].nrIdleScan = int64(argInt(t, td, "n", 0))
		return fmt.Sprintf("llc %d nr_idle_scan=%d\n", l, sc.s.llcs[l].nrIdleScan), nil

	case "next":
		c := argInt(t, td, "cpu", 0)
		return fmt.Sprintf("next_cpu[%d]=%d\n", c, sc.s.nextCPU[c]), nil

	case "show":
		name, _ := argList(td, "task")
		p := sc.tasks[name]
		return fmt.Sprintf("%s: state=%s cpu=%d recent_used_cpu=%d\n", p.Name, p.state, p.cpu, p.recentUsedCPU), nil
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

// settle lets kicks and switches happen (a few ms of simulated time).
func (sc *scenario) settle() {
	sc.s.RunUntil(sc.s.now + 2*Millisecond)
}

func (sc *scenario) cpuLine() string {
	busy := cpumask.New(sc.s.topo.NCPU)
	for _, c := range sc.s.cpus {
		if !c.idle() {
			busy.Set(c.id)
		}
	}
	var hints []string
	for i := range sc.s.llcs {
		hints = append(hints, strconv.FormatBool(sc.s.llcs[i].hasIdleCores))
	}
	return fmt.Sprintf("non-idle cpus: %s; has_idle_cores: %s\n", orNone(busy.String()), strings.Join(hints, ","))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func renderDecision(d *Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "prev=%d target=%d chosen=%d stage=%s", d.Prev, d.Target, d.Chosen, d.Stage)
	if d.WakeWide {
		b.WriteString(" wake_wide")
	}
	fmt.Fprintf(&b, "\nprobes=%v", d.Probes)
	if d.SISCalled {
		fmt.Fprintf(&b, " select_idle_cpu: probed=%d", d.SISProbes)
		if d.SISLimit < 1<<30 {
			fmt.Fprintf(&b, " nr=%d", d.SISLimit)
		}
		if d.SISCutShort {
			b.WriteString(" cut_short")
		}
	}
	b.WriteString("\n")
	return b.String()
}

var _ = knob.SIS_PROP
