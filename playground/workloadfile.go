package playground

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"schedplay/engine/workload"
)

// WorkloadFromFile turns a workload file opened in the page (a file picker
// or a drop) into the self-contained spec the CLI would make of
// "rtapp:file=" or "trace:file=": a workload imported with `schedsim
// import` (format schedplay-trace-workload) becomes "trace:b64=…", any
// other JSON is read as an rt-app file ("rtapp:b64=…"). The spec must fit
// in a share link, so a file whose spec does not is refused, saying so.
func WorkloadFromFile(name string, data []byte) (string, error) {
	var spec string
	if bytes.Contains(data, []byte(workload.TraceFormat)) {
		if len(data) > workload.TraceMaxBytes {
			return "", fmt.Errorf("%s: %d bytes, more than the %d-byte limit of a trace workload", name, len(data), workload.TraceMaxBytes)
		}
		if _, err := workload.ParseTraceFile(data); err != nil {
			return "", fmt.Errorf("%s (an imported trace workload): %v", name, err)
		}
		spec = workload.TraceSpec(data)
	} else {
		if len(data) > workload.RTAppMaxBytes {
			return "", fmt.Errorf("%s: %d bytes, more than the %d-byte limit of an rt-app file", name, len(data), workload.RTAppMaxBytes)
		}
		var err error
		if spec, err = workload.RTAppFileSpec(data); err != nil {
			return "", fmt.Errorf("%s (read as an rt-app file; an imported trace says %q): %v", name, workload.TraceFormat, err)
		}
	}
	if len(spec) > MaxFragmentBytes/2 {
		return "", fmt.Errorf("%s: its spec is %d KB compressed, more than a share link holds (%d KB): run it with `schedsim run --workload trace:file=…` instead",
			name, len(spec)>>10, MaxFragmentBytes>>11)
	}
	return spec, nil
}

// A NamedFile is one file the page was given (picked or dropped).
type NamedFile struct {
	Name string
	Data []byte
}

// WorkloadsFromFiles is WorkloadFromFile for several files given at once.
// Each imported trace becomes its own workload. The rt-app files are one
// rt-app run, merged as rt-app's doc/merge.py merges the files it is given
// (one holding "global", others "tasks" or "resources"), into one
// "rtapp:b64=" workload: rt-app users split a use case across files that
// way (doc/examples/merge). merge.py takes its files in command-line
// order and a later file's member replaces an earlier one; a file picker
// or a drop gives no order anyone chose, so the files are merged in the
// order of their names (global.json, resources.json, thread0.json … as
// in rt-app's example). An error names the file and its line.
func WorkloadsFromFiles(files []NamedFile) ([]string, error) {
	if len(files) == 1 {
		spec, err := WorkloadFromFile(files[0].Name, files[0].Data)
		if err != nil {
			return nil, err
		}
		return []string{spec}, nil
	}
	var specs []string
	var rtapp []workload.RTAppFile
	total := 0
	for _, f := range files {
		if bytes.Contains(f.Data, []byte(workload.TraceFormat)) {
			spec, err := WorkloadFromFile(f.Name, f.Data)
			if err != nil {
				return nil, err
			}
			specs = append(specs, spec)
			continue
		}
		if total += len(f.Data); total > workload.RTAppMaxBytes {
			return nil, fmt.Errorf("the rt-app files are more than %d bytes together (the limit of an rt-app file)", workload.RTAppMaxBytes)
		}
		rtapp = append(rtapp, workload.RTAppFile{Name: f.Name, Data: f.Data})
	}
	switch len(rtapp) {
	case 0:
	case 1:
		spec, err := WorkloadFromFile(rtapp[0].Name, rtapp[0].Data)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	default:
		sort.SliceStable(rtapp, func(i, j int) bool { return rtapp[i].Name < rtapp[j].Name })
		spec, err := workload.RTAppFilesSpec(rtapp)
		if err != nil {
			return nil, fmt.Errorf("the rt-app files merged (in name order: %s): %v", rtappNames(rtapp), err)
		}
		if len(spec) > MaxFragmentBytes/2 {
			return nil, fmt.Errorf("the rt-app files merged: their spec is %d KB compressed, more than a share link holds (%d KB)", len(spec)>>10, MaxFragmentBytes>>11)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func rtappNames(files []workload.RTAppFile) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
