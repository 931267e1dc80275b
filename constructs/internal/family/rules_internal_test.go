package family

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/contract"
)

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

func wantProblem(t *testing.T, got []string, want []string) {
	t.Helper()
	if want == nil {
		if len(got) != 0 {
			t.Fatalf("refused, want accepted:\n%s", strings.Join(got, "\n"))
		}
		return
	}
	if len(got) != 1 {
		t.Fatalf("%d problems, want 1: %q", len(got), got)
	}
	for _, w := range want {
		if !strings.Contains(got[0], w) {
			t.Errorf("problem %q\ndoes not say %q", got[0], w)
		}
	}
}

func wantWarning(t *testing.T, got []Warning, id string, want []string) {
	t.Helper()
	if want == nil {
		if len(got) != 0 {
			t.Fatalf("warned, want no warning: %+v", got)
		}
		return
	}
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("warnings %+v, want one %s", got, id)
	}
	for _, w := range want {
		if !strings.Contains(got[0].Message, w) {
			t.Errorf("warning %q\ndoes not say %q", got[0].Message, w)
		}
	}
}

func TestLogLevelMustBeLambdas(t *testing.T) {
	wantProblem(t, logLevelProblems(&Settings{functionSettings: functionSettings{LogLevel: "VERBOSE"}}),
		[]string{`LogLevel "VERBOSE" is not one of Lambda's application log levels (TRACE, DEBUG, INFO, WARN, ERROR, FATAL)`, "leave it empty for INFO"})
	wantProblem(t, logLevelProblems(&Settings{functionSettings: functionSettings{LogLevel: "warn"}}), []string{`LogLevel "warn"`})
	for _, l := range applicationLogLevels {
		wantProblem(t, logLevelProblems(&Settings{functionSettings: functionSettings{LogLevel: l}}), nil)
	}
	// The default, applied by Resolve, is one.
	if s := Resolve(Kind{Name: "K"}, "c", &core.Props{}, nil); s.LogLevel != DefaultLogLevel {
		t.Errorf("default LogLevel %q", s.LogLevel)
	}
}

func TestLayerMustBeBuiltForTheFunctionsArchitecture(t *testing.T) {
	at := func(arch awslambda.Architecture, archs ...string) *Settings {
		return &Settings{functionSettings: functionSettings{Architecture: arch, Goarch: "set", layers: []layerInfo{{path: "S/Agent", archs: archs, known: true}}}}
	}
	arm, x86 := awslambda.Architecture_ARM_64(), awslambda.Architecture_X86_64()
	check := func(s *Settings) []string { p, _ := layerFindings(s); return p }
	wantProblem(t, check(at(arm, "x86_64")),
		[]string{"Layers holds S/Agent, declared for x86_64 (its compatibleArchitectures), but the function is arm64", "give the layer built for arm64"})
	wantProblem(t, check(at(x86, "arm64")), []string{"declared for arm64", "the function is x86_64"})
	wantProblem(t, check(at(arm, "x86_64", "arm64")), nil)
	wantProblem(t, check(at(arm)), nil) // declares none
	_, w := layerFindings(&Settings{functionSettings: functionSettings{Architecture: arm, Goarch: "arm64", layers: []layerInfo{{arn: "arn:layer"}}}})
	wantWarning(t, w, core.WarnLayerUnreadable, []string{"imported layer arn:layer", "must be built for arm64"})
}

func TestSharedTableTTLMustBeTheRecords(t *testing.T) {
	stack := awscdk.NewStack(awscdk.NewApp(nil), jsii.String("S"), nil)
	shop := awsdynamodb.NewTable(stack, jsii.String("Shop"), &awsdynamodb.TableProps{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING}})
	for _, tc := range []struct {
		name             string
		ttl              tableTTL
		problem, warning []string
	}{
		{name: "another attribute", ttl: tableTTL{attribute: "expiresAt", enabled: true, known: true},
			problem: []string{`Table S/Shop has its TTL on the attribute "expiresAt", but TableTTLAttribute is "ttl"`, "never be deleted", `leave TableTTLAttribute nil`, `or give "expiresAt"`}},
		{name: "the records' attribute", ttl: tableTTL{attribute: "ttl", enabled: true, known: true}},
		{name: "another attribute, disabled", ttl: tableTTL{attribute: "expiresAt", known: true}, warning: []string{"Table S/Shop has no TTL"}},
		{name: "no TTL", ttl: tableTTL{known: true}, warning: []string{"Table S/Shop has no TTL", `set TimeToLiveAttribute "ttl"`}},
		{name: "imported", ttl: tableTTL{}, warning: []string{"Table S/Shop is imported", `enable its TTL on the attribute "ttl"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Settings{Table: shop, tableTTL: tc.ttl}
			s.Runtime.TableTTLAttribute = contract.TTLAttribute
			problems, warnings := ttlFindings(s)
			wantProblem(t, problems, tc.problem)
			wantWarning(t, warnings, core.WarnTableTTL, tc.warning)
		})
	}
}

// TestImportedTableWarningNamesTheSchemaItAssumes: an imported table's key
// schema cannot be read, so the warning says what the handler will write:
// the construct's design, or the one the props declare.
func TestImportedTableWarningNamesTheSchemaItAssumes(t *testing.T) {
	stack := awscdk.NewStack(awscdk.NewApp(nil), jsii.String("S"), nil)
	imported := awsdynamodb.Table_FromTableName(stack, jsii.String("Ledger"), jsii.String("ledger"))
	own := Resolve(Kind{Name: "K"}, "c", &core.Props{Table: imported, Namespace: jsii.String("ledger")}, nil)
	wantWarning(t, importedTableWarnings(own), core.WarnTableImported, []string{"Table S/Ledger is imported", "[HASH pk (S)]", "declare the table's design"})
	single := Resolve(Kind{Name: "K"}, "c", &core.Props{Table: imported, Namespace: jsii.String("ledger"),
		TablePartitionKey: jsii.String("PK"), TableSortKey: jsii.String("SK"), TableFixedKeyValue: jsii.String("IDEMPOTENCY")}, nil)
	wantWarning(t, importedTableWarnings(single), core.WarnTableImported, []string{"[HASH PK (S), RANGE SK (S)]", `the sort key "IDEMPOTENCY"`})
	if r := single.Runtime; r.TablePartitionKey != "PK" || r.TableSortKey != "SK" || r.TableFixedKeyValue != "IDEMPOTENCY" {
		t.Errorf("the declared design is not the runtime's: %+v", r)
	}
	defined := awsdynamodb.NewTable(stack, jsii.String("Defined"), &awsdynamodb.TableProps{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING}})
	wantWarning(t, importedTableWarnings(Resolve(Kind{Name: "K"}, "c", &core.Props{Table: defined, Namespace: jsii.String("n")}, nil)), "", nil)
}

// TestRulesReadTheirProps: every rule names the props it reads, each a
// field of core.Props (or the runtime settings as a whole).
func TestRulesReadTheirProps(t *testing.T) {
	for i, r := range Rules {
		if len(r.Reads) == 0 || r.Check == nil {
			t.Errorf("rule %d reads nothing or checks nothing", i)
		}
		for _, name := range r.Reads {
			if name == "the runtime settings" {
				continue
			}
			if _, ok := propsType.FieldByName(name); !ok {
				t.Errorf("rule %d reads %q, not a field of core.Props", i, name)
			}
		}
	}
}

var propsType = reflect.TypeFor[core.Props]()

// TestEphemeralStorageMustBeLambdas: /tmp takes 512 to 10240 MiB, whole;
// nil is Lambda's default, written as nothing.
func TestEphemeralStorageMustBeLambdas(t *testing.T) {
	for v, bad := range map[float64]bool{511: true, 10241: true, 600.5: true, 512: false, 10240: false} {
		s := Resolve(Kind{Name: "K"}, "c", &core.Props{EphemeralStorageSize: jsii.Number(v)}, nil)
		if got := ephemeralStorageProblems(s); (len(got) > 0) != bad {
			t.Errorf("EphemeralStorageSize %v: problems %q", v, got)
		}
	}
	if s := Resolve(Kind{Name: "K"}, "c", &core.Props{}, nil); s.EphemeralStorage != 0 || len(ephemeralStorageProblems(s)) > 0 {
		t.Errorf("default: %v", s.EphemeralStorage)
	}
}
