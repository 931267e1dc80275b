package table_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/iamcond"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

var stringLike = iamcond.StringLike

// TestLeadingKeysMatchEveryKeyOfTheNamespaceAlone: the pattern the role's
// condition holds matches every record key the guard writes for its
// namespace (the guard's own Key, with and without a key secret), and no
// key of any other namespace, however close its name.
func TestLeadingKeysMatchEveryKeyOfTheNamespaceAlone(t *testing.T) {
	namespaces := []string{"reserve", "res", "reserve2", "Reserve", "email-customer", "a$", "a${aws:username}", "ab", "über", "x.y"}
	keys := []string{"order-42", "", "#", "a#b#c", "*", "?", "${*}", "é", strings.Repeat("k", 1000), "ORDER 42"}
	secret := []byte(strings.Repeat("s", limits.MinKeySecretBytes))
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

// TestConditionsFollowTheDesign: the condition is on the namespace's
// pattern where the record key is in the partition key (with or without a
// sort key), and on the partition value, exactly and with its '$' written
// literally, where the record key is in the sort key; a request without a
// leading key is refused in both.
func TestConditionsFollowTheDesign(t *testing.T) {
	s := contract.Defaults(0)
	s.Namespace = "reserve"
	for _, tc := range []struct {
		name     string
		design   func(*contract.Settings)
		operator string
		value    string
	}{
		{"the construct's table", func(*contract.Settings) {}, "ForAllValues:StringLike", "reserve#*"},
		{"a sort key", func(s *contract.Settings) { s.TableSortKey, s.TableFixedKeyValue = "SK", "IDEMPOTENCY" }, "ForAllValues:StringLike", "reserve#*"},
		{"the record key in the sort key", func(s *contract.Settings) {
			s.TableSortKey, s.TableFixedKeyValue, s.TableRecordKeyIn = "SK", "idem$#reserve", contract.KeyInSort
		}, "ForAllValues:StringEquals", "idem${$}#reserve"},
	} {
		d := s
		tc.design(&d)
		got := table.Conditions(d)
		want := map[string]any{
			tc.operator: map[string]any{"dynamodb:LeadingKeys": []any{tc.value}},
			"Null":      map[string]any{"dynamodb:LeadingKeys": "false"},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
}
