#!/bin/sh
# Stands in for perf in the tests: prints the captured output of the
# sub-benchmark asked for (perf bench sched pipe|messaging ...).
d=$(dirname "$0")
case "$3" in
pipe) cat "$d/perf-pipe-processes.txt" ;;
messaging) cat "$d/perf-messaging-processes.txt" ;;
*) echo "fake perf: unknown benchmark $3" >&2; exit 129 ;;
esac
