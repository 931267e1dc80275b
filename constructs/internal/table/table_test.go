package table_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// stringLike is IAM's StringLike for one pattern: '*' matches any run of
// characters (none included), '?' any one character, and ${*}, ${?} and
// ${$} the characters '*', '?' and '$' themselves. Matching is case
// sensitive.
func stringLike(pattern, value string) bool {
	type token struct {
		literal rune
		kind    byte // 'l' literal, '*' any run, '?' any one
	}
	var tokens []token
	for i := 0; i < len(pattern); {
		if strings.HasPrefix(pattern[i:], "${") && len(pattern) >= i+4 && pattern[i+3] == '}' && strings.ContainsRune("*?$", rune(pattern[i+2])) {
			tokens = append(tokens, token{literal: rune(pattern[i+2]), kind: 'l'})
			i += 4
			continue
		}
		r, n := utf8.DecodeRuneInString(pattern[i:])
		switch r {
		case '*', '?':
			tokens = append(tokens, token{kind: byte(r)})
		default:
			tokens = append(tokens, token{literal: r, kind: 'l'})
		}
		i += n
	}
	v := []rune(value)
	var match func(t, i int) bool
	match = func(t, i int) bool {
		if t == len(tokens) {
			return i == len(v)
		}
		switch tokens[t].kind {
		case '*':
			for j := i; j <= len(v); j++ {
				if match(t+1, j) {
					return true
				}
			}
			return false
		case '?':
			return i < len(v) && match(t+1, i+1)
		}
		return i < len(v) && v[i] == tokens[t].literal && match(t+1, i+1)
	}
	return match(0, 0)
}

func TestStringLike(t *testing.T) {
	for _, tc := range []struct {
		pattern, value string
		want           bool
	}{
		{"a#*", "a#", true}, {"a#*", "a#xyz", true}, {"a#*", "ab#x", false}, {"a#*", "A#x", false},
		{"a?#*", "ab#x", true}, {"a?#*", "a#x", false}, {"a${*}#*", "a*#x", true}, {"a${*}#*", "ab#x", false},
		{"a${?}#*", "a?#x", true}, {"a${?}#*", "ab#x", false}, {"a${$}#*", "a$#x", true}, {"é#*", "é#ü", true},
	} {
		if got := stringLike(tc.pattern, tc.value); got != tc.want {
			t.Errorf("StringLike(%q, %q) = %t, want %t", tc.pattern, tc.value, got, tc.want)
		}
	}
}

// TestLeadingKeysMatchEveryKeyOfTheNamespaceAlone: the pattern the role's
// condition holds matches every record key the guard writes for its
// namespace (the guard's own Key, with and without a key secret), and no
// key of any other namespace, however close its name.
func TestLeadingKeysMatchEveryKeyOfTheNamespaceAlone(t *testing.T) {
	namespaces := []string{"reserve", "res", "reserve2", "Reserve", "email-customer", "a$", "a${aws:username}", "ab", "über", "x.y"}
	keys := []string{"order-42", "", "#", "a#b#c", "*", "?", "${*}", "é", strings.Repeat("k", 1000), "ORDER 42"}
	secret := []byte(strings.Repeat("s", idempotency.MinKeySecretBytes))
	keysOf := func(namespace string) []string {
		var out []string
		for _, s := range [][]byte{nil, secret} {
			g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: namespace, KeySecret: s})
			if err != nil {
				t.Fatalf("namespace %q: %v", namespace, err)
			}
			for _, k := range keys {
				if pk, err := g.Key(k); err == nil {
					out = append(out, pk)
				}
			}
		}
		if len(out) < len(keys) {
			t.Fatalf("namespace %q: only %d keys", namespace, len(out))
		}
		return out
	}
	written := map[string][]string{}
	for _, ns := range namespaces {
		written[ns] = keysOf(ns)
	}
	for _, ns := range namespaces {
		pattern := table.LeadingKeys(ns)
		for other, pks := range written {
			for _, pk := range pks {
				if got, want := stringLike(pattern, pk), other == ns; got != want {
					t.Errorf("namespace %q: pattern %q on %q's key %q matches %t, want %t", ns, pattern, other, pk, got, want)
				}
			}
		}
	}
}
