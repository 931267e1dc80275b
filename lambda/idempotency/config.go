package idempotency

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/internal/format"
	"github.com/idempotent-consumer/idempotent-consumer/internal/guardrules"
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
// first and then applies these rules, and the construct (at synth) and the
// handler (at init) apply the same rules to the settings they map onto a
// Config, so that all three refuse a configuration in the same words.
func (cfg Config) Problems() []string {
	return guardrules.Settings{
		Namespace: cfg.Namespace, Window: cfg.Window, TTLAfterWindow: cfg.TTLAfterWindow,
		LeaseMax: cfg.LeaseMax, FinishBudget: cfg.FinishBudget, MaxResultBytes: cfg.MaxResultBytes,
		CacheSize: cfg.CacheSize, PayloadIgnore: cfg.PayloadIgnore, KeySecretBytes: len(cfg.KeySecret),
	}.Problems()
}
