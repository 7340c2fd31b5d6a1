package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"

	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/presets"
)

func cmdPresets(args []string, w io.Writer) error {
	if err := parseFlags(newFlagSet("presets"), args, w, false); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range presets.List() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Kind, p.Title)
	}
	return tw.Flush()
}

func knobsFlagSet(format, era *string) *flag.FlagSet {
	fs := newFlagSet("knobs")
	fs.StringVar(format, "format", "text", "output `FORMAT`: text (fits 100 columns), json (for tools), or markdown (the README's knob table)")
	fs.StringVar(era, "era", "", "list only the knobs kernel `ERA` has (5.2, 2.6-o1, 6.6, 6.1), with that era's defaults")
	return fs
}

// knobRows is the knob table, or with an era only the knobs that era has,
// each with its default there.
func knobRows(era string) ([]knob.Def, []int64, error) {
	var defs []knob.Def
	var defaults []int64
	if era == "" {
		for _, d := range knob.Table() {
			defs, defaults = append(defs, d), append(defaults, d.Default)
		}
		return defs, defaults, nil
	}
	e, err := knob.ParseEra(era)
	if err != nil {
		return nil, nil, usagef("--era: %v", err)
	}
	for _, d := range knob.Table() {
		if ok, _ := knob.Exists(d.ID, e); ok {
			defs, defaults = append(defs, d), append(defaults, knob.DefaultIn(d.ID, e))
		}
	}
	return defs, defaults, nil
}

func cmdKnobs(args []string, w io.Writer) error {
	var format, era string
	if err := parseFlags(knobsFlagSet(&format, &era), args, w, false); err != nil {
		return err
	}
	defs, defaults, err := knobRows(era)
	if err != nil {
		return err
	}
	switch format {
	case "markdown":
		_, err := fmt.Fprint(w, knobMarkdownOf(defs, defaults))
		return err
	case "json":
		type row struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			Group   string `json:"group"`
			Default string `json:"default"`
			Range   string `json:"range"`
			Doc     string `json:"doc"`
		}
		var rows []row
		for i, d := range defs {
			rows = append(rows, row{d.Name, fmt.Sprint(d.Kind), fmt.Sprint(d.Group), d.Format(defaults[i]), d.Allowed(), d.Doc})
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case "text":
	default:
		return usagef("--format %q not allowed (allowed: text, json, markdown)", format)
	}
	// One line per knob (name, type, group, default, range), its doc
	// wrapped below it: every line fits 100 columns.
	bw := bufio.NewWriter(w)
	var head bytes.Buffer
	tw := tabwriter.NewWriter(&head, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tGROUP\tDEFAULT\tRANGE")
	for i, d := range defs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, d.Kind, d.Group, d.Format(defaults[i]), d.Allowed())
	}
	tw.Flush()
	lines := strings.Split(strings.TrimSuffix(head.String(), "\n"), "\n")
	fmt.Fprintln(bw, strings.TrimRight(lines[0], " "))
	for i, d := range defs {
		l := strings.TrimRight(lines[i+1], " ")
		if len([]rune(l)) > 100 {
			l = wrap(l, "", 99)
			l = strings.TrimSuffix(l, "\n")
		}
		fmt.Fprintln(bw, l)
		fmt.Fprint(bw, wrap(d.Doc, "    ", 99))
	}
	return bw.Flush()
}

// knobMarkdown renders the knob table for the README.
func knobMarkdown() string {
	defs, defaults, _ := knobRows("")
	return knobMarkdownOf(defs, defaults)
}

func knobMarkdownOf(defs []knob.Def, defaults []int64) string {
	var b strings.Builder
	b.WriteString("| knob | type | group | default | range | what it does |\n|---|---|---|---|---|---|\n")
	for i, d := range defs {
		esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", d.Name, d.Kind, d.Group, esc(d.Format(defaults[i])), esc(d.Allowed()), esc(d.Doc))
	}
	return b.String()
}

func cmdWorkloads(args []string, stdout io.Writer) error {
	if err := parseFlags(newFlagSet("workloads"), args, stdout, false); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, name := range workload.Kinds() {
		k, _ := workload.Lookup(name)
		fmt.Fprintf(w, "%s — %s\n", name, k.Doc)
		if name == "rtapp" {
			fmt.Fprintf(w, "  %-14s default %-8s %s\n", "file", "(none)", "command line only: path of an rt-app JSON file, read and carried as b64=; other keys may follow (rtapp:file=x.json,nice=5,cpus=0-3)")
		}
		if name == "trace" {
			fmt.Fprintf(w, "  %-14s default %-8s %s\n", "file", "(none)", "command line only: path of a workload made by schedsim import, read and carried as b64= (trace:file=workload.json)")
		}
		for _, key := range k.AllKeys() {
			def := key.Default
			if def == "" {
				def = "(none)"
			}
			fmt.Fprintf(w, "  %-14s default %-8s %s\n", key.Name, def, key.Doc)
		}
	}
	return w.Flush()
}
