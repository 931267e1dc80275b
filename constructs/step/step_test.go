package step_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/step"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step/states"
)

var handlerDir string

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "step-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := consumertest.WriteHandlers(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	handlerDir = h.Handler
	code := cdktest.Main(m)
	os.RemoveAll(tmp)
	os.Exit(code)
}

func newStack(t *testing.T) awscdk.Stack {
	t.Helper()
	app, err := cdktest.NewApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return awscdk.NewStack(app, jsii.String("Saga"), nil)
}

func resources(tpl map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, r := range tpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == typ {
			out = append(out, r["Properties"].(map[string]any))
		}
	}
	return out
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestStepAndItsTask: the step's function carries the contract of a step
// (its source, its name, a window that outlasts a redrive), its role may
// use the table alone, and its Task state invokes it by ARN (the state's
// output is the step's), with the Retry of steptask.Retriers for the
// function's timeout and the TimeoutSeconds of steptask.TaskTimeout; the
// alarms watch the step's log lines.
func TestStepAndItsTask(t *testing.T) {
	st := newStack(t)
	cdktest.Must(t, func() {
		s := step.NewIdempotentStep(st, jsii.String("ReserveStock"), &step.IdempotentStepProps{
			Props:    core.Props{Entry: jsii.String(handlerDir), Namespace: jsii.String("orders")},
			StepName: jsii.String("reserve-stock"),
		})
		task := s.Task(st, jsii.String("Reserve"), &step.TaskProps{ResultPath: jsii.String("$.reservation")})
		awsstepfunctions.NewStateMachine(st, jsii.String("Saga"), &awsstepfunctions.StateMachineProps{
			DefinitionBody: awsstepfunctions.DefinitionBody_FromChainable(task),
		})
		if len(s.Alarms().All()) != 6 || *s.StepName() != "reserve-stock" || *s.Namespace() != "orders" {
			t.Errorf("alarms %d, step %q, namespace %q", len(s.Alarms().All()), *s.StepName(), *s.Namespace())
		}
	})
	tpl := cdktest.Template(t, st)
	fns := resources(tpl, "AWS::Lambda::Function")
	if len(fns) != 1 {
		t.Fatalf("functions: %d", len(fns))
	}
	env := fns[0]["Environment"].(map[string]any)["Variables"].(map[string]any)
	if env[contract.SourceVar] != "step" || env[contract.StepNameVar] != "reserve-stock" || env[contract.WindowVar] != contract.Format(steptask.DefaultWindow) {
		t.Errorf("environment: %s", js(env))
	}
	policies := js(resources(tpl, "AWS::IAM::Policy"))
	if !strings.Contains(policies, "dynamodb:PutItem") {
		t.Errorf("the role cannot write the table: %s", policies)
	}
	if strings.Contains(policies, "dynamodb:*") || strings.Contains(policies, "dynamodb:Scan") {
		t.Errorf("the role may do more than the store does: %s", policies)
	}
	sm := resources(tpl, "AWS::StepFunctions::StateMachine")
	if len(sm) != 1 {
		t.Fatalf("state machines: %d", len(sm))
	}
	def := definition(t, tpl, sm[0])
	state := def["States"].(map[string]any)["Reserve"].(map[string]any)
	if state["Type"] != "Task" || !strings.Contains(js(state["Resource"]), "ReserveStockFunction") || state["ResultPath"] != "$.reservation" {
		t.Errorf("the task does not invoke the function by its ARN: %s", js(state))
	}
	if state["TimeoutSeconds"] != steptask.TaskTimeout(family.DefaultTimeout).Seconds() {
		t.Errorf("TimeoutSeconds %v, want %v", state["TimeoutSeconds"], steptask.TaskTimeout(family.DefaultTimeout).Seconds())
	}
	retry := state["Retry"].([]any)
	want := steptask.Retriers(family.DefaultTimeout)
	if len(retry) != len(want) {
		t.Fatalf("Retry %s, want %d retriers", js(retry), len(want))
	}
	for i, w := range want {
		r := retry[i].(map[string]any)
		if js(r["ErrorEquals"]) != js(w.ErrorEquals) || r["MaxAttempts"] != float64(w.MaxAttempts) || r["IntervalSeconds"] != float64(w.IntervalSeconds) || r["BackoffRate"] != w.BackoffRate {
			t.Errorf("retrier %d: %s, want %+v", i, js(r), w)
		}
		if w.MaxDelaySeconds > 0 && r["MaxDelaySeconds"] != float64(w.MaxDelaySeconds) {
			t.Errorf("retrier %d: MaxDelaySeconds %v, want %d", i, r["MaxDelaySeconds"], w.MaxDelaySeconds)
		}
	}
	filters := js(resources(tpl, "AWS::Logs::MetricFilter"))
	for _, want := range []string{`$.outcome = \"` + outcome.Mismatch.String() + `\"`, `$.outcome = \"` + outcome.LeaseLost.String() + `\"`, `$.error = \"` + states.ErrorStore + `\"`, `$.step = \"reserve-stock\"`} {
		if !strings.Contains(filters, want) {
			t.Errorf("no metric filter on %s: %s", want, filters)
		}
	}
	cdktest.Snapshot(t, tpl, "testdata/Step.template.json")
}

// definition returns the state machine's definition, which CDK writes as
// an Fn::Join of strings and tokens: the tokens are written as their JSON.
func definition(t *testing.T, tpl map[string]any, sm map[string]any) map[string]any {
	t.Helper()
	parts := sm["DefinitionString"].(map[string]any)["Fn::Join"].([]any)[1].([]any)
	var b strings.Builder
	for _, p := range parts {
		if s, ok := p.(string); ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(strings.ReplaceAll(js(p), `"`, `'`))
	}
	var def map[string]any
	if err := json.Unmarshal([]byte(b.String()), &def); err != nil {
		t.Fatalf("definition %s: %v", b.String(), err)
	}
	return def
}

// TestRefusals: a step without a name, or with one that a record key
// cannot hold, and a contract variable in Environment are refused, naming
// the construct and the fix.
func TestRefusals(t *testing.T) {
	s0 := newStack(t)
	for _, c := range []struct {
		name  string
		props *step.IdempotentStepProps
		want  []string
	}{
		{"no name", &step.IdempotentStepProps{Props: core.Props{Entry: jsii.String(handlerDir)}}, []string{"the step's name is empty"}},
		{"a '#' in the name", &step.IdempotentStepProps{Props: core.Props{Entry: jsii.String(handlerDir)}, StepName: jsii.String("reserve#stock")}, []string{`StepName "reserve#stock"`, "holds '#'"}},
		{"the contract in Environment", &step.IdempotentStepProps{
			Props:    core.Props{Entry: jsii.String(handlerDir), Environment: &map[string]*string{contract.StepNameVar: jsii.String("x")}},
			StepName: jsii.String("charge"),
		}, []string{"Environment sets STEP_NAME", "use StepName instead"}},
		{"transactional tables", &step.IdempotentStepProps{
			Props:    core.Props{Entry: jsii.String(handlerDir), TransactionalTables: &[]awsdynamodb.ITable{awsdynamodb.Table_FromTableName(s0, jsii.String("Ledger"), jsii.String("ledger"))}},
			StepName: jsii.String("charge"),
		}, []string{"TransactionalTables is given, but a step's effect is not transactional"}},
		{"a dashboard", &step.IdempotentStepProps{
			Props:    core.Props{Entry: jsii.String(handlerDir), Dashboard: jsii.Bool(true)},
			StepName: jsii.String("charge"),
		}, []string{"Dashboard is set, but a step has no dashboard of its own"}},
		{"a log level that drops what the alarms count", &step.IdempotentStepProps{
			Props:    core.Props{Entry: jsii.String(handlerDir), LogLevel: awslambda.ApplicationLogLevel_FATAL},
			StepName: jsii.String("charge"),
		}, []string{"LogLevel FATAL drops the ERROR lines"}},
		{"an eventual global table", &step.IdempotentStepProps{
			Props: core.Props{Entry: jsii.String(handlerDir), Namespace: jsii.String("charge"), Table: awsdynamodb.NewTableV2(awscdk.NewStack(nil, jsii.String("Global"), &awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String("eu-west-1")}}), jsii.String("T"), &awsdynamodb.TablePropsV2{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
				Replicas:     &[]*awsdynamodb.ReplicaTableProps{{Region: jsii.String("eu-west-2")}},
			})},
			StepName: jsii.String("charge"),
		}, []string{"Table Global/T is a global table in multi-Region eventual consistency (MREC) across 2 Regions (eu-west-1, eu-west-2)", "its effect runs twice", "or set SingleWritingRegion"}},
		{"an MRSC table without its name", &step.IdempotentStepProps{
			Props:    core.Props{Entry: jsii.String(handlerDir), GlobalTable: &core.GlobalTable{Regions: jsii.Strings("eu-west-1", "eu-west-2", "eu-central-1")}},
			StepName: jsii.String("charge"),
		}, []string{"GlobalTable.TableName is required without Table"}},
		{"a window shorter than the lease", &step.IdempotentStepProps{
			Props:    core.Props{Entry: jsii.String(handlerDir), Window: awscdk.Duration_Seconds(jsii.Number(1))},
			StepName: jsii.String("charge"),
		}, []string{"Window 1s is shorter than"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStack(t)
			msg, panicked := cdktest.Panics(func() { step.NewIdempotentStep(s, jsii.String("Bad"), c.props) })
			if !panicked {
				t.Fatal("not refused")
			}
			for _, w := range append(c.want, `IdempotentStep "Bad"`) {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, msg)
				}
			}
		})
	}
}
