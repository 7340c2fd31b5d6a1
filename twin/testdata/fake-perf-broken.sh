#!/bin/sh
# Stands in for the perf wrapper of a distribution whose perf package does
# not match the running kernel.
echo "WARNING: perf not found for kernel 6.18.44" >&2
echo "  You may need to install linux-tools-6.18.44" >&2
exit 2
