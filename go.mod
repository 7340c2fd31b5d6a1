module schedplay

go 1.26

require (
	github.com/HdrHistogram/hdrhistogram-go v1.2.0
	github.com/cockroachdb/datadriven v1.0.3
	github.com/goccy/go-json v0.12.0
)

require github.com/pmezard/go-difflib v1.0.0 // indirect
