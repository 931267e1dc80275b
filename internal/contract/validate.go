package contract

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/idempotent-consumer/idempotent-consumer/internal/format"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

// Problems returns every rule s breaks, one sentence each that names the
// setting, the value given, the rule and the fix; none when s is valid. The
// construct reports them at synth (beside its own, about the resources) and
// the handler at init: the same rules, in the same words. The guard's and
// the adapter's rules are their own (package guardrules, which
// idempotency.Config.Problems applies too; the rules of each source in
// sources), so that NewGuard,
// the construct and the handler refuse a setting in one voice; the rules
// here are the contract's: the table, the function's timeout and what
// depends on it, the declared tables, the concurrency.
//
// When the only settings about time that s changes from their defaults is
// Timeout, and it is too short for a record to start, the one problem about
// it says the shortest Timeout that works ("Timeout 2s is too short: …
// give at least 4s"), not the settings derived from it.
func (s Settings) Problems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if s.Table == "" {
		bad("Table is empty; the idempotency table's name is required")
	}
	out = append(out, s.designProblems()...)
	guard := s.guardRules()
	timeoutOK := s.Timeout >= time.Second && s.Timeout <= maxTimeout && s.Timeout%time.Second == 0
	if !timeoutOK {
		bad("Timeout %s is out of range: Lambda takes whole seconds from 1s to %s; give one in that range", Format(s.Timeout), Format(maxTimeout))
	}
	if least, short := s.shortTimeout(); timeoutOK && short {
		bad("Timeout %s is too short: a record starts only with %s left before the deadline (%s to complete its record, %s for its effect); give at least %s",
			Format(s.Timeout), Format(s.MinRemaining), Format(s.FinishBudget), Format(s.MinRemaining-s.FinishBudget), Format(least))
		guard.LeaseMax = least // the other rules, as they stand with the fix
	} else {
		if s.LeaseMax >= time.Second && timeoutOK && s.LeaseMax > s.Timeout {
			bad("LeaseMax %s is longer than Timeout %s: a lease never outlasts the invocation that holds it; give at most %s", Format(s.LeaseMax), Format(s.Timeout), Format(s.Timeout))
		}
		if s.MinRemaining >= s.Timeout {
			bad("MinRemaining %s is not less than Timeout %s, so no record could ever start; give a MinRemaining below Timeout, or a longer Timeout", Format(s.MinRemaining), Format(s.Timeout))
		}
	}
	out = append(out, guard.Problems()...)
	out = append(out, s.adapterProblems()...) // the queue's or the stream's (source.go)
	for _, t := range s.TxTables {
		if t == "" || strings.Contains(t, ",") {
			bad("TxTables has the table name %q; give table names, neither empty nor containing ','", t)
			break
		}
	}
	if s.BatchConcurrency < 1 || s.BatchConcurrency > MaxBatchConcurrency {
		bad("BatchConcurrency %d is out of range: each record in flight holds connections, and Lambda allows 1,024 file descriptors; give a whole number from 1 to %d (default: the batch size, at most %d)",
			s.BatchConcurrency, MaxBatchConcurrency, DefaultMaxConcurrency)
	}
	return out
}

// maxAttributeNameBytes is DynamoDB's bound on a key attribute's name.
const maxAttributeNameBytes = 255

// designProblems are the rules of the table's design: names that the store
// can use (schema.Taken), one role per attribute, a sort key's fixed value
// where there is a sort key, and only there.
func (s Settings) designProblems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	names := []struct{ setting, role, name, def string }{
		{"TablePartitionKey", "partition key", s.TablePartitionKey, schema.Key},
		{"TableSortKey", "sort key", s.TableSortKey, ""},
		{"TableTTLAttribute", "TTL attribute", s.TableTTLAttribute, schema.TTL},
	}
	for i, n := range names {
		switch {
		case n.name == "" && n.def != "":
			bad("%s is empty; give the name of the table's %s (default %q)", n.setting, n.role, n.def)
		case len(n.name) > maxAttributeNameBytes || !utf8.ValidString(n.name):
			bad("%s %q is not a DynamoDB attribute name: give 1 to %d bytes of UTF-8", n.setting, n.name, maxAttributeNameBytes)
		case schema.Taken(n.name):
			bad("%s %q is an attribute of the idempotency record (package schema), which the store writes with the record's own values; give the table's %s its own name", n.setting, n.name, n.role)
		}
		for _, o := range names[i+1:] {
			if n.name != "" && o.name == n.name {
				bad("%s and %s are both %q: a table's %s and its %s are two attributes; give each its own name", n.setting, o.setting, n.name, n.role, o.role)
			}
		}
	}
	switch s.TableRecordKeyIn {
	case KeyInPartition:
	case KeyInSort:
		if s.TableSortKey == "" {
			bad("TableRecordKeyIn is %q (TableKeyInSortKey), but TableSortKey is empty: the record key can live in the sort key only on a table with one; give the table's sort key as TableSortKey, or keep the record key in the partition key", KeyInSort)
		}
	default:
		bad("TableRecordKeyIn %q is not a place of the record key; give %q or %q", s.TableRecordKeyIn, KeyInPartition, KeyInSort)
	}
	switch v := s.TableFixedKeyValue; {
	case s.TableSortKey == "" && v != "":
		bad("TableFixedKeyValue %q is given, but TableSortKey is empty: a table without a sort key has no other key to hold it; give the table's sort key as TableSortKey, or no TableFixedKeyValue", v)
	case s.TableSortKey != "" && v == "":
		bad("TableSortKey %q needs TableFixedKeyValue, the value of the table's other key on every record (the sort key's, or with the record key in the sort key the partition key's): give one, for example the namespace %q", s.TableSortKey, s.Namespace)
	case s.TableSortKey != "" && !utf8.ValidString(v):
		bad("TableFixedKeyValue %q is not valid UTF-8; DynamoDB's string keys are", v)
	case s.TableSortKey != "" && s.TableRecordKeyIn == KeyInSort && len(v) > limits.MaxKeyBytes:
		bad("TableFixedKeyValue is %d bytes, longer than DynamoDB's partition key value (%d bytes); give a shorter one", len(v), limits.MaxKeyBytes)
	case s.TableSortKey != "" && s.TableRecordKeyIn != KeyInSort && len(v) > limits.MaxSortKeyBytes:
		bad("TableFixedKeyValue is %d bytes, longer than DynamoDB's sort key value (%d bytes); give a shorter one", len(v), limits.MaxSortKeyBytes)
	}
	if s.TableRecordKeyIn == KeyInSort && len(s.Namespace)+len("#x") > limits.MaxSortKeyBytes {
		bad("Namespace of %d bytes leaves no room for a key in the sort key, which holds the record key \"<namespace>#<key>\" in this design (TableRecordKeyIn %q) and takes at most %d bytes; give a short name (for example \"orders\")", len(s.Namespace), KeyInSort, limits.MaxSortKeyBytes)
	}
	return out
}

// shortTimeout reports whether Timeout is what makes the settings about
// time fail while the others (LeaseMax, FinishBudget, MinRemaining) are
// their defaults for it, and the shortest Timeout that would work: a
// whole number of seconds more than MinRemaining.
func (s Settings) shortTimeout() (least time.Duration, short bool) {
	derived := s.LeaseMax == s.Timeout && s.FinishBudget == limits.DefaultFinishBudget && s.MinRemaining == DefaultMinRemaining(s.FinishBudget)
	if !derived || s.MinRemaining < s.Timeout {
		return 0, false
	}
	return s.MinRemaining.Truncate(time.Second) + time.Second, true
}

// Validate returns an error listing every problem of s, or nil.
func (s Settings) Validate() error {
	problems := s.Problems()
	if len(problems) == 0 {
		return nil
	}
	return errors.New("invalid settings:\n  - " + strings.Join(problems, "\n  - "))
}

// Format writes d as the shortest Go duration string in whole units ("24h",
// "90s", "1500ms"), which time.ParseDuration reads back exactly: the way
// every message of the library and the construct writes a duration.
func Format(d time.Duration) string { return format.Duration(d) }
