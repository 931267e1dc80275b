package consumer

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestEverySettingIsReadOrExplicit: every entry of the contract is either
// read from its prop by the one code path (directProps) or set by the
// construct itself for a stated reason (explicitSettings), never neither:
// an entry added to contract.Fields whose Prop is not a prop of a plain kind
// of the setting's type fails here until it has a prop or a reason. The
// lists of reasons name only entries of the contract.
func TestEverySettingIsReadOrExplicit(t *testing.T) {
	settings := map[string]bool{}
	for _, f := range contract.Fields() {
		settings[f.Setting] = true
		_, direct := directProps[f.Setting]
		why, explicit := explicitSettings[f.Setting]
		switch {
		case sharedSetting(f):
			// A shared prop (core.Props): the family's core reads it
			// (family.Resolve), for every construct.
		case !direct && !explicit:
			kind := "no field " + f.Prop
			if prop, ok := reflect.TypeFor[IdempotentConsumerProps]().FieldByName(f.Prop); ok {
				kind = fmt.Sprintf("%s, a %s", f.Prop, prop.Type)
			}
			setting, _ := reflect.TypeFor[contract.Settings]().FieldByName(f.Setting)
			t.Errorf("%s (a %s, prop %q) is neither read from a prop nor set by the construct: IdempotentConsumerProps has %s; give it a field %s of the plain kind that reads into a %s (awscdk.Duration, *float64, *string, *[]*string or *bool for time.Duration, int, string, []string or bool), or list %s in explicitSettings with the reason",
				f.Setting, setting.Type, f.Prop, kind, f.Prop, setting.Type, f.Setting)
		case direct && explicit:
			t.Errorf("%s is both read from %s and explicit (%s)", f.Setting, f.Prop, why)
		case explicit && why == "":
			t.Errorf("%s is explicit without a reason", f.Setting)
		}
	}
	for name := range explicitSettings {
		if !settings[name] {
			t.Errorf("explicitSettings names %s, which is no entry of the contract", name)
		}
	}
	for name, d := range constructDefaults {
		if _, direct := directProps[name]; !direct || d.why == "" {
			t.Errorf("constructDefaults has %s (%q): want a setting read from its prop, with the reason", name, d.why)
		}
	}
	if _, ok := directProps["BackoffBase"]; !ok || len(directProps) < 8 {
		t.Fatalf("directProps = %v: the test is not reading the props", directProps)
	}
}

// TestNoDefaultFollowsAnExplicitSetting: the construct sets the explicit
// settings after contract.Fill, which is right only while no default of
// the contract depends on them. Giving Fill an explicit setting's example
// changes that setting alone; a default that came to follow one would fail
// here, and the setting would have to reach Fill instead.
func TestNoDefaultFollowsAnExplicitSetting(t *testing.T) {
	none := contract.Fill(func(contract.Field) (any, bool) { return nil, false })
	env := map[string]string{}
	for _, f := range contract.Fields() {
		env[f.Var] = f.Example
	}
	examples, err := contract.Decode(func(k string) string { return env[k] }, "C")
	if err != nil {
		t.Fatal(err)
	}
	for name := range explicitSettings {
		f, _ := fieldOfSetting(name)
		v := reflect.ValueOf(examples).FieldByName(name)
		got := contract.Fill(func(g contract.Field) (any, bool) { return v.Interface(), g.Setting == name })
		reflect.ValueOf(&got).Elem().FieldByName(name).Set(reflect.ValueOf(none).FieldByName(name))
		if !reflect.DeepEqual(got, none) {
			t.Errorf("%s = %s changes other settings:\n got %+v\nwant %+v", name, f.Example, got, none)
		}
	}
}

// TestEveryDirectPropReachesItsSetting: for every setting read from its
// prop, the prop set to the entry's example reaches the handler's
// environment as that example; a duration or a count given as a token, or
// a count that is not whole, is refused by name and leaves the default.
func TestEveryDirectPropReachesItsSetting(t *testing.T) {
	token := func() *float64 { return awscdk.Token_AsNumber(awscdk.Fn_ImportValue(jsii.String("Value"))) }
	defaults, _ := (&IdempotentConsumerProps{}).compute("C")
	for name, prop := range directProps {
		f, _ := fieldOfSetting(name)
		t.Run(name, func(t *testing.T) {
			set := func(v any) *IdempotentConsumerProps {
				p := &IdempotentConsumerProps{}
				reflect.ValueOf(p).Elem().FieldByIndex(prop.Index).Set(reflect.ValueOf(v))
				return p
			}
			var example any
			type unreadableValue struct {
				what string // the value, in words
				v    any
				want string // the problem it makes
			}
			var unreadable []unreadableValue
			switch prop.Type {
			case reflect.TypeFor[awscdk.Duration]():
				d, err := time.ParseDuration(f.Example)
				if err != nil {
					t.Fatal(err)
				}
				example = awscdk.Duration_Millis(jsii.Number(float64(d.Milliseconds())))
				unreadable = []unreadableValue{{"a token", awscdk.Duration_Seconds(token()), f.Prop + " is a token that CDK resolves only at deployment, but the construct needs its value to check it"}}
			case reflect.TypeFor[*float64]():
				n, err := strconv.Atoi(f.Example)
				if err != nil {
					t.Fatal(err)
				}
				example = jsii.Number(float64(n))
				unreadable = []unreadableValue{
					{"a token", token(), f.Prop + " is a token that CDK resolves only at deployment, but the construct needs its value; give a number"},
					{"1.5", jsii.Number(1.5), f.Prop + " 1.5 is not a whole number in range; give a whole number"},
				}
			case reflect.TypeFor[*string]():
				example = jsii.String(f.Example)
			case reflect.TypeFor[*[]*string]():
				example = jsii.Strings(strings.Split(f.Example, ",")...)
			case reflect.TypeFor[*bool]():
				example = jsii.Bool(f.Example == "true")
			default:
				t.Fatalf("prop %s is a %s", f.Prop, prop.Type)
			}
			s, problems := set(example).compute("C")
			if got := s.Runtime.Encode()[f.Var]; len(problems) > 0 || got != f.Example {
				t.Errorf("%s set to the example: %s=%q (%v), want %q", f.Prop, f.Var, got, problems, f.Example)
			}
			if defaults.Runtime.Encode()[f.Var] == f.Example {
				t.Errorf("the example of %s is its default: the case proves nothing", f.Var)
			}
			for _, u := range unreadable {
				s, problems := set(u.v).compute("C")
				if len(problems) != 1 || !strings.Contains(problems[0], u.want) {
					t.Errorf("%s = %s: problems %q, want one saying %q", f.Prop, u.what, problems, u.want)
				}
				if !reflect.DeepEqual(s.Runtime, defaults.Runtime) {
					t.Errorf("%s = %s: the runtime is %+v, want the defaults %+v", f.Prop, u.what, s.Runtime, defaults.Runtime)
				}
			}
		})
	}
}

// fieldOfSetting returns the contract's entry of the setting name.
func fieldOfSetting(name string) (contract.Field, bool) {
	for _, f := range contract.Fields() {
		if f.Setting == name {
			return f, true
		}
	}
	return contract.Field{}, false
}

// TestListsReachTheRulesAsGiven: a list prop reaches the settings name by
// name, not through its comma-separated encoding, so that the rules see a
// name with ',' (which the encoding would split into two names) and a nil
// name (which it would drop), and refuse them.
func TestListsReachTheRulesAsGiven(t *testing.T) {
	for _, tc := range []struct {
		what  string
		names *[]*string
		want  string
	}{
		{`["meta,sentAt"]`, jsii.Strings("meta,sentAt"), `PayloadIgnore has the field name "meta,sentAt"`},
		{`[nil]`, &[]*string{nil}, `PayloadIgnore has the field name ""`},
		{`["traceId", nil]`, &[]*string{jsii.String("traceId"), nil}, `PayloadIgnore has the field name ""`},
	} {
		s, problems := (&IdempotentConsumerProps{PayloadIgnore: tc.names}).compute("C")
		if rules := strings.Join(s.Runtime.Problems(), "\n"); len(problems) > 0 || !strings.Contains(rules, tc.want) {
			t.Errorf("PayloadIgnore %s: settings %q, problems %v, rules:\n%s\nwant %q", tc.what, s.Runtime.PayloadIgnore, problems, rules, tc.want)
		}
	}
}
