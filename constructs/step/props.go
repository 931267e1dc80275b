package step

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
)

// IdempotentStepProps configure an IdempotentStep. Every optional prop
// documents its default as behaviour.
type IdempotentStepProps struct {
	// Props are the settings every construct of the family shares: Entry
	// (its main calls step.Start), the table and its design, Namespace,
	// Window, the function, its logs and alarms. Window's default is a
	// step's: 15 days, the 14 days in which a
	// Standard execution may be redriven and a day, so that a redriven step
	// finds the record of its effect. An Express workflow, never redriven,
	// may give the family's day.
	core.Props

	// StepName is the step's name, part of every record key
	// ("<Namespace>#<StepName>#<key>"): the name of its state
	// ("reserve-stock"). A compensation is another step over the same fact
	// ("release-stock"). At most 80 bytes, without '#' or control
	// characters. Required.
	StepName *string
	// PayloadIgnore lists JSON fields of the state input left out of the
	// payload hash: a field that differs between two executions of one
	// fact (a producer's timestamp, an execution's name) would otherwise
	// make the second a payload mismatch. Default: none.
	PayloadIgnore *[]*string
}

// kind is the step, to the family's core.
var kind = family.Kind{
	Name:        "IdempotentStep",
	Noun:        "idempotent step",
	FunctionID:  ids.Function,
	Timeout:     family.DefaultTimeout,
	ReservedWhy: ", or leave it nil for none",
	InvokedBy:   "The function is only invoked synchronously, by its Step Functions Task state: a failure is the state's error, which its Retry and Catch handle, and a failed execution is redriven; there is no asynchronous event to dead-letter.",
}

// settings are the props resolved; a step adds nothing to the family's but
// its name, which the runtime contract carries.
type settings struct {
	*family.Settings
}

// resolve computes the settings and checks them (the family's rules and
// the contract's, which judge StepName): every problem at once.
func (p *IdempotentStepProps) resolve(id string) (*settings, error) {
	name := ""
	if p.StepName != nil {
		name = *p.StepName
	}
	own := map[string]any{
		contract.SourceVar:   contract.SourceStep,
		contract.StepNameVar: name,
		contract.WindowVar:   steptask.DefaultWindow,
	}
	if p.PayloadIgnore != nil {
		var fields []string
		for _, f := range *p.PayloadIgnore {
			if f != nil {
				fields = append(fields, *f)
			}
		}
		own[contract.PayloadIgnoreVar] = fields
	}
	s := &settings{family.Resolve(kind, id, &p.Props, func(f contract.Field) (any, bool) {
		v, ok := own[f.Var]
		return v, ok
	})}
	mine, _ := family.Evaluate(s, rules)
	if err := family.Fail(kind, id, append(s.Problems(), mine...)); err != nil {
		return nil, err
	}
	return s, nil
}

// rules are the step's own rules, after the family's.
var rules = []family.Rule[*settings]{
	{Reads: []string{"TransactionalTables"}, Check: family.Problem(txProblems)},
	{Reads: []string{"Dashboard"}, Check: family.Problem(dashboardProblems)},
	{Reads: []string{"LogLevel"}, Check: family.Problem(logLevelProblems)},
}

// dashboardProblems refuses Dashboard: a step has no dashboard of its own
// (its alarms and the state machine's execution history are where it is
// watched), and a setting the construct would ignore is refused, not
// dropped.
func dashboardProblems(s *settings) []string {
	if !s.Dashboard {
		return nil
	}
	return []string{"Dashboard is set, but a step has no dashboard of its own: its alarms count its log lines, and the state machine's executions show each attempt; leave it out"}
}

// logLevelProblems refuses FATAL: the step's alarms count the lines it
// writes at ERROR (a mismatched payload, a lost lease, bad input, an
// output not stored), which Lambda drops at FATAL, so those alarms could
// never fire.
func logLevelProblems(s *settings) []string {
	if s.LogLevel != awslambda.ApplicationLogLevel_FATAL {
		return nil
	}
	return []string{fmt.Sprintf("LogLevel %s drops the ERROR lines that the step's alarms count (PayloadMismatch, LeaseLost, BadInput, OutputNotStored), so they could never fire; give ERROR or lower, or leave it empty for INFO", s.LogLevel)}
}

// txProblems refuses TransactionalTables: a step's effect (step.Effect)
// has no transaction to write in, so the tables would be declared to a
// handler that never writes them.
func txProblems(s *settings) []string {
	if len(s.TxTables) == 0 {
		return nil
	}
	return []string{"TransactionalTables is given, but a step's effect is not transactional (step.Effect commits nothing with its record); leave it out, and grant the step's Role what its effect writes"}
}
