package idempotency_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// TestNewGuardSaysEveryProblem: NewGuard refuses a config by the rules of
// Config.Problems, every problem at once, in the words the contract uses
// at synth and at init.
func TestNewGuardSaysEveryProblem(t *testing.T) {
	_, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{
		Namespace: "ord*", Window: 5 * time.Minute, LeaseMax: 15 * time.Minute, CacheSize: -1,
	})
	for _, want := range []string{
		`Namespace "ord*" contains '*' or '?', wildcards in the IAM condition that scopes the consumer to the keys "ord*#*"`,
		"Window 5m is shorter than LeaseMax 15m",
		"CacheSize -1 is out of range",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewGuard: %v; want %q", err, want)
		}
	}
}

// TestNamespaceBounds: a namespace is valid UTF-8 of at most
// limits.MaxNamespaceBytes, without '#', '*', '?' or control characters; at the
// bound, a key of the rest of DynamoDB's partition key still fits, plain or
// hashed.
func TestNamespaceBounds(t *testing.T) {
	for ns, want := range map[string]string{
		"":                         "Namespace is empty",
		"a#b":                      "contains '#'",
		"a*":                       "contains '*' or '?'",
		"a?":                       "contains '*' or '?'",
		"a\x00":                    "contains control characters",
		"a\xff":                    "is not valid UTF-8",
		strings.Repeat("n", 1025):  "Namespace of 1025 bytes is longer than 1024",
		strings.Repeat("ñ", 513):   "Namespace of 1026 bytes is longer than 1024",
		"ok":                       "",
		strings.Repeat("n", 1024):  "",
		"ñandú/Orders.v2 (EU)_ok-": "",
	} {
		problems := idempotency.Config{Namespace: ns, Window: time.Hour, TTLAfterWindow: time.Hour, LeaseMax: time.Minute, FinishBudget: time.Second}.Problems()
		switch {
		case want == "" && len(problems) > 0:
			t.Errorf("namespace %q: %v", ns, problems)
		case want != "" && (len(problems) != 1 || !strings.Contains(problems[0], want)):
			t.Errorf("namespace %q: %v; want %q", ns, problems, want)
		}
	}
	ns := strings.Repeat("n", limits.MaxNamespaceBytes)
	for _, secret := range [][]byte{nil, []byte(strings.Repeat("k", 32))} {
		g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: ns, KeySecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Key(strings.Repeat("k", limits.MaxKeyBytes-limits.MaxNamespaceBytes-1)); err != nil {
			t.Errorf("a key of %d bytes under the longest namespace: %v", limits.MaxKeyBytes-limits.MaxNamespaceBytes-1, err)
		}
	}
}

// TestNamespaceAllowsIsTheRule: limits.NamespaceAllows accepts a character exactly
// when Config.Problems accepts it in a namespace.
func TestNamespaceAllowsIsTheRule(t *testing.T) {
	for r := rune(0); r <= 0x2FFFF; r++ {
		ns := "a" + string(r)
		problems := idempotency.Config{Namespace: ns, Window: time.Hour, TTLAfterWindow: time.Hour, LeaseMax: time.Minute, FinishBudget: time.Second}.Problems()
		if got, want := limits.NamespaceAllows(r), len(problems) == 0; got != want {
			t.Errorf("limits.NamespaceAllows(%U) = %t, but the namespace %q has problems %q", r, got, ns, problems)
		}
	}
}
