package twin

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// JSON renders the report as indented JSON (the schema in Report's
// field tags; "schema": "schedplay-twin/1").
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteText prints the report: a header (machine, preset, load), the
// side-by-side table, then what ran per benchmark and the notes.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	h := r.Host
	fmt.Fprintf(&b, "twin: this machine: %d CPUs", h.CPUs)
	if h.CPUModel != "" {
		fmt.Fprintf(&b, ", %s", h.CPUModel)
	}
	if h.Kernel != "" {
		fmt.Fprintf(&b, ", Linux %s", h.Kernel)
	}
	if h.LoadBefore >= 0 {
		fmt.Fprintf(&b, "; load average %.1f before, %.1f after", h.LoadBefore, h.LoadAfter)
	}
	b.WriteString("\n")
	src := map[string]string{
		"detected":       "detected, costs measured",
		"detected-quick": "detected --quick, costs assumed (knob defaults)",
		"file":           "from " + r.Preset.File,
	}[r.Preset.Source]
	if src == "" {
		src = r.Preset.Source
	}
	fmt.Fprintf(&b, "twin: simulated on preset %s (%d CPUs; %s)\n", r.Preset.Name, r.Preset.CPUs, src)
	if h.Noisy {
		fmt.Fprintf(&b, "twin: NOISY: the load average exceeds half the CPUs; the real figures include waiting behind other work\n")
	}
	b.WriteString("\n")
	rows := [][]string{{"benchmark", "metric", "real", "simulated", "sim/real"}}
	for _, br := range r.Benchmarks {
		if br.Skipped != "" {
			rows = append(rows, []string{br.Bench, "(skipped)", "-", "-", "-"})
			continue
		}
		for _, m := range br.Metrics {
			name := m.Metric
			if m.Unit != "" && m.Unit != "1/s" {
				name += " (" + m.Unit + ")"
			}
			rows = append(rows, []string{br.Bench, name, fig(m.Real), fig(m.Sim), ratio(m.Ratio)})
		}
	}
	writeTable(&b, rows)
	b.WriteString("\n")
	for _, br := range r.Benchmarks {
		if br.Skipped != "" {
			fmt.Fprintf(&b, "%s: skipped: %s\n", br.Bench, br.Skipped)
			continue
		}
		re := br.Real
		fmt.Fprintf(&b, "%s: real: %s", br.Bench, re.Command)
		if re.WallS > 0 {
			fmt.Fprintf(&b, " [%s, %.2f s wall]", re.Mode, re.WallS)
		}
		b.WriteString("\n")
		if re.Runner == "builtin" && re.Fallback != "" {
			fmt.Fprintf(&b, "%s:   built-in instead of the tool: %s\n", br.Bench, re.Fallback)
		}
		if re.Error != "" {
			fmt.Fprintf(&b, "%s:   real run failed: %s\n", br.Bench, re.Error)
		}
		fmt.Fprintf(&b, "%s: simulated: --workload %s --seed %d [%.3g s simulated in %.2f s wall; %d IPIs, CPUs %.0f%% busy]\n",
			br.Bench, br.Sim.Workload, br.Sim.Seed, br.Sim.DurationS, br.Sim.WallS, br.Sim.IPIsSent, br.Sim.CPUBusyPct)
		if br.Sim.Error != "" {
			fmt.Fprintf(&b, "%s:   simulated run failed: %s\n", br.Bench, br.Sim.Error)
		}
	}
	b.WriteString("\nsim/real is simulated ÷ real: 1 is agreement; for a time or a latency below 1 means the\nsimulation runs faster than this machine, for ops/sec above 1 does.\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fig prints a figure with 4 significant digits (integers as integers).
func fig(v *float64) string {
	if v == nil {
		return "-"
	}
	x := *v
	switch {
	case x >= 1000 && x == math.Trunc(x):
		return fmt.Sprintf("%.0f", x)
	case x >= 100:
		return fmt.Sprintf("%.1f", x)
	case x >= 10:
		return fmt.Sprintf("%.2f", x)
	case x >= 1:
		return fmt.Sprintf("%.3f", x)
	}
	return fmt.Sprintf("%.4g", x)
}

func ratio(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

// Failed says no benchmark gave both figures of any metric (every one
// failed or was skipped).
func (r *Report) Failed() bool {
	for _, br := range r.Benchmarks {
		for _, m := range br.Metrics {
			if m.Ratio != nil {
				return false
			}
		}
	}
	return true
}

// writeTable prints rows in columns: the first two left-aligned, the
// figures right-aligned, two spaces apart.
func writeTable(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if i < 2 {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
