package playground

import "schedplay/engine"

// PageState is what window.sim.state() returns to the page (and what the
// browser test reads back): the link, the settings, and per arm the key
// numbers.
type PageState struct {
	Ready     bool              `json:"ready"`
	Link      string            `json:"link"`
	Preset    string            `json:"preset"`
	Machine   string            `json:"machine"`
	CPUs      int               `json:"cpus"`
	Workloads []string          `json:"workloads"`
	Knobs     map[string]string `json:"knobs"`
	KnobsB    map[string]string `json:"knobsB"`
	// Extra are the knobs of arms C and D (an experiment's).
	Extra         []map[string]string `json:"extra"`
	AB            bool                `json:"ab"`
	Seed          uint64              `json:"seed"`
	Speed         float64             `json:"speed"`
	AchievedSpeed float64             `json:"achievedSpeed"`
	Paused        bool                `json:"paused"`
	Finished      bool                `json:"finished"`
	SimTime       float64             `json:"simTime"`
	Experiment    string              `json:"experiment"`
	Error         string              `json:"error"`
	FrameMs       float64             `json:"frameMs"`
	Arms          []ArmState          `json:"arms"`
	// Building is the progress of a run being built (nil: none); the
	// settings above are then that run's, the numbers the previous one's.
	Building     *BuildProgress `json:"building"`
	BuildingText string         `json:"buildingText"`
	// Crash is a recovered panic on show (nil: none); Halted says the
	// running simulations stopped because of it.
	Crash  *Crash `json:"crash"`
	Halted bool   `json:"halted"`
	// Frames counts the canvas's frames (it keeps drawing after a panic).
	Frames int64 `json:"frames"`
	// Story says in a few sentences what the run shows (the fresh page's
	// A/B, an experiment), or nothing.
	Story string `json:"story"`
	// Legend are the canvas legend's labels: the workloads (tagged [RT],
	// [RT+fair], [DL], [DL+fair]… by their tasks' classes) and what the
	// colours mean.
	Legend []string `json:"legend"`
	// Policies are the arms' wake policies (A, B, …; Name "" for none):
	// what the editor panel shows. The source itself comes from
	// sim.policy(arm); Sum changes when it does.
	Policies []PolicyView `json:"policies"`
}

// PolicyView is an arm's wake policy as the page's state shows it.
type PolicyView struct {
	Name string `json:"name"`
	Sum  string `json:"sum"`
	// Error is its compile error ("file:line:col: message"), or "";
	// Hooks the steps it replaces (select_idle_cpu, newidle_balance, …).
	Error string   `json:"error"`
	Hooks []string `json:"hooks"`
}

// ArmState summarises one arm for the page.
type ArmState struct {
	Label      string  `json:"label"`
	Wakeups    int64   `json:"wakeups"`
	Count      int64   `json:"count"`
	P50        int64   `json:"p50"`
	P99        int64   `json:"p99"`
	P999       int64   `json:"p999"`
	ProbesMean float64 `json:"probesMean"`
	SISCalls   int64   `json:"sisCalls"` // select_idle_cpu calls
	Events     int64   `json:"events"`
	// Delayed are era 6.12's delayed-dequeue counters (nil in an era
	// without DELAY_DEQUEUE): sleeps kept queued, wakees requeued in place
	// (the delayed_requeue decisions), dequeued by a pick, moved.
	Delayed *engine.DelayedStats `json:"delayed"`
	// DL are the deadline class's counts (nil when the arm runs no
	// SCHED_DEADLINE task): per task its reservation, the share of a CPU
	// it got, its jobs, deadline misses and throttles.
	DL *engine.DLStats `json:"dl"`
	// PolicyError is what stopped the arm: its wake policy's error,
	// naming the file and line, or "".
	PolicyError string `json:"policyError"`
}
