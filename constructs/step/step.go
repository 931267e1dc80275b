// Package step provides IdempotentStep, an AWS CDK construct for a step of
// a saga on Step Functions whose Lambda function is written in Go with
// package lambda/step: the step member of the family of package
// constructs/consumer, on the same building blocks (the idempotency table
// and its namespace claim, the function, its role and log group, the
// bundled bootstrap, the runtime contract, the alarms).
//
// Step Functions invokes a step synchronously with the state input, and
// retries it after an error or a timeout, redrives a failed execution
// from the state that failed, and may start an Express workflow twice: the
// handler (step.Start) runs the step's effect once per fact and returns its
// stored output to every duplicate. Task returns the Task state that
// invokes the function, with the Retry policy that the step's error names
// ask and a timeout consistent with the lease; the state
// machine adds the Catch of its business failures. A compensation is a
// step of its own over the same fact (DESIGN.md, "Steps").
package step

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/function"
)

// IdempotentStep is an idempotent step of a state machine. It is an
// awsiam.IGrantable: its principal is the function's role.
type IdempotentStep interface {
	constructs.Construct
	awsiam.IGrantable

	// StepName is the step's name, part of its record keys.
	StepName() *string
	// Table holds the idempotency records.
	Table() awsdynamodb.ITable
	// Namespace is the key prefix of the step's records.
	Namespace() *string
	// Function is the handler.
	Function() awslambda.Function
	// Role is the function's execution role.
	Role() awsiam.IRole
	// LogGroup is the function's log group.
	LogGroup() awslogs.LogGroup
	// Alarms are the construct's alarms.
	Alarms() Alarms

	// Task returns a new Task state in scope, with the construct id id,
	// that invokes the step's function with the state input and whose
	// result is the step's output (PayloadResponseOnly: the function's
	// ARN as the state's Resource); with a Retry for the function's timeout
	// (Lambda's transient errors and the step's transient answers: 6
	// attempts from 1s, doubling; the timeouts and Step.InProgress: from 1s,
	// doubling, each wait at most half the function's timeout, until the
	// waits add up to twice the function's timeout, when the lease of the
	// invocation that holds the fact has ended) and a TimeoutSeconds of the
	// function's timeout and 10s for a cold start's init. Add the Catch of the step's
	// business failures (step.Fail's names) with AddCatch. props may be
	// nil.
	Task(scope constructs.Construct, id *string, props *TaskProps) awsstepfunctionstasks.LambdaInvoke
	// MetricLogged is the number of the step's log lines whose field
	// (outcome or error) is value, from a metric filter of its log group
	// (sum). It panics for a pair no alarm watches (see Alarms).
	MetricLogged(field, value string, props *awscloudwatch.MetricOptions) awscloudwatch.Metric
}

type idempotentStep struct {
	constructs.Construct
	name      string
	table     awsdynamodb.ITable
	namespace string
	fn        function.Function
	alarms    Alarms
	s         *settings
	filters   map[logged]awscloudwatch.Metric
}

// NewIdempotentStep creates the step in scope. It panics, as CDK
// constructs do, when the props are invalid (every problem, with the value
// given and the fix), or when the handler does not build.
func NewIdempotentStep(scope constructs.Construct, id *string, props *IdempotentStepProps) IdempotentStep {
	if props == nil {
		props = &IdempotentStepProps{}
	}
	s, err := props.resolve(*id)
	if err != nil {
		panic(err)
	}
	assetDir := s.Bundle()
	c := &idempotentStep{name: s.Runtime.StepName, namespace: s.Runtime.Namespace, s: s}
	constructs.NewConstruct_Override(c, scope, id)
	s.Runtime.Consumer = *c.Node().Path()
	c.table = s.NewTable(c)
	c.fn = s.NewFunction(c, assetDir, c.table)
	family.Warn(c, s.Warnings())
	s.SuppressWildcards(c.fn)
	c.addAlarms()
	return c
}

func (c *idempotentStep) StepName() *string                 { return jsii.String(c.name) }
func (c *idempotentStep) Table() awsdynamodb.ITable         { return c.table }
func (c *idempotentStep) Namespace() *string                { return jsii.String(c.namespace) }
func (c *idempotentStep) Function() awslambda.Function      { return c.fn.Function }
func (c *idempotentStep) Role() awsiam.IRole                { return c.fn.Role }
func (c *idempotentStep) LogGroup() awslogs.LogGroup        { return c.fn.LogGroup }
func (c *idempotentStep) Alarms() Alarms                    { return c.alarms }
func (c *idempotentStep) GrantPrincipal() awsiam.IPrincipal { return c.fn.Role.GrantPrincipal() }
