# benchtable.awk joins `go test -bench` output of the native and the wasm
# build (make bench) into one table: events/s and wakeups/s of each
# benchmark side by side, wasm/native, and each engine benchmark's events/s
# against the bare event loop of the same build and run (issue 10's
# targets), then the events and ticks each wakeup takes. Metrics of
# repeated runs (-count) are averaged.
#
# usage: awk -f benchtable.awk NATIVE_FILE WASM_FILE
FNR == 1 { build = (FILENAME == ARGV[1]) ? "native" : "wasm" }
/^Benchmark/ {
	name = $1
	sub(/^Benchmark/, "", name)
	sub(/-[0-9]+$/, "", name) # the GOMAXPROCS suffix (absent in wasm)
	if (!(name in seen)) { seen[name] = 1; order[++n] = name }
	for (i = 3; i < NF; i += 2) {
		k = build SUBSEP name SUBSEP $(i + 1)
		sum[k] += $i
		cnt[k]++
	}
}
function get(b, name, unit,    k) {
	k = b SUBSEP name SUBSEP unit
	return (k in cnt) ? sum[k] / cnt[k] : -1
}
function m(x) { return x < 0 ? "—" : sprintf("%.2f M", x / 1e6) }
function kilo(x) { return x < 0 ? "—" : sprintf("%.1f k", x / 1e3) }
function ratio(a, b) { return (a < 0 || b <= 0) ? "—" : sprintf("%.2f×", a / b) }
function table(title, ev, wk,    j, b, ne, we) {
	printf "\n%s\n%-18s %12s %12s %9s %12s %12s %9s %10s\n", title, "benchmark", "native ev", "wasm ev", "wasm/nat", "native wk", "wasm wk", "nat/loop", "wasm/loop"
	for (j = 1; j <= n; j++) {
		b = order[j]
		ne = get("native", b, ev); we = get("wasm", b, ev)
		printf "%-18s %12s %12s %9s %12s %12s %9s %10s\n", b, m(ne), m(we), ratio(we, ne),
			kilo(get("native", b, wk)), kilo(get("wasm", b, wk)),
			ratio(ne, get("native", "EventLoop", ev)), ratio(we, get("wasm", "EventLoop", ev))
	}
}
function perWakeup(    j, b, e) {
	printf "\nper wakeup (the model's work, the same in both builds: wakeups/s = events/s ÷ events/wakeup)\n%-18s %14s %14s\n", "benchmark", "events/wakeup", "ticks/wakeup"
	for (j = 1; j <= n; j++) {
		b = order[j]
		if ((e = get("native", b, "events/wakeup")) < 0)
			continue
		printf "%-18s %14.1f %14.2f\n", b, e, get("native", b, "ticks/wakeup")
	}
}
END {
	table("per wall second", "events/s", "wakeups/s")
	table("per CPU second of the test process (robust on a shared machine)", "events/cpu-s", "wakeups/cpu-s")
	perWakeup()
	printf "\nev, wk: simulated events and wakeups (select_task_rq_fair decisions);\n"
	printf "loop: BenchmarkEventLoop, the bare 4-ary heap with 2,048 pending events, same build and run.\n"
}
