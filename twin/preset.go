package twin

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"schedplay/detect"
	"schedplay/engine/machine"
)

// DetectOptions say how to build the preset of this machine.
type DetectOptions struct {
	Quick    bool          // topology only: the costs stay the knob defaults
	Budget   time.Duration // per measurement (detect's --budget)
	Name     string        // preset name ("" gives "this-machine")
	Progress io.Writer
}

// HostInfo reads this machine's CPU count, kernel and CPU model (from
// sysfs and procfs through detect; what cannot be read stays empty).
func HostInfo() (Host, *detect.Result) {
	h := Host{CPUs: runtime.NumCPU(), LoadBefore: -1, LoadAfter: -1}
	fsys, err := detect.Open("")
	if err != nil {
		return h, nil
	}
	r, err := detect.Detect(fsys, detect.Options{Name: "this-machine"})
	if err != nil {
		return h, nil
	}
	h.CPUs = len(r.Found.CPUs)
	h.Kernel = r.Found.Kernel
	h.CPUModel = r.Found.CPUModel
	return h, r
}

// DetectPreset describes this machine as a preset, as `schedsim machine
// detect` does: the topology from sysfs and, unless Quick, the costs
// measured on pinned threads.
func DetectPreset(ctx context.Context, opt DetectOptions) (*machine.Spec, Preset, Host, error) {
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	if opt.Name == "" {
		opt.Name = "this-machine"
	}
	host, _ := HostInfo()
	fsys, err := detect.Open("")
	if err != nil {
		return nil, Preset{}, host, err
	}
	r, err := detect.Detect(fsys, detect.Options{Name: opt.Name})
	if err != nil {
		return nil, Preset{}, host, fmt.Errorf("detecting this machine: %v", err)
	}
	for _, fb := range r.Fallbacks {
		fmt.Fprintf(opt.Progress, "detect: missing: %s\n", fb)
	}
	p := Preset{Name: opt.Name, Source: "detected-quick"}
	if !opt.Quick {
		m, err := detect.Measure(ctx, r, detect.MeasureOptions{Budget: opt.Budget, Progress: opt.Progress})
		if err != nil {
			return nil, p, host, fmt.Errorf("measuring this machine's costs: %v (use --quick to skip the measurements)", err)
		}
		detect.Apply(r.Spec, m)
		for _, s := range m.Skipped {
			fmt.Fprintf(opt.Progress, "detect: not measured: %s\n", s)
		}
		p.Source = "detected"
	}
	// What detect builds must load, as --machine-file checks it.
	if _, err := machine.Build(r.Spec); err != nil {
		return nil, p, host, fmt.Errorf("the detected preset does not build: %v", err)
	}
	p.CPUs = r.Spec.NumCPUs()
	return r.Spec, p, host, nil
}
