package playground

import (
	"bytes"
	"fmt"

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
