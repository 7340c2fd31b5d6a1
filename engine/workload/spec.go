// Package workload builds simulated threads that behave like the real
// benchmarks of the source discussions (schbench, CPU hogs, ...), from
// specs written like the real tools' command lines:
// "schbench:m=2,t=22", "hog:n=44,nice=19,cpus=0-21".
package workload

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"schedplay/engine"
	"schedplay/engine/cpumask"
	"schedplay/engine/field"
)

// Spec is a parsed workload spec: a kind and its key=value parameters in
// the order written.
type Spec struct {
	Kind   string
	Params []Param
}

// Param is one key=value.
type Param struct{ Key, Value string }

// String renders the spec back in its canonical text form.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Kind)
	for i, p := range s.Params {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(p.Key + "=" + p.Value)
	}
	return b.String()
}

// Parse reads "kind:key=value,key=value". A cpus= value may itself contain
// commas ("cpus=0-3,8"): a comma-separated piece without '=' continues the
// previous value.
func Parse(text string) (Spec, error) {
	text = strings.TrimSpace(text)
	kind, rest, _ := strings.Cut(text, ":")
	kind = strings.TrimSpace(kind)
	if kind == "" {
		return Spec{}, fmt.Errorf("workload %q: missing kind (valid kinds: %s)", text, strings.Join(Kinds(), ", "))
	}
	k, ok := registry[kind]
	if !ok {
		return Spec{}, fmt.Errorf("workload %q: unknown kind %q%s (valid kinds: %s)", text, kind, field.Suggest(kind, Kinds()), strings.Join(Kinds(), ", "))
	}
	sp := Spec{Kind: kind}
	if strings.TrimSpace(rest) != "" {
		for _, piece := range strings.Split(rest, ",") {
			key, val, hasEq := strings.Cut(piece, "=")
			if !hasEq {
				if len(sp.Params) == 0 || strings.TrimSpace(piece) == "" {
					return Spec{}, fmt.Errorf("workload %q: %q is not key=value", text, piece)
				}
				sp.Params[len(sp.Params)-1].Value += "," + strings.TrimSpace(piece)
				continue
			}
			sp.Params = append(sp.Params, Param{strings.TrimSpace(key), strings.TrimSpace(val)})
		}
	}
	seen := map[string]bool{}
	for _, p := range sp.Params {
		if seen[p.Key] {
			return Spec{}, fmt.Errorf("workload %q: key %q given twice", text, p.Key)
		}
		seen[p.Key] = true
		if k.key(p.Key) == nil {
			return Spec{}, fmt.Errorf("workload %q: unknown key %q for %s%s (valid keys: %s)", text, p.Key, kind, field.Suggest(p.Key, k.keyNames()), strings.Join(k.keyNames(), ", "))
		}
		if p.Value == "" {
			// An explicit empty value is a mistake, never "the default".
			return Spec{}, fmt.Errorf("workload %q: key %s: empty value (allowed: %s)", text, p.Key, k.key(p.Key).allowed())
		}
	}
	return sp, nil
}

// KeyType says how a key's value is read.
type KeyType int

const (
	IntKey KeyType = iota
	CPUListKey
	EnumKey
	// TextKey is free text passed through as is (rtapp's b64).
	TextKey
)

// Key documents one parameter of a workload kind.
type Key struct {
	Name    string
	Type    KeyType
	Default string
	Min     int64
	Max     int64
	Values  []string // EnumKey
	Doc     string
}

// allowed describes the values the key takes.
func (k *Key) allowed() string {
	switch k.Type {
	case IntKey:
		return fmt.Sprintf("an integer %d..%d", k.Min, k.Max)
	case EnumKey:
		return strings.Join(k.Values, "|")
	case CPUListKey:
		return "a CPU list such as 0-3,8"
	}
	return "a non-empty value"
}

// Kind is a workload type: its keys and how to build it.
type Kind struct {
	Name  string
	Doc   string
	Keys  []Key
	build func(b *Builder) error
	// check, when set, validates what the keys cannot say on their own
	// (an rt-app file's contents) before anything is built.
	check func(b *Builder) error
	// forks, when set, says why this spec's tasks fork at run time (""
	// when they do not): a SCHED_DEADLINE task cannot fork (sched_fork
	// returns EAGAIN without SCHED_FLAG_RESET_ON_FORK, which is not
	// modelled) and the engine creates a forked task from its parent, so
	// such a spec refuses policy=deadline.
	forks func(b *Builder) string
	// WSSKB is the kind's default hot working set per thread (KiB) when
	// the spec has no wss_kb (0: defaultWSSKB).
	WSSKB int64
}

// defaultWSSKB is the hot working set of a thread of a scheduler benchmark:
// its stack, task_struct and kernel stack, the socket/pipe/futex state its
// syscalls touch and a small message buffer — a few pages (assumed).
const defaultWSSKB = 16

func (k *Kind) key(name string) *Key {
	for i := range k.Keys {
		if k.Keys[i].Name == name {
			return &k.Keys[i]
		}
	}
	for i := range commonKeys {
		if commonKeys[i].Name == name {
			return &commonKeys[i]
		}
	}
	return nil
}

func (k *Kind) keyNames() []string {
	var out []string
	for _, key := range k.Keys {
		out = append(out, key.Name)
	}
	for _, key := range commonKeys {
		out = append(out, key.Name)
	}
	return out
}

// AllKeys lists a kind's own keys followed by the keys every kind accepts.
func (k *Kind) AllKeys() []Key { return append(append([]Key(nil), k.Keys...), commonKeys...) }

// commonKeys are accepted by every workload kind.
var commonKeys = []Key{
	{Name: "nice", Type: IntKey, Default: "0", Min: -20, Max: 19, Doc: "nice value of every thread"},
	{Name: "latency_nice", Type: IntKey, Default: "0", Min: -20, Max: 19, Doc: "latency-nice value of every thread"},
	{Name: "cpus", Type: CPUListKey, Default: "", Doc: "CPU affinity as a cpulist (e.g. 0-21,44-65); default all CPUs"},
	{Name: "smt_pressure", Type: IntKey, Default: "100", Min: 10, Max: 400, Doc: "how hard each thread presses on a shared SMT core, % of the preset's nominal loop"},
	{Name: "slice_us", Type: IntKey, Default: "0", Min: 0, Max: 100000, Doc: "EEVDF slice each thread asks for with sched_setattr (sched_runtime; era 6.12 only, clamped to 100-100000 as the kernel does); 0: the base slice"},
	{Name: "policy", Type: EnumKey, Default: "normal", Values: []string{"normal", "fifo", "rr", "deadline"}, Doc: "scheduling policy of every thread: normal (SCHED_OTHER), fifo (SCHED_FIFO), rr (SCHED_RR) or deadline (SCHED_DEADLINE); fifo and rr need rtprio, deadline needs dl_runtime_us and dl_period_us or dl_deadline_us"},
	{Name: "rtprio", Type: IntKey, Default: "0", Min: 0, Max: 99, Doc: "rt_priority of every thread, 1-99 with policy fifo or rr (sched_setscheduler); 0 with normal and deadline"},
	{Name: "dl_runtime_us", Type: IntKey, Default: "0", Min: 0, Max: dlMaxUS, Doc: "SCHED_DEADLINE runtime of every thread, µs (sched_attr.sched_runtime; policy=deadline only, at least 2: the kernel refuses less than 1024 ns)"},
	{Name: "dl_deadline_us", Type: IntKey, Default: "0", Min: 0, Max: dlMaxUS, Doc: "SCHED_DEADLINE relative deadline, µs (sched_deadline; policy=deadline only); 0: the period"},
	{Name: "dl_period_us", Type: IntKey, Default: "0", Min: 0, Max: dlMaxUS, Doc: "SCHED_DEADLINE period, µs (sched_period; policy=deadline only); 0: the deadline, as the kernel reads sched_period 0"},
	{Name: "dl_reclaim", Type: IntKey, Default: "0", Min: 0, Max: 1, Doc: "1: SCHED_FLAG_RECLAIM, the thread may use bandwidth no deadline task is using (GRUB; policy=deadline only)"},
	{Name: "wss_kb", Type: IntKey, Default: "16", Min: 0, Max: 1 << 20, Doc: "hot working set per thread, KiB: what a migration has to refill (default per kind: 16, mprime 4096, compile 1024)"},
}

// dlKeys are the common keys of a SCHED_DEADLINE reservation.
var dlKeys = []string{"dl_runtime_us", "dl_deadline_us", "dl_period_us", "dl_reclaim"}

// dlMaxUS bounds the dl_*_us keys (about 12.7 days; the kernel takes any
// u64 below 2^63 ns, and v5.10's sched_deadline_period_max_us, which the
// engine applies where its era has it, is 4.2 s by default).
const dlMaxUS = 1 << 40

// dlMinRuntimeNS is the smallest runtime sched_setattr takes: 1 << DL_SCALE
// ns (__checkparam_dl, kernel/sched/deadline.c).
const dlMinRuntimeNS = 1 << 10

var registry = map[string]*Kind{}

func register(k *Kind) { registry[k.Name] = k }

// Kinds lists the registered kind names, sorted.
func Kinds() []string {
	var out []string
	for name := range registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Lookup returns a kind by name.
func Lookup(name string) (*Kind, bool) {
	k, ok := registry[name]
	return k, ok
}

// Builder is handed to a kind's build function: parsed parameters, the
// workload id and the simulation.
type Builder struct {
	Sim      *engine.Sim
	ID       engine.WorkloadID
	Spec     Spec
	kind     *Kind
	text     string
	Nice     int
	LatNice  int
	Allowed  cpumask.Mask // zero-length: all CPUs
	Pressure int64        // ×1024
	WSSKB    int64        // hot working set per thread
	SliceNS  int64        // sched_setattr slice per thread (0: base slice)
	Policy   engine.Policy
	RTPrio   int
	DL       engine.DLParams // the SCHED_DEADLINE reservation of every thread (policy=deadline)
	mm       int             // the workload's address space, for ThreadSpec
	// afterSpawn, when set (AddSpecEach), runs after every task the
	// builder creates; its error stops the build.
	afterSpawn func() error
}

// Add parses spec text and creates its tasks in sim. name labels the
// workload in results (default: its kind).
func Add(sim *engine.Sim, text, name string) (engine.WorkloadID, error) {
	sp, err := Parse(text)
	if err != nil {
		return 0, err
	}
	return AddSpec(sim, sp, name)
}

// Check parses text and validates every value against its range, the CPU
// list against a machine of ncpu CPUs, without building anything.
func Check(text string, ncpu int) error {
	sp, err := Parse(text)
	if err != nil {
		return err
	}
	_, err = newBuilder(sp, ncpu)
	return err
}

// Resolved is a spec as a real program running the same workload reads
// it: its kind, every key's value (the one given, or the default) and
// which keys were given.
type Resolved struct {
	Kind   string
	Values map[string]string
	Given  map[string]bool
}

// Resolve parses text and checks it as Check does. The kernel oracle's
// guest load (cmd/guestload) reads its workloads with it, so that the
// simulation and the real kernel run one spec with the same keys and
// defaults.
func Resolve(text string, ncpu int) (Resolved, error) {
	sp, err := Parse(text)
	if err != nil {
		return Resolved{}, err
	}
	b, err := newBuilder(sp, ncpu)
	if err != nil {
		return Resolved{}, err
	}
	r := Resolved{Kind: sp.Kind, Values: map[string]string{}, Given: map[string]bool{}}
	for _, key := range b.kind.AllKeys() {
		r.Values[key.Name] = b.raw(key.Name)
		r.Given[key.Name] = b.Has(key.Name)
	}
	return r, nil
}

func newBuilder(sp Spec, ncpu int) (*Builder, error) {
	k := registry[sp.Kind]
	b := &Builder{Spec: sp, kind: k, text: shorten(sp.String(), 120)}
	for _, key := range k.AllKeys() {
		if _, err := b.value(key.Name); err != nil {
			return nil, err
		}
	}
	b.Nice = int(b.Int("nice"))
	b.LatNice = int(b.Int("latency_nice"))
	b.Pressure = b.Int("smt_pressure") * 1024 / 100
	b.WSSKB = b.Int("wss_kb")
	b.SliceNS = b.Int("slice_us") * 1000
	b.RTPrio = int(b.Int("rtprio"))
	switch b.raw("policy") {
	case "fifo":
		b.Policy = engine.PolicyFIFO
	case "rr":
		b.Policy = engine.PolicyRR
	case "deadline":
		b.Policy = engine.PolicyDeadline
	}
	rt := b.Policy == engine.PolicyFIFO || b.Policy == engine.PolicyRR
	switch {
	case b.Policy == engine.PolicyNormal && b.RTPrio != 0:
		return nil, fmt.Errorf("workload %q: key rtprio: %d needs policy=fifo or policy=rr (SCHED_OTHER's rt priority is 0)", b.text, b.RTPrio)
	case b.Policy == engine.PolicyDeadline && b.RTPrio != 0:
		return nil, fmt.Errorf("workload %q: key rtprio: must be 0 with policy=deadline (sched_setattr refuses a SCHED_DEADLINE sched_priority other than 0; the reservation is dl_runtime_us/dl_deadline_us/dl_period_us)", b.text)
	case rt && b.RTPrio == 0:
		return nil, fmt.Errorf("workload %q: key policy: %s needs rtprio=1..99", b.text, b.Policy)
	case b.Policy != engine.PolicyNormal && b.SliceNS != 0:
		return nil, fmt.Errorf("workload %q: key slice_us: a fair thread's request; policy %s has none (must be 0)", b.text, b.Policy)
	}
	if err := b.deadlineParams(); err != nil {
		return nil, err
	}
	if !b.Has("wss_kb") && k.WSSKB > 0 {
		b.WSSKB = k.WSSKB
	}
	if cl := b.raw("cpus"); cl != "" {
		m, err := cpumask.Parse(cl, ncpu)
		if err != nil {
			return nil, fmt.Errorf("workload %q: key cpus: %v", b.text, err)
		}
		b.Allowed = m
		if b.Policy == engine.PolicyDeadline && m.Weight() < ncpu {
			return nil, fmt.Errorf("workload %q: key cpus: a SCHED_DEADLINE thread's affinity must be every CPU (sched_setattr refuses a restricted one with EPERM: admission is per root domain), not %s", b.text, cl)
		}
	}
	if k.check != nil {
		if err := k.check(b); err != nil {
			return nil, fmt.Errorf("workload %q: %v", b.text, err)
		}
	}
	if b.Policy == engine.PolicyDeadline && k.forks != nil {
		if why := k.forks(b); why != "" {
			return nil, fmt.Errorf("workload %q: key policy: deadline is not possible for %s: %s, and a SCHED_DEADLINE task cannot fork or be forked here (sched_fork: EAGAIN)", b.text, k.Name, why)
		}
	}
	return b, nil
}

// deadlineParams reads the dl_* keys into b.DL: policy=deadline needs
// dl_runtime_us and one of dl_deadline_us/dl_period_us, and the three
// must satisfy __checkparam_dl (kernel/sched/deadline.c): runtime at
// least 1024 ns, runtime <= deadline <= period, a zero deadline or
// period being the other one. Other policies take no dl_* key. The
// engine checks the same again, and admission control (the bandwidth
// left) when each thread is created.
func (b *Builder) deadlineParams() error {
	if b.Policy != engine.PolicyDeadline {
		for _, k := range dlKeys {
			if b.Has(k) {
				return fmt.Errorf("workload %q: key %s: a SCHED_DEADLINE reservation's; it needs policy=deadline (policy is %s)", b.text, k, b.Policy)
			}
		}
		return nil
	}
	rt, dl, per := b.Int("dl_runtime_us"), b.Int("dl_deadline_us"), b.Int("dl_period_us")
	switch {
	case rt == 0:
		return fmt.Errorf("workload %q: key dl_runtime_us: policy=deadline needs a runtime (allowed: an integer 2..%d, µs)", b.text, int64(dlMaxUS))
	case rt*engine.Microsecond < dlMinRuntimeNS:
		return fmt.Errorf("workload %q: key dl_runtime_us: %d µs is below the kernel's minimum SCHED_DEADLINE runtime of 1024 ns (1 << DL_SCALE): at least 2", b.text, rt)
	case dl == 0 && per == 0:
		return fmt.Errorf("workload %q: key dl_period_us: policy=deadline needs dl_period_us or dl_deadline_us (µs; one given alone is both)", b.text)
	}
	effDL, effPer := dl, per
	if effDL == 0 {
		effDL = per
	}
	if effPer == 0 {
		effPer = dl
	}
	switch {
	case rt > effDL:
		key := "dl_deadline_us"
		if dl == 0 {
			key = "dl_period_us"
		}
		return fmt.Errorf("workload %q: key %s: %d µs is shorter than dl_runtime_us %d µs (SCHED_DEADLINE needs runtime <= deadline <= period)", b.text, key, effDL, rt)
	case effDL > effPer:
		return fmt.Errorf("workload %q: key dl_deadline_us: %d µs is longer than dl_period_us %d µs (SCHED_DEADLINE needs runtime <= deadline <= period)", b.text, effDL, effPer)
	}
	b.DL = engine.DLParams{Runtime: rt * engine.Microsecond, Deadline: dl * engine.Microsecond, Period: per * engine.Microsecond, Reclaim: b.Int("dl_reclaim") == 1}
	return nil
}

// shorten keeps error messages readable when a value is long (an rt-app
// file carried as base64).
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// AddSpec creates the tasks of a parsed spec.
func AddSpec(sim *engine.Sim, sp Spec, name string) (engine.WorkloadID, error) {
	if name == "" {
		name = sp.Kind
	}
	b, err := newBuilder(sp, sim.Topology().NCPU)
	if err != nil {
		return 0, err
	}
	b.Sim = sim
	k := b.kind
	b.ID = sim.AddWorkload(name, sp.Kind)
	if err := k.build(b); err != nil {
		return 0, fmt.Errorf("workload %q: %v", b.text, err)
	}
	return b.ID, nil
}

func (b *Builder) raw(name string) string {
	for _, p := range b.Spec.Params {
		if p.Key == name {
			return p.Value
		}
	}
	return b.kind.key(name).Default
}

// value validates and returns the key's value as text.
func (b *Builder) value(name string) (string, error) {
	key := b.kind.key(name)
	v := b.raw(name)
	switch key.Type {
	case IntKey:
		if _, err := field.Int(fmt.Sprintf("workload %q: key %s", b.text, name), v, key.Min, key.Max); err != nil {
			return "", err
		}
	case EnumKey:
		for _, ok := range key.Values {
			if v == ok {
				return v, nil
			}
		}
		return "", fmt.Errorf("workload %q: key %s: %q not allowed%s (allowed: %s)", b.text, name, v, field.Suggest(v, key.Values), strings.Join(key.Values, "|"))
	}
	return v, nil
}

// Int returns an integer key's value (validated by AddSpec).
func (b *Builder) Int(name string) int64 {
	x, _ := strconv.ParseInt(b.raw(name), 10, 64)
	return x
}

// Has reports whether the spec set the key explicitly.
func (b *Builder) Has(name string) bool {
	for _, p := range b.Spec.Params {
		if p.Key == name {
			return true
		}
	}
	return false
}

// Str returns a key's text value.
func (b *Builder) Str(name string) string { return b.raw(name) }

// ThreadSpec is TaskSpec for a thread of the workload's single process:
// its memory is the process's, first touched by the main thread on the
// node of the workload's parent CPU (NUMA balancing draws the threads
// there).
func (b *Builder) ThreadSpec(name string, prog engine.Program) engine.TaskSpec {
	ts := b.TaskSpec(name, prog)
	ts.Memory = engine.MemNode
	ts.MemNode = b.Sim.Topology().Socket[b.parentCPU()]
	if b.mm == 0 {
		b.mm = b.Sim.NewAddressSpace()
	}
	ts.MM = b.mm // one address space: switches between threads are cheaper
	return ts
}

// TaskSpec returns a TaskSpec with the workload-level settings filled in.
func (b *Builder) TaskSpec(name string, prog engine.Program) engine.TaskSpec {
	return engine.TaskSpec{
		Name: name, Nice: b.Nice, LatencyNice: b.LatNice, Allowed: b.Allowed,
		Program: prog, SMTPressure: b.Pressure, ParentCPU: b.parentCPU(),
		WorkingSetKB: b.WSSKB, Slice: b.SliceNS, Policy: b.Policy, RTPrio: b.RTPrio, DL: b.DL,
	}
}

func (b *Builder) parentCPU() int {
	if b.Allowed.Len() > 0 {
		return b.Allowed.First()
	}
	return 0
}

// Spawn creates a task.
func (b *Builder) Spawn(ts engine.TaskSpec) (engine.TaskID, error) {
	id, err := b.Sim.Spawn(b.ID, ts)
	if err == nil && b.afterSpawn != nil {
		err = b.afterSpawn()
	}
	return id, err
}

// WithKeys returns spec text with the given keys set (replaced where
// present, appended otherwise), for experiments that run a smaller size of
// the same invocation (fewer hackbench loops, say). Keys the kind does not
// take are left out, so one override can serve arms of several kinds.
func WithKeys(text string, keys map[string]string) (string, error) {
	sp, err := Parse(text)
	if err != nil {
		return "", err
	}
	k := registry[sp.Kind]
	names := make([]string, 0, len(keys))
	for n := range keys {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if k.key(n) == nil {
			continue
		}
		found := false
		for i := range sp.Params {
			if sp.Params[i].Key == n {
				sp.Params[i].Value, found = keys[n], true
			}
		}
		if !found {
			sp.Params = append(sp.Params, Param{Key: n, Value: keys[n]})
		}
	}
	return sp.String(), nil
}
