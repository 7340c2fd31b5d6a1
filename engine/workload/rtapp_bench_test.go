package workload

import (
	"fmt"
	"strings"
	"testing"
)

// rtappBigFile is an rt-app file of at most size bytes laid out as people
// write them (one key per line, tab-indented): tasks of 250 alternating
// "run" and "sleep" events, one loop each. 1 MiB holds ~62,000 events, under
// the 65,536-event limit.
func rtappBigFile(size int) []byte {
	var b strings.Builder
	b.WriteString("{\n\t\"global\": {\n\t\t\"duration\": 1\n\t},\n\t\"tasks\": {\n")
	const tail = "\n\t}\n}\n"
	task := func(i int) string {
		var t strings.Builder
		fmt.Fprintf(&t, "\t\t\"task%d\": {\n\t\t\t\"loop\": 1", i)
		for j := 0; j < 250; j++ {
			ev := "run"
			if j%2 == 1 {
				ev = "sleep"
			}
			fmt.Fprintf(&t, ",\n\t\t\t%q: 1000", ev)
		}
		t.WriteString("\n\t\t}")
		return t.String()
	}
	for i := 0; ; i++ {
		next := task(i)
		if i > 0 {
			next = ",\n" + next
		}
		if b.Len()+len(next)+len(tail) > size {
			break
		}
		b.WriteString(next)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// rtappSpecJSON is the JSON a spec built from data carries (compacted onto
// one line), i.e. what every parse after the command line's first reads.
func rtappSpecJSON(tb testing.TB, data []byte) []byte {
	spec := RTAppSpec(data)
	js, err := decodeRTAppB64(strings.TrimPrefix(spec, "rtapp:b64="))
	if err != nil {
		tb.Fatal(err)
	}
	return js
}

// BenchmarkParseRTApp parses rt-app files of 100 KB, 500 KB and 1 MB,
// as written ("file": many short lines) and as a spec carries them
// ("spec": one line). Linear parsing shows as the same MB/s at every size
// (issue 22: the one-line form used to take time quadratic in its size).
func BenchmarkParseRTApp(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"100KB", 100_000}, {"500KB", 500_000}, {"1MB", RTAppMaxBytes}} {
		file := rtappBigFile(size.bytes)
		for _, form := range []struct {
			name string
			data []byte
		}{{"file", file}, {"spec", rtappSpecJSON(b, file)}} {
			b.Run(form.name+"/"+size.name, func(b *testing.B) {
				b.SetBytes(int64(len(form.data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := ParseRTApp(form.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
