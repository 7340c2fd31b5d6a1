# schedplay — see README.md.
GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm/go_js_wasm_exec

.PHONY: test vet unit wasm-test reproduce-quick bench bench-wasm serve reproduce

## test: everything CI runs (vet, unit tests, the engine's tests compiled to
## WebAssembly and run under Node, the validation targets at reduced size).
test: vet unit wasm-test reproduce-quick

vet:
	test -z "$$(gofmt -l .)" || (gofmt -l . && echo "gofmt needed" && false)
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...

unit:
	$(GO) test ./...

# The engine must behave identically in the browser: run its tests as wasm.
wasm-test:
	GOOS=js GOARCH=wasm $(GO) test -exec=$(WASM_EXEC) ./engine/...

# The validation targets of validation.md at each experiment's "quick"
# size; fails when a target not marked known_fail fails.
reproduce-quick:
	$(GO) run ./cmd/schedsim reproduce --quick

## reproduce: the validation targets at full size (seed figures beside
## simulated ones).
reproduce:
	$(GO) run ./cmd/schedsim reproduce

## bench: performance benchmarks (record results in BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./engine/...

bench-wasm:
	GOOS=js GOARCH=wasm $(GO) test -exec=$(WASM_EXEC) -run '^$$' -bench . -benchtime 3x ./engine/...

## serve: the browser playground (arrives with the page; see README).
serve:
	@echo "make serve: the browser page is not built yet (issue 5); use the CLI: go run ./cmd/schedsim --help" && false
