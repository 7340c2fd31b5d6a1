package playground

// PageState is what window.sim.state() returns to the page (and what the
// browser test reads back): the link, the settings, and per arm the key
// numbers.
type PageState struct {
	Ready         bool              `json:"ready"`
	Link          string            `json:"link"`
	Preset        string            `json:"preset"`
	Machine       string            `json:"machine"`
	CPUs          int               `json:"cpus"`
	Workloads     []string          `json:"workloads"`
	Knobs         map[string]string `json:"knobs"`
	KnobsB        map[string]string `json:"knobsB"`
	AB            bool              `json:"ab"`
	Seed          uint64            `json:"seed"`
	Speed         float64           `json:"speed"`
	AchievedSpeed float64           `json:"achievedSpeed"`
	Paused        bool              `json:"paused"`
	Finished      bool              `json:"finished"`
	SimTime       float64           `json:"simTime"`
	Experiment    string            `json:"experiment"`
	Error         string            `json:"error"`
	FrameMs       float64           `json:"frameMs"`
	Arms          []ArmState        `json:"arms"`
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
	Events     int64   `json:"events"`
}
