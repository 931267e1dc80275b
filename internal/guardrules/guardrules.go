// Package guardrules holds the rules of the guard's settings
// (idempotency.Config.Problems) below both the guard and the runtime
// contract, on plain values, so that NewGuard, the construct at synth and
// the handler at init refuse a setting in the same words, and the contract
// imports no runtime package.
package guardrules

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/internal/format"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// Settings are the guard's settings that its rules judge: the fields of
// idempotency.Config of the same names, and the length of its KeySecret.
type Settings struct {
	Namespace      string
	Window         time.Duration
	TTLAfterWindow time.Duration
	LeaseMax       time.Duration
	FinishBudget   time.Duration
	MaxResultBytes int
	CacheSize      int
	PayloadIgnore  []string
	KeySecretBytes int
}

// Problems returns every rule that s breaks, one sentence each that names
// the setting, the value given, the rule and the fix; none when s is
// valid. It checks the fields as they are: a zero Window is shorter than
// 1s.
func (s Settings) Problems() []string {
	var out []string
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	d := format.Duration

	out = append(out, namespaceProblems(s.Namespace)...)
	if s.Window < time.Second {
		bad("Window %s is shorter than 1s; give a business window of at least 1s (default %s)", d(s.Window), d(limits.DefaultWindow))
	}
	if s.TTLAfterWindow < time.Second {
		bad("TTLAfterWindow %s is shorter than 1s: the TTL must come after the end of the window; give at least 1s (default %s)", d(s.TTLAfterWindow), d(limits.DefaultTTLAfterWindow))
	}
	if s.LeaseMax < time.Second {
		bad("LeaseMax %s is shorter than 1s; give at least 1s, or leave it to its default, the function's Timeout", d(s.LeaseMax))
	}
	if s.Window >= time.Second && s.Window < s.LeaseMax {
		bad("Window %s is shorter than LeaseMax %s, so a record could leave its business window while its effect still runs, and a redelivery would run the effect again; give a Window of at least %s, or a shorter LeaseMax (it defaults to the function's Timeout)",
			d(s.Window), d(s.LeaseMax), d(s.LeaseMax))
	}
	switch {
	case s.FinishBudget <= 0:
		bad("FinishBudget %s must be positive: it is the time kept to complete or release a reservation (default %s)", d(s.FinishBudget), d(limits.DefaultFinishBudget))
	case s.LeaseMax >= time.Second && s.FinishBudget >= s.LeaseMax:
		bad("FinishBudget %s leaves no time for the effect within LeaseMax %s; give a LeaseMax (default: the function's Timeout) longer than FinishBudget, or a shorter FinishBudget", d(s.FinishBudget), d(s.LeaseMax))
	}
	if s.MaxResultBytes < 0 || s.MaxResultBytes > limits.LargestResultBytes {
		bad("MaxResultBytes %d is out of range; give 0 (the default, %d) to %d, what a DynamoDB item holds beside the record", s.MaxResultBytes, limits.DefaultMaxResultBytes, limits.LargestResultBytes)
	}
	if s.CacheSize < 0 || s.CacheSize > limits.MaxCacheSize {
		bad("CacheSize %d is out of range; give a whole number from 0 (no cache) to %d", s.CacheSize, limits.MaxCacheSize)
	}
	for _, f := range s.PayloadIgnore {
		if f == "" || strings.Contains(f, ",") {
			bad("PayloadIgnore has the field name %q; give dotted JSON paths such as \"meta.sentAt\", neither empty nor containing ','", f)
			break
		}
	}
	if n := s.KeySecretBytes; n > 0 && n < limits.MinKeySecretBytes {
		bad("KeySecret has %d bytes; give at least %d random bytes, or none to keep keys in plain text", n, limits.MinKeySecretBytes)
	}
	return out
}

// namespaceProblems checks a namespace: a key prefix that never overlaps
// another ("<namespace>#"), that IAM can match ("<namespace>#*" in
// StringLike) and that leaves room for the key.
func namespaceProblems(ns string) []string {
	switch {
	case ns == "":
		return []string{"Namespace is empty; give a short name without '#' (for example \"orders\")"}
	case strings.Contains(ns, "#"):
		return []string{fmt.Sprintf("Namespace %q contains '#', the separator between namespace and key; remove the '#' (for example %q)", ns, strings.ReplaceAll(ns, "#", ""))}
	case strings.ContainsAny(ns, limits.NamespaceWildcards):
		return []string{fmt.Sprintf("Namespace %q contains '*' or '?', wildcards in the IAM condition that scopes the consumer to the keys %q; remove them (for example %q)",
			ns, ns+"#*", strings.NewReplacer("*", "", "?", "").Replace(ns))}
	case !utf8.ValidString(ns):
		return []string{fmt.Sprintf("Namespace %q is not valid UTF-8; give a name in UTF-8", ns)}
	case strings.IndexFunc(ns, unicode.IsControl) >= 0:
		return []string{fmt.Sprintf("Namespace %q contains control characters; remove them", ns)}
	case len(ns) > limits.MaxNamespaceBytes:
		return []string{fmt.Sprintf("Namespace of %d bytes is longer than %d, so that keys (\"<namespace>#<key>\") would not fit DynamoDB's %d-byte partition key; give a short name (for example \"orders\")", len(ns), limits.MaxNamespaceBytes, limits.MaxKeyBytes)}
	}
	return nil
}
