#!/bin/sh
# Stands in for a tool that hangs (and forks a child that hangs too).
sleep 30 &
sleep 30
