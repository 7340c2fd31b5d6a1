package playground

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"sync"

	"schedplay/policy"
)

// An arm's wake policy (issue 29): a Starlark file that replaces the fair
// class's select_idle_sibling (policy/). The link carries its name and
// its source, compressed: "policy=NAME:DATA" for arm A, "b.policy=…",
// "c.policy=…", "d.policy=…" for the others, DATA being the source
// deflated (compress/flate, best compression: the page's wasm links flate
// already) in unpadded base64url. A link without a policy is read as
// before, so the link version stays 1.

// Policy is an arm's wake policy: the file name its errors name
// (file:line:col) and its source. The zero Policy is none.
type Policy struct {
	Name string
	Src  string
}

// IsSet reports whether the arm runs a policy.
func (p Policy) IsSet() bool { return p.Src != "" }

// Limits of a policy in a link.
const (
	// MaxPolicyBytes is the source's limit (the policy package's).
	MaxPolicyBytes = policy.MaxSourceBytes
	// MaxPolicyLinkBytes bounds one policy's compressed, encoded form
	// in the link.
	MaxPolicyLinkBytes = 48 << 10
	// DefaultPolicyName names a policy the link gives no name for.
	DefaultPolicyName = "policy.star"
)

// checkPolicyName accepts a file name of letters, digits, '.', '_', '-'
// (at most 64), so that it reads the same in the link and in errors.
func checkPolicyName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("policy name %q: 1 to 64 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("policy name %q: only letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

// CheckPolicy checks a policy's name and size (not that it compiles:
// see CompilePolicy), as a link and the panel take it.
func CheckPolicy(p Policy) error {
	if !p.IsSet() {
		return nil
	}
	if err := checkPolicyName(p.Name); err != nil {
		return err
	}
	if len(p.Src) > MaxPolicyBytes {
		return fmt.Errorf("policy %s is %d bytes: at most %d (64 KiB)", p.Name, len(p.Src), MaxPolicyBytes)
	}
	if n := len(encodePolicySrc(p.Src)); n > MaxPolicyLinkBytes {
		return fmt.Errorf("policy %s takes %d bytes in the link, compressed: at most %d", p.Name, n, MaxPolicyLinkBytes)
	}
	return nil
}

func encodePolicySrc(src string) string {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	io.WriteString(w, src)
	w.Close()
	return base64.RawURLEncoding.EncodeToString(b.Bytes())
}

// encodePolicy is a policy's link value, NAME:DATA.
func encodePolicy(p Policy) string {
	return p.Name + ":" + encodePolicySrc(p.Src)
}

// decodePolicy reads a link's policy value (key names the link key).
func decodePolicy(key, val string) (Policy, error) {
	name, data, ok := strings.Cut(val, ":")
	if !ok {
		name, data = DefaultPolicyName, val
	}
	if err := checkPolicyName(name); err != nil {
		return Policy{}, fmt.Errorf("link key %s: %v", key, err)
	}
	if data == "" {
		return Policy{}, fmt.Errorf("link key %s: an empty policy", key)
	}
	if len(data) > MaxPolicyLinkBytes {
		return Policy{}, fmt.Errorf("link key %s: the policy takes %d bytes, compressed: at most %d", key, len(data), MaxPolicyLinkBytes)
	}
	z, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(data, "="))
	if err != nil {
		return Policy{}, fmt.Errorf("link key %s: not base64url (%v)", key, err)
	}
	r := flate.NewReader(bytes.NewReader(z))
	src, err := io.ReadAll(io.LimitReader(r, MaxPolicyBytes+1))
	if err != nil {
		return Policy{}, fmt.Errorf("link key %s: not a deflated policy (%v)", key, err)
	}
	if len(src) > MaxPolicyBytes {
		return Policy{}, fmt.Errorf("link key %s: the policy is more than %d bytes (64 KiB), the limit of a policy", key, MaxPolicyBytes)
	}
	if len(src) == 0 {
		return Policy{}, fmt.Errorf("link key %s: an empty policy", key)
	}
	return Policy{Name: name, Src: string(src)}, nil
}

// The compiled programs, by name and source: Config and the build
// compile an arm's policy once per page, not once per call.
var (
	progMu    sync.Mutex
	progCache = map[[32]byte]progEntry{}
)

type progEntry struct {
	prog *policy.Program
	err  error
}

// maxProgCache bounds the cache (a page edits a few policies).
const maxProgCache = 32

// CompilePolicy compiles p (nil, nil for none); the error is the policy
// package's, "file:line:col: message" for a syntax error.
func CompilePolicy(p Policy) (*policy.Program, error) {
	if !p.IsSet() {
		return nil, nil
	}
	if err := CheckPolicy(p); err != nil {
		return nil, err
	}
	key := sha256.Sum256([]byte(p.Name + "\x00" + p.Src))
	progMu.Lock()
	e, ok := progCache[key]
	progMu.Unlock()
	if ok {
		return e.prog, e.err
	}
	prog, err := policy.Compile(p.Name, []byte(p.Src))
	progMu.Lock()
	if len(progCache) >= maxProgCache {
		clear(progCache)
	}
	progCache[key] = progEntry{prog, err}
	progMu.Unlock()
	return prog, err
}

// ArmPolicy is arm i's policy.
func (st *State) ArmPolicy(i int) Policy {
	if i < 0 || i >= MaxArms {
		return Policy{}
	}
	return st.Policies[i]
}

// PolicyViews are the state's arms' policies for the page (PageState).
func (st *State) PolicyViews() []PolicyView {
	out := make([]PolicyView, st.NumArms())
	for i := range out {
		p := st.ArmPolicy(i)
		if !p.IsSet() {
			continue
		}
		out[i].Name = p.Name
		sum := sha256.Sum256([]byte(p.Src))
		out[i].Sum = base64.RawURLEncoding.EncodeToString(sum[:9])
		prog, err := CompilePolicy(p)
		if err != nil {
			out[i].Error = err.Error()
		} else {
			out[i].Hooks = prog.Hooks().Names()
		}
	}
	return out
}

// policyKey is arm i's link key for its policy.
func policyKey(i int) string {
	if i == 0 {
		return "policy"
	}
	return string(rune('a'+i)) + ".policy"
}
