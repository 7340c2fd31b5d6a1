package main

// A sweep's wake policies: --policy FILE for every run, or a policy axis
// --vary policy=a.star,b.star,none (none: the era's own search), which
// compare's --a policy=FILE runs arm by arm. A run's line names its
// policy file and the sha256 of the source it ran (policy,
// policy_sha256): --resume refuses a journal whose runs ran another
// version of the file (edited since: the finished runs would not be this
// sweep's), and merge refuses two lines of one point that ran different
// sources.

import (
	"fmt"
	"strings"

	"schedplay/policy"
	"schedplay/scenario"
)

// policyAxis is the --vary name of the policy axis.
const policyAxis = "policy"

// noPolicy is the policy axis's value for the era's own search.
const noPolicy = "none"

type sweepPolicy struct {
	prog *policy.Program
	sum  string // sha256 of the source, hex
}

// loadSweepPolicies compiles --policy and the policy axis's files (each
// once), adds them to the sweep's inputs (never an --out) and sets the
// base config's policy.
func (f *sweepFlags) loadSweepPolicies(base *scenario.Config) error {
	f.policies = map[string]sweepPolicy{}
	load := func(path string) error {
		if _, ok := f.policies[path]; ok || path == noPolicy {
			return nil
		}
		prog, sum, err := loadPolicySum(path)
		if err != nil {
			return err
		}
		f.policies[path] = sweepPolicy{prog, sum}
		f.inputs = append(f.inputs, input{flag: "--policy", path: path})
		return nil
	}
	if f.policy != "" {
		if err := load(f.policy); err != nil {
			return err
		}
		base.WakePolicy = f.policies[f.policy].prog
	}
	for _, v := range f.varies {
		name, vals, ok := cutVary(v)
		if !ok || name != policyAxis {
			continue
		}
		if f.policy != "" {
			return usagef("--policy %s and --vary %s: drop one (the --vary would win silently)", f.policy, v)
		}
		for _, x := range vals {
			if err := load(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// runPolicy is the policy file run k runs ("" for none) and its sum.
func (f *sweepFlags) runPolicy(pt map[string]string) (string, sweepPolicy) {
	path := f.policy
	if x, ok := pt[policyAxis]; ok {
		path = x
	}
	if path == noPolicy {
		return "", sweepPolicy{}
	}
	return path, f.policies[path]
}

// cutVary splits --vary NAME=a,b,... as planSweep does (trimmed).
func cutVary(v string) (string, []string, bool) {
	name, vals, ok := strings.Cut(v, "=")
	if !ok {
		return "", nil, false
	}
	var out []string
	for _, x := range strings.Split(vals, ",") {
		out = append(out, strings.TrimSpace(x))
	}
	return strings.TrimSpace(name), out, true
}

// policyName names a line's policy: the file and the start of its sum,
// or none.
func policyName(path, sum string) string {
	if sum == "" {
		return "none"
	}
	return fmt.Sprintf("%s (sha256 %s…)", path, sum[:min(12, len(sum))])
}
