module schedplay

go 1.26

require (
	github.com/HdrHistogram/hdrhistogram-go v1.2.0
	github.com/andybalholm/brotli v1.3.0
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/cockroachdb/datadriven v1.0.3
	github.com/goccy/go-json v0.12.0
	github.com/hajimehoshi/ebiten/v2 v2.8.8
	github.com/pkg/browser v0.0.0-20240102092130-5ac0b6a4141c
	go.starlark.net v0.0.0-20260908191801-89a6a09411d5
	golang.org/x/sys v0.42.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/ebitengine/gomobile v0.0.0-20240911145611-4856209ac325 // indirect
	github.com/ebitengine/hideconsole v1.0.0 // indirect
	github.com/ebitengine/purego v0.8.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/jezek/xgb v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	golang.org/x/sync v0.12.0 // indirect
)
