package idempotency

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/internal/format"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// resolve returns cfg with the defaults of its zero fields filled in, or an
// error that lists every rule it breaks (Problems); a negative duration is
// refused first, since its zero would mean the default.
func (cfg Config) resolve() (Config, error) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Window", cfg.Window}, {"TTLAfterWindow", cfg.TTLAfterWindow}, {"LeaseMax", cfg.LeaseMax}, {"FinishBudget", cfg.FinishBudget}} {
		if d.v < 0 {
			return cfg, fmt.Errorf("idempotency: %s is %s; it must not be negative (zero means the default)", d.name, format.Duration(d.v))
		}
	}
	cfg = cfg.withDefaults()
	if problems := cfg.Problems(); len(problems) > 0 {
		return cfg, errors.New("idempotency: invalid config:\n  - " + strings.Join(problems, "\n  - "))
	}
	return cfg, nil
}

// keyProblem returns why a business key is refused, wrapping ErrInvalidKey,
// or nil: empty, not valid UTF-8, or holding control characters. A hashed
// key (hashed) is not quoted.
func keyProblem(key string, hashed bool) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	case strings.IndexFunc(key, unicode.IsControl) >= 0 && hashed:
		return fmt.Errorf("%w: it holds control characters", ErrInvalidKey)
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %q holds control characters", ErrInvalidKey, key)
	}
	return nil
}

// withDefaults fills in the defaults of cfg's zero fields.
func (cfg Config) withDefaults() Config {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.Window, limits.DefaultWindow}, {&cfg.TTLAfterWindow, limits.DefaultTTLAfterWindow}, {&cfg.LeaseMax, limits.DefaultLeaseMax}, {&cfg.FinishBudget, limits.DefaultFinishBudget}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.ExpiryRetries <= 0 {
		cfg.ExpiryRetries = defaultExpiryRetries
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxResultBytes == 0 {
		cfg.MaxResultBytes = limits.DefaultMaxResultBytes
	}
	return cfg
}

// Problems returns every rule that cfg breaks, one sentence each that names
// the setting, the value given, the rule and the fix; none when cfg is
// valid. It checks the fields as they are, so that a zero Window is
// reported as shorter than 1s: NewGuard fills in the defaults of zero fields
// first and then applies these rules, and package contract applies them to
// the complete settings it maps onto a Config, so that the construct (at
// synth), the handler (at init) and NewGuard refuse a configuration in the
// same words.
func (cfg Config) Problems() []string {
	var out []string
	bad := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }
	d := format.Duration

	out = append(out, namespaceProblems(cfg.Namespace)...)
	if cfg.Window < time.Second {
		bad("Window %s is shorter than 1s; give a business window of at least 1s (default %s)", d(cfg.Window), d(limits.DefaultWindow))
	}
	if cfg.TTLAfterWindow < time.Second {
		bad("TTLAfterWindow %s is shorter than 1s: the TTL must come after the end of the window; give at least 1s (default %s)", d(cfg.TTLAfterWindow), d(limits.DefaultTTLAfterWindow))
	}
	if cfg.LeaseMax < time.Second {
		bad("LeaseMax %s is shorter than 1s; give at least 1s, or leave it to its default, the function's Timeout", d(cfg.LeaseMax))
	}
	if cfg.Window >= time.Second && cfg.Window < cfg.LeaseMax {
		bad("Window %s is shorter than LeaseMax %s, so a record could leave its business window while its effect still runs, and a redelivery would run the effect again; give a Window of at least %s, or a shorter LeaseMax (it defaults to the function's Timeout)",
			d(cfg.Window), d(cfg.LeaseMax), d(cfg.LeaseMax))
	}
	switch {
	case cfg.FinishBudget <= 0:
		bad("FinishBudget %s must be positive: it is the time kept to complete or release a reservation (default %s)", d(cfg.FinishBudget), d(limits.DefaultFinishBudget))
	case cfg.LeaseMax >= time.Second && cfg.FinishBudget >= cfg.LeaseMax:
		bad("FinishBudget %s leaves no time for the effect within LeaseMax %s; give a LeaseMax (default: the function's Timeout) longer than FinishBudget, or a shorter FinishBudget", d(cfg.FinishBudget), d(cfg.LeaseMax))
	}
	if cfg.MaxResultBytes < 0 || cfg.MaxResultBytes > limits.LargestResultBytes {
		bad("MaxResultBytes %d is out of range; give 0 (the default, %d) to %d, what a DynamoDB item holds beside the record", cfg.MaxResultBytes, limits.DefaultMaxResultBytes, limits.LargestResultBytes)
	}
	if cfg.CacheSize < 0 || cfg.CacheSize > limits.MaxCacheSize {
		bad("CacheSize %d is out of range; give a whole number from 0 (no cache) to %d", cfg.CacheSize, limits.MaxCacheSize)
	}
	for _, f := range cfg.PayloadIgnore {
		if f == "" || strings.Contains(f, ",") {
			bad("PayloadIgnore has the field name %q; give dotted JSON paths such as \"meta.sentAt\", neither empty nor containing ','", f)
			break
		}
	}
	if n := len(cfg.KeySecret); n > 0 && n < limits.MinKeySecretBytes {
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
