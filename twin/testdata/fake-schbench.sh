#!/bin/sh
# Stands in for schbench in the tests: the 2019 layout, on stderr.
cat "$(dirname "$0")/schbench-2019.txt" >&2
