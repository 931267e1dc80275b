package contract_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// TestEverySettingHasAnEntry: every field of Settings has exactly one entry
// in Fields, in the order of Settings, with a variable, a prop, an encoding
// and an example, and every variable is one of Names. A field added to
// Settings without an entry fails here, whatever else forgets it.
func TestEverySettingHasAnEntry(t *testing.T) {
	typ := reflect.TypeFor[contract.Settings]()
	fields := contract.Fields()
	if len(fields) != typ.NumField() {
		t.Errorf("Settings has %d fields, Fields %d entries", typ.NumField(), len(fields))
	}
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if i >= len(fields) || fields[i].Setting != name {
			t.Errorf("Settings field %d is %s; the entry there is %+v", i, name, fields[min(i, len(fields)-1)])
		}
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if f.Var == "" || f.Prop == "" || f.Encoding == "" || f.Example == "" || f.Doc == "" || f.Default == "" {
			t.Errorf("entry %s is incomplete: %+v", f.Setting, f)
		}
		if seen[f.Var] {
			t.Errorf("two entries carry %s", f.Var)
		}
		seen[f.Var] = true
		if got, ok := contract.FieldOf(f.Var); !ok || got.Setting != f.Setting {
			t.Errorf("FieldOf(%s) = %+v, %v", f.Var, got, ok)
		}
	}
	if names := contract.Names(); len(names) != len(fields)+1 || names[0] != contract.VersionVar {
		t.Errorf("Names() = %v; want the version and one variable per entry", names)
	}
}

// base is a valid consumer none of whose settings is the example of its
// entry, so that setting any one example changes it. Its table has a sort
// key, so that each setting of the table's design is valid alone.
func base() contract.Settings {
	s := contract.Defaults(10 * time.Minute)
	s.Table, s.Namespace, s.Consumer = "t", "charge", "Charge"
	s.LeaseMax = 5 * time.Minute
	s.TableSortKey, s.TableFixedKeyValue = "sk", "charge"
	return s
}

// TestEveryFieldRoundTrips: each entry's example, set in an environment
// that carries a valid consumer, decodes into its own Settings field and
// no other, and encodes back to itself. An entry that reads or writes the
// wrong field, or a setting that Encode or Decode forgets, fails here.
func TestEveryFieldRoundTrips(t *testing.T) {
	b := base()
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, f := range contract.Fields() {
		t.Run(f.Setting, func(t *testing.T) {
			env := b.Encode()
			env[f.Var] = f.Example
			got, err := contract.Decode(func(k string) string { return env[k] }, "")
			if err != nil {
				t.Fatalf("Decode with %s=%q: %v", f.Var, f.Example, err)
			}
			gv, bv := reflect.ValueOf(got), reflect.ValueOf(b)
			for i := range gv.NumField() {
				name := gv.Type().Field(i).Name
				same := reflect.DeepEqual(gv.Field(i).Interface(), bv.Field(i).Interface())
				switch {
				case name == f.Setting && same:
					t.Errorf("%s=%q left %s at %v", f.Var, f.Example, name, bv.Field(i))
				case name != f.Setting && !same:
					t.Errorf("%s=%q changed %s from %v to %v", f.Var, f.Example, name, bv.Field(i), gv.Field(i))
				}
			}
			if again := got.Encode()[f.Var]; again != f.Example {
				t.Errorf("Encode wrote %s=%q, want %q", f.Var, again, f.Example)
			}
		})
	}
}

// TestDefaultsAreTheEntries: Defaults and the Decode of an empty
// environment agree, and each entry's documented default is the value it
// takes (for the defaults written as values).
func TestDefaultsAreTheEntries(t *testing.T) {
	empty, err := contract.Decode(func(k string) string {
		return map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns"}[k]
	}, "f")
	if err != nil {
		t.Fatal(err)
	}
	env := empty.Encode()
	for _, f := range contract.Fields() {
		if v, ok := env[f.Var]; ok && strings.ContainsAny(f.Default[:1], "0123456789") && !strings.HasPrefix(f.Default, v) {
			t.Errorf("%s defaults to %q, its entry says %q", f.Var, v, f.Default)
		}
	}
	if env[contract.WindowVar] != contract.Format(limits.DefaultWindow) || env[contract.MinRemainingVar] != contract.Format(contract.DefaultMinRemaining(limits.DefaultFinishBudget)) {
		t.Errorf("defaults %v: want the guard's window and the adapter's MinRemaining", env)
	}
}

// TestInitErrorsNameTheVariable: at init, each refused setting is named by
// its variable, in front of the words the construct uses at synth.
func TestInitErrorsNameTheVariable(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns"}, "CONSUMER_NAME: Consumer is empty"},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.WindowVar: "1s"}, "IDEMPOTENCY_WINDOW: Window 1s is shorter than LeaseMax 15m"},
		{map[string]string{contract.NamespaceVar: "ns", contract.ConsumerVar: "c"}, "IDEMPOTENCY_TABLE: Table is empty"},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "a*", contract.ConsumerVar: "c"}, `IDEMPOTENCY_NAMESPACE: Namespace "a*" contains '*' or '?'`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.TimeoutVar: "2s"}, "IDEMPOTENCY_FUNCTION_TIMEOUT: Timeout 2s is too short"},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.PartitionKeyVar: "status"}, `IDEMPOTENCY_TABLE_PARTITION_KEY: TablePartitionKey "status" is an attribute of the idempotency record`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.SortKeyVar: "sk"}, `IDEMPOTENCY_TABLE_SORT_KEY: TableSortKey "sk" needs TableFixedKeyValue`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.SortKeyVar: "sk", contract.FixedKeyValueVar: "v", contract.TTLAttributeVar: "sk"}, `IDEMPOTENCY_TABLE_SORT_KEY: TableSortKey and TableTTLAttribute are both "sk"`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.RecordKeyInVar: "sort"}, `IDEMPOTENCY_TABLE_RECORD_KEY_IN: TableRecordKeyIn is "sort" (TableKeyInSortKey), but TableSortKey is empty`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.RecordKeyInVar: "left"}, `IDEMPOTENCY_TABLE_RECORD_KEY_IN: TableRecordKeyIn "left" is not a place of the record key`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.FixedKeyValueVar: "v"}, `IDEMPOTENCY_TABLE_FIXED_KEY_VALUE: TableFixedKeyValue "v" is given, but TableSortKey is empty`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.SortKeyVar: "sk", contract.FixedKeyValueVar: strings.Repeat("v", 1025)}, `IDEMPOTENCY_TABLE_FIXED_KEY_VALUE: TableFixedKeyValue is 1025 bytes, longer than DynamoDB's sort key value (1024 bytes)`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c", contract.TTLAttributeVar: strings.Repeat("t", 256)}, `IDEMPOTENCY_TABLE_TTL_ATTRIBUTE: TableTTLAttribute "ttttt`},
		{map[string]string{contract.TableVar: "t", contract.NamespaceVar: strings.Repeat("n", 1023), contract.ConsumerVar: "c", contract.SortKeyVar: "sk", contract.FixedKeyValueVar: "v", contract.RecordKeyInVar: "sort"}, `IDEMPOTENCY_NAMESPACE: Namespace of 1023 bytes leaves no room for a key in the sort key`},
	} {
		_, err := contract.Decode(func(k string) string { return tc.env[k] }, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%v): %v; want %q", tc.env, err, tc.want)
		}
	}
}

// TestTheDefaultDesignIsNotWritten: the design of the table the construct
// creates (partition key "pk", no sort key, TTL on "ttl") is what a handler
// assumes without a variable, so Encode writes none of the design's
// variables for it (the templates of such consumers say nothing of it),
// and writes each that differs.
func TestTheDefaultDesignIsNotWritten(t *testing.T) {
	design := []string{contract.PartitionKeyVar, contract.SortKeyVar, contract.RecordKeyInVar, contract.FixedKeyValueVar, contract.TTLAttributeVar}
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
	if s.TablePartitionKey != "pk" || s.TableSortKey != "" || s.TableRecordKeyIn != contract.KeyInPartition || s.TableFixedKeyValue != "" || s.TableTTLAttribute != "ttl" {
		t.Fatalf("the default design is %+v", s)
	}
	env := s.Encode()
	for _, v := range design {
		if got, ok := env[v]; ok {
			t.Errorf("the default design writes %s=%q", v, got)
		}
	}
	s.TablePartitionKey, s.TableSortKey, s.TableRecordKeyIn, s.TableFixedKeyValue, s.TableTTLAttribute = "PK", "SK", contract.KeyInSort, "IDEMPOTENCY", "expiry"
	env = s.Encode()
	for _, v := range design {
		if env[v] == "" {
			t.Errorf("a design of the app's own writes no %s: %v", v, env)
		}
	}
}

// TestShortTimeoutSpeaksOfTimeout: a Timeout too short for the defaults it
// implies is one problem about Timeout, with the shortest that works, and
// that Timeout is valid; a Timeout short beside settings the user chose
// keeps the rules about those.
func TestShortTimeoutSpeaksOfTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		s := contract.Defaults(timeout)
		s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
		problems := s.Problems()
		want := fmt.Sprintf("Timeout %s is too short", contract.Format(timeout))
		if len(problems) != 1 || !strings.HasPrefix(problems[0], want) || !strings.HasSuffix(problems[0], "give at least 4s") {
			t.Errorf("Timeout %s: %q; want one problem %q … give at least 4s", timeout, problems, want)
		}
		for _, p := range problems {
			for _, never := range []string{"LeaseMax", "FinishBudget", "MinRemaining"} {
				if strings.Contains(p, never) {
					t.Errorf("Timeout %s: %q speaks of %s, which the user did not set", timeout, p, never)
				}
			}
		}
		fixed := contract.Defaults(4 * time.Second)
		fixed.Table, fixed.Namespace, fixed.Consumer = "t", "ns", "c"
		if err := fixed.Validate(); err != nil {
			t.Errorf("the Timeout the message gives does not work: %v", err)
		}
	}
	s := contract.Defaults(5 * time.Second)
	s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
	s.MinRemaining = 10 * time.Second
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "MinRemaining 10s is not less than Timeout 5s") {
		t.Errorf("a MinRemaining the user set: %v", err)
	}
}

// update rewrites docs/contract.md's table of variables from the contract.
var update = flag.Bool("update", false, "rewrite docs/contract.md's table of the contract's variables")

// contractPage is the page whose table lists the contract's variables.
const contractPage = "../../docs/contract.md"

// TestREADMEListsEveryVariable: the docs' table of the environment
// variables of a handler deployed by other means (docs/contract.md) is the
// contract's list: one row per variable, with its prop, default and doc as
// the list gives them.
func TestREADMEListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile(contractPage)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- contract variables: begin -->\n", "<!-- contract variables: end -->"
	i, j := bytes.Index(readme, []byte(begin)), bytes.Index(readme, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("docs/contract.md has no %q … %q section", begin, end)
	}
	want := readmeTable()
	if *update {
		out := append(append(append([]byte(nil), readme[:i+len(begin)]...), want...), readme[j:]...)
		if err := os.WriteFile(contractPage, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(readme[i+len(begin) : j]); got != want {
		var listed []string
		for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z_]+)`").FindAllStringSubmatch(got, -1) {
			listed = append(listed, m[1])
		}
		t.Errorf("docs/contract.md lists %v; the contract has %v. The table, from contract.Fields (go test ./internal/contract -run README -update writes it):\n%s", listed, contract.Names(), want)
	}
}

// readmeTable is docs/contract.md's table of the contract's variables.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| Variable | Construct prop | Default | What |\n| --- | --- | --- | --- |\n")
	fmt.Fprintf(&b, "| `%s` | the construct itself | `%d` | the contract's version; a handler refuses another |\n", contract.VersionVar, contract.Version)
	for _, f := range contract.Fields() {
		prop := "`" + f.Prop + "`"
		if strings.HasPrefix(f.Prop, "the ") {
			prop = f.Prop
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s (%s) |\n", f.Var, prop, f.Default, strings.ReplaceAll(f.Doc, `"`, "`"), f.Encoding)
	}
	return b.String()
}

// TestFillIsDecodeOfTypedValues: Fill, given a value for one entry (its
// example) and for the required ones, returns what Decode returns for the
// environment that carries the same: each entry's value lands in its own
// field, and the defaults follow the values given above them (LeaseMax the
// Timeout given, MinRemaining the FinishBudget given), as Decode's do. An
// example that is valid only with others (a sort key with its fixed value)
// is given with every entry's.
func TestFillIsDecodeOfTypedValues(t *testing.T) {
	all := map[string]string{}
	for _, f := range contract.Fields() {
		all[f.Var] = f.Example
	}
	for _, f := range contract.Fields() {
		t.Run(f.Setting, func(t *testing.T) {
			env := map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", f.Var: f.Example}
			want, err := contract.Decode(func(k string) string { return env[k] }, "fallback")
			if err != nil {
				env = all
				if want, err = contract.Decode(func(k string) string { return env[k] }, "fallback"); err != nil {
					t.Fatalf("Decode with %s=%q, alone or with every example: %v", f.Var, f.Example, err)
				}
			}
			got := contract.Fill(func(g contract.Field) (any, bool) {
				if _, given := env[g.Var]; !given && g.Var != contract.ConsumerVar {
					return nil, false
				}
				return reflect.ValueOf(want).FieldByName(g.Setting).Interface(), true
			})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Fill with %s = %s:\n got %+v\nwant %+v", f.Setting, f.Example, got, want)
			}
		})
	}
	lease := contract.Fill(func(f contract.Field) (any, bool) {
		switch f.Setting {
		case "Timeout":
			return 10 * time.Minute, true
		case "FinishBudget":
			return 3 * time.Second, true
		}
		return nil, false
	})
	if lease.LeaseMax != 10*time.Minute || lease.MinRemaining != contract.DefaultMinRemaining(3*time.Second) {
		t.Errorf("LeaseMax %s, MinRemaining %s: want the defaults of the Timeout and FinishBudget given", lease.LeaseMax, lease.MinRemaining)
	}
	if d := contract.Defaults(time.Minute); !reflect.DeepEqual(d, contract.Fill(func(f contract.Field) (any, bool) { return time.Minute, f.Setting == "Timeout" })) {
		t.Errorf("Defaults(1m) = %+v, not Fill of the timeout alone", d)
	}
}

// TestFillRefusesAValueOfAnotherType: a value of another type than the
// setting's is the caller's mistake, and Fill says which setting takes
// which type.
func TestFillRefusesAValueOfAnotherType(t *testing.T) {
	defer func() {
		if r := fmt.Sprint(recover()); !strings.Contains(r, "Window is a time.Duration, not a string") {
			t.Errorf("panic %q, want it to name the setting and both types", r)
		}
	}()
	contract.Fill(func(f contract.Field) (any, bool) { return "1h", f.Setting == "Window" })
}
