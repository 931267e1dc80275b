package iamcond_test

import (
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/iamcond"
)

func TestStringLike(t *testing.T) {
	for _, tc := range []struct {
		pattern, value string
		want           bool
	}{
		{"a#*", "a#", true}, {"a#*", "a#xyz", true}, {"a#*", "ab#x", false}, {"a#*", "A#x", false},
		{"a?#*", "ab#x", true}, {"a?#*", "a#x", false}, {"a${*}#*", "a*#x", true}, {"a${*}#*", "ab#x", false},
		{"a${?}#*", "a?#x", true}, {"a${?}#*", "ab#x", false}, {"a${$}#*", "a$#x", true}, {"é#*", "é#ü", true},
	} {
		if got := iamcond.StringLike(tc.pattern, tc.value); got != tc.want {
			t.Errorf("StringLike(%q, %q) = %t, want %t", tc.pattern, tc.value, got, tc.want)
		}
	}
}

func TestStringEquals(t *testing.T) {
	for _, tc := range []struct {
		pattern, value string
		want           bool
	}{
		{"idempotency#a", "idempotency#a", true}, {"idempotency#a", "idempotency#ab", false}, {"a*", "ab", false},
		{"a*", "a*", true}, {"a?", "a?", true}, {"a${$}", "a$", true}, {"a${$}", "a${$}", false}, {"A", "a", false},
	} {
		if got := iamcond.StringEquals(tc.pattern, tc.value); got != tc.want {
			t.Errorf("StringEquals(%q, %q) = %t, want %t", tc.pattern, tc.value, got, tc.want)
		}
	}
}
