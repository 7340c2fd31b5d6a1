# schedplay — see README.md.
GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm/go_js_wasm_exec
# serve: where the dev server listens (make serve ADDR=0.0.0.0:9000).
ADDR      ?= 127.0.0.1:8080

.PHONY: site test goldens test-loop kernel-deps kernel-smoke kernel-table e2e-beside-batch vet unit wasm wasm-build wasm-test e2e reproduce-quick twin bench bench-import bench-page bench-wasm serve reproduce fuzz fuzz-short

## test: everything CI runs (vet, unit tests, the browser build, the
## engine's tests compiled to WebAssembly and run under Node, the browser
## end-to-end test in headless Chromium, the validation targets at reduced
## size).
test: vet unit wasm-build wasm-test e2e-beside-batch

## test-loop: make test N times (N=10 by default), each on a fresh clone
## of HEAD with an empty build cache, beside a CPU hog on one core; logs
## and a summary in $(TEST_LOOP_LOGS) (default: a new /tmp directory).
## Fails unless every run passed. About N × 8 minutes on 2 cores.
N ?= 10
test-loop:
	.ci/test-loop $(N)

# e2e-beside-batch: two lanes side by side. One runs the browser test,
# then the kernel smoke case (QEMU in emulated time: its guest does not
# depend on the host's load); the other the reduced-size validation, then
# the short fuzzing (one fuzz worker, FUZZ_PARALLEL=1, so that the other
# lane keeps a core). The browser test mostly waits on the page, the
# validation and the fuzzing are one busy core each, and none of their
# results depend on timing. The second lane's output is printed after the
# first's. Fails if any of them does.
# The validation's output is a golden (REPRODUCE_GOLDEN): a difference
# fails, as the golden runs of TestRunGoldens do; make goldens rewrites
# both.
REPRODUCE_GOLDEN = cmd/schedsim/testdata/reproduce-quick.txt
e2e-beside-batch:
	@log=$$(mktemp); errlog=$$(mktemp); fuzzlog=$$(mktemp); \
	( $(GO) run ./cmd/schedsim reproduce --quick --no-wall-time > "$$log" 2> "$$errlog"; rq=$$?; \
	  $(MAKE) --no-print-directory fuzz-short FUZZ_PARALLEL=1 > "$$fuzzlog" 2>&1; fz=$$?; \
	  echo "$$rq $$fz" > "$$log.rc" ) & lane=$$!; \
	$(MAKE) --no-print-directory e2e; e2e=$$?; \
	$(MAKE) --no-print-directory kernel-smoke; ks=$$?; \
	wait $$lane; read rqs fzs < "$$log.rc"; \
	echo "== reproduce --quick (ran beside e2e) =="; cat "$$log" "$$errlog"; \
	echo "== fuzz-short (ran beside e2e and the kernel smoke case, after reproduce --quick) =="; cat "$$fuzzlog"; \
	diff -u $(REPRODUCE_GOLDEN) "$$log" > "$$errlog.diff"; gold=$$?; \
	if [ $$gold -ne 0 ]; then echo "reproduce --quick differs from $(REPRODUCE_GOLDEN) (intended? make goldens, and commit the diff):"; cat "$$errlog.diff"; fi; \
	rm -f "$$log" "$$log.rc" "$$errlog" "$$errlog.diff" "$$fuzzlog"; \
	echo "e2e exit $$e2e, kernel-smoke exit $$ks, reproduce --quick exit $$rqs, golden diff exit $$gold, fuzz-short exit $$fzs"; \
	test $$e2e -eq 0 && test $$ks -eq 0 && test $$rqs -eq 0 && test $$gold -eq 0 && test $$fzs -eq 0

## goldens: rewrite the golden outputs from the current engine (the runs
## of cmd/schedsim/testdata/runs/cases.txt and reproduce --quick); read
## and commit the diff: it is every number the change moved.
goldens:
	$(GO) test ./cmd/schedsim/ -run '^TestRunGoldens$$' -count=1 -update-goldens
	$(GO) run ./cmd/schedsim reproduce --quick --no-wall-time > $(REPRODUCE_GOLDEN) || true

vet:
	test -z "$$(gofmt -l .)" || (gofmt -l . && echo "gofmt needed" && false)
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...

# Every package except e2e, which the e2e target runs (once).
unit:
	$(GO) test $$($(GO) list ./... | grep -v '^schedplay/e2e$$')

## wasm: the browser build, then its precompressed forms: brotli
## (quality 11) and gzip -9 beside each asset (static/*.br, *.gz), which
## the server sends by Accept-Encoding. static/schedplay.wasm,
## wasm_exec.js and the compressed files are build outputs, not
## committed. Brotli 11 takes a minute or two here; it is skipped when the
## wasm's bytes did not change.
wasm: wasm-build
	$(GO) run ./serve/precompress static

## site: the page as a self-contained static directory, $(SITE)
## (bin/site by default), that any static file server or host serves as it
## is (GitHub Pages: .github/workflows/pages.yml): no server headers needed
## (the CSP is a meta tag; the wasm loads even when its Content-Type is not
## application/wasm); SITE_PRECOMPRESS=1 adds the .br/.gz files, for hosts
## that serve them.
SITE ?= bin/site
site: wasm-build
	rm -rf $(SITE) && mkdir -p $(SITE)
	cp static/index.html static/app.js static/worker.js static/style.css static/wasm_exec.js static/schedplay.wasm $(SITE)/
	touch $(SITE)/.nojekyll
	if [ -n "$(SITE_PRECOMPRESS)" ]; then $(GO) run ./serve/precompress $(SITE); fi
	@echo "site: $(SITE) (serve it with any static server, e.g. python3 -m http.server -d $(SITE))"

## wasm-build: the browser build alone (make test uses it; the server
## compresses on the fly without the precompressed files).
wasm-build:
	cp "$(GOROOT)/lib/wasm/wasm_exec.js" static/wasm_exec.js
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -o static/schedplay.wasm ./wasm

# The page in headless Chromium, served by the real server code: the wasm
# starts and draws, the panel drives it, share links reproduce the native
# CLI's numbers, hostile links are refused in the page. It builds its own
# wasm. Skips without chromium, fails without it when CI is set.
e2e:
	$(GO) test ./e2e/ -count=1 -timeout 15m -v

# The engine must behave identically in the browser: run its tests as wasm.
# -short: the many-seed invariant sweeps run 2 seeds per case here (about
# 3x slower under Node); `make unit` runs them in full natively. presets,
# playground and scenario run too: the browser build reads and writes JSON
# with encoding/json where the CLI uses go-json (internal/json).
wasm-test:
	GOOS=js GOARCH=wasm $(GO) test -short -exec=$(WASM_EXEC) ./engine/... ./presets/ ./playground/ ./scenario/

# The validation targets of validation.md at each experiment's "quick"
# size; fails when a target not marked known_fail fails.
reproduce-quick:
	$(GO) run ./cmd/schedsim reproduce --quick

## kernel-deps: what schedsim kernel needs on a fresh Debian machine:
## qemu-system-x86, busybox-static and cpio (apt-get; gcc and libc6-dev
## compile the guest load), and both kernels (pinned in oracle/packages.go),
## downloaded into the cache without being installed.
kernel-deps:
	@missing=""; \
	command -v qemu-system-x86_64 >/dev/null 2>&1 || missing="$$missing qemu-system-x86"; \
	test -x /bin/busybox && ! ldd /bin/busybox >/dev/null 2>&1 || missing="$$missing busybox-static"; \
	command -v cpio >/dev/null 2>&1 || missing="$$missing cpio"; \
	test -f /usr/lib/x86_64-linux-gnu/libc.a || missing="$$missing libc6-dev"; \
	if [ -n "$$missing" ]; then apt-get update && apt-get install -y $$missing; fi
	$(GO) run ./cmd/schedsim kernel --fetch-only

## kernel-smoke: make test's kernel case: 6.12 on 8 vCPUs, schbench, 1 s,
## booted twice (the traces must be identical); it checks the plumbing and
## logs the comparison, it does not gate on the verdicts. Skips without
## qemu unless CI is set (make kernel-deps installs it).
kernel-smoke:
	SCHEDPLAY_KERNEL_SMOKE=1 $(GO) test ./oracle/ -run '^TestKernelSmoke$$' -count=1 -v -timeout 10m

## kernel-table: the README's kernel table (both kernels × the shapes ×
## the workloads, then the RT cases on the first shape: FIFO hogs beside
## schbench, a FIFO pipe, cyclictest; then the deadline cases: deadline
## hogs beside schbench, a deadline pipe); prints it in Markdown. Over an
## hour on 2 cores.
kernel-table:
	$(GO) run ./cmd/schedsim kernel --table

## twin: the real scheduler benchmarks (perf bench sched pipe and
## messaging, schbench when installed, else built-in equivalents on OS
## threads) beside the simulated ones on this machine's preset, with the
## ratio sim/real (README, "Your machine"). --quick: topology detected,
## costs not measured. Not part of make test. It fails only when the verb
## crashes or no benchmark gave both figures, never on a ratio: CI records
## the table. TWIN_FLAGS adds flags, e.g.
## make twin TWIN_FLAGS="--format json --out twin.json --force".
TWIN_FLAGS ?=
twin:
	$(GO) run ./cmd/schedsim twin --quick $(TWIN_FLAGS)

## reproduce: the validation targets at full size (seed figures beside
## simulated ones).
reproduce:
	$(GO) run ./cmd/schedsim reproduce

# Native Go fuzz targets (package:target:execs): the parsers of everything a
# user can type or paste. Each may only produce a valid config or an error
# naming the field; their seed corpora live in each package's testdata/fuzz.
# The budget is a count of executions (about 6 s each on a quiet 2-core
# machine), not a duration: with -fuzztime <duration>, Go 1.26's fuzz
# coordinator can fail a target with a bare "context deadline exceeded" and
# no failing input when a starved worker is still mid-call at the deadline
# (golang/go#75804, fixed in Go 1.27); a count has no deadline to race, so a
# busy machine only makes the run slower.
FUZZ_TARGETS := engine/workload:FuzzWorkloadSpec:50000 engine/workload:FuzzRTApp:20000 \
	traceimport:FuzzTraceImport:40000 engine/knob:FuzzKnobSet:20000 playground:FuzzLink:20000 \
	presets:FuzzMachineJSON:100000 cmd/schedsim:FuzzSweepVary:80000
FUZZSCALE ?= 1
# FUZZ_PARALLEL: fuzz workers per target (empty: go test's default,
# GOMAXPROCS).
FUZZ_PARALLEL ?=

## fuzz-short: each fuzz target for its execution budget (make test runs this).
fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest##*:} * $(FUZZSCALE) )); \
		echo "fuzz $$name ($$pkg) for $$n executions"; \
		$(GO) test ./$$pkg/ -run '^$$' -fuzz "^$$name\$$" -fuzztime $${n}x $(if $(FUZZ_PARALLEL),-parallel $(FUZZ_PARALLEL)) || exit 1; \
	done

## fuzz: the same targets for 50 times the budget (about 5 minutes each;
## FUZZSCALE= to change).
fuzz:
	$(MAKE) fuzz-short FUZZSCALE=$${FUZZSCALE:-50}

## bench: the engine benchmarks, the bare event loop, the page's
## worker loop (playground's BenchmarkWorkerLoop: the engine in Node of
## the page / Node row) and the wake policies' variants of the three
## engine/workload runs (policy's BenchmarkPolicy*: each example against
## its built-in knob), native and as wasm under Node, then one table of
## both (events/s, wakeups/s, wasm / native, engine / bare loop). Record results in BENCHMARKS.md; for
## before/after tables use BENCHCOUNT=5 and benchstat on the raw files.
## -p 1: go test runs the two packages' binaries one at a time (by
## default it runs them side by side, and the bare loop and the engine
## benchmarks then share the two cores, which skews every ratio).
BENCH      ?= .
BENCHTIME  ?= 1s
BENCHCOUNT ?= 1
BENCH_PKGS := ./engine/ ./engine/workload/ ./playground/ ./policy/
BENCH_ARGS  = -p 1 -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count $(BENCHCOUNT) $(BENCH_PKGS)
bench: SHELL := /bin/bash
bench: .SHELLFLAGS := -o pipefail -c
bench:
	@mkdir -p bin
	$(GO) test $(BENCH_ARGS) | tee bin/bench-native.txt
	GOOS=js GOARCH=wasm $(GO) test -exec=$(WASM_EXEC) $(BENCH_ARGS) | tee bin/bench-wasm.txt
	@awk -f benchtable.awk bin/bench-native.txt bin/bench-wasm.txt

## bench-import: schedsim import's BenchmarkImport (traceimport): the
## simulator's own ftrace text and Chrome JSON of one hackbench run at
## three lengths, each 4x the one before; MB/s level across them is
## linear time (BENCHMARKS.md, "Issue 22: import streams"). Native only,
## and apart from bench: it is not the engine's events/s table.
bench-import:
	$(GO) test ./traceimport/ -run '^$$' -bench BenchmarkImport -benchtime $(BENCHTIME) -count $(BENCHCOUNT)

# bench-page: the page benchmark in headless Chromium (load, frame times,
# simulated-time rates per worker); it records figures, it does not gate.
bench-page:
	SCHEDPLAY_PAGE_BENCH=1 $(GO) test ./e2e/ -count=1 -run TestPageBenchmark -v -timeout 15m

# bench-wasm: only the wasm half.
bench-wasm:
	GOOS=js GOARCH=wasm $(GO) test -exec=$(WASM_EXEC) $(BENCH_ARGS)

## serve: build the wasm and serve the playground on $(ADDR), opening the
## browser (NO_BROWSER=1 to skip); Ctrl-C stops it. (Built, then run: `go
## run` exits 1 after an interrupt even when the server stopped cleanly.)
serve: wasm
	$(GO) build -o bin/serve ./serve
	./bin/serve -addr $(ADDR)
