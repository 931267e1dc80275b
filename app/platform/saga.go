package platform

import (
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/saga/names"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/step"
)

// Saga is the order saga: a Standard state machine reserve stock → charge
// → ship, whose steps are IdempotentSteps, started for each OrderPlaced
// event on the platform's bus.
type Saga struct {
	// Machine is the state machine.
	Machine awsstepfunctions.StateMachine
	// Reserve, Charge and Ship are the forward steps; Refund and Release
	// the compensations (the same order under other step names).
	Reserve, Charge, Ship, Refund, Release step.IdempotentStep
	// Rule starts an execution per OrderPlaced event, with the event's
	// detail (the order) as its input; DeadLetters keeps the events it
	// could not start one for.
	Rule        awsevents.Rule
	DeadLetters awssqs.Queue
}

// stateFields are the fields of a step's input that are not the order:
// placedAt, which a producer's retry stamps anew (another event, so another
// execution, of the same order), and what the state machine adds beside the
// order (each step's ResultPath, a Catch's $.error). A step's payload hash
// is the order's alone, so that a duplicate execution that reaches a step
// by another path, or with another failure's message, is still a duplicate
// of the same fact, not a mismatch.
var stateFields = []string{"placedAt", "reservation", "charge", "shipment", "refund", "release", "error"}

// addSaga adds the order saga. The steps share one idempotency table,
// each under its own namespace (its step name), and ignore stateFields. Only the business failures are
// caught: a state whose retries run out fails the execution, to be
// redriven, rather than compensate an effect that a duplicate execution
// may still complete.
func (p *OrdersPlatform) addSaga(stack awscdk.Stack) {
	s := &Saga{}
	newStep := func(id, name, dir string) step.IdempotentStep {
		props := core.Props{Entry: jsii.String(filepath.Join("app", "cmd", "saga", dir)), Namespace: jsii.String(name)}
		if s.Reserve != nil {
			props.Table = s.Reserve.Table()
		}
		return step.NewIdempotentStep(stack, jsii.String(id), &step.IdempotentStepProps{Props: props, StepName: jsii.String(name), PayloadIgnore: jsii.Strings(stateFields...)})
	}
	s.Reserve = newStep("SagaReserveStock", names.Reserve, "reserve")
	s.Charge = newStep("SagaCharge", names.Charge, "charge")
	s.Ship = newStep("SagaShip", names.Ship, "ship")
	s.Refund = newStep("SagaRefund", names.Refund, "refund")
	s.Release = newStep("SagaReleaseStock", names.Release, "release")

	s.Machine = awsstepfunctions.NewStateMachine(stack, jsii.String("OrderSaga"), &awsstepfunctions.StateMachineProps{
		DefinitionBody:   awsstepfunctions.DefinitionBody_FromChainable(s.definition(stack)),
		StateMachineType: awsstepfunctions.StateMachineType_STANDARD,
		TracingEnabled:   jsii.Bool(true),
		Logs: &awsstepfunctions.LogOptions{
			Destination: awslogs.NewLogGroup(stack, jsii.String("OrderSagaLogs"), &awslogs.LogGroupProps{Retention: awslogs.RetentionDays_ONE_MONTH}),
			Level:       awsstepfunctions.LogLevel_ALL,
		},
	})
	cdknag.NagSuppressions_AddResourceSuppressions(s.Machine, &[]*cdknag.NagPackSuppression{{
		Id:     jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("Step Functions' log delivery and X-Ray actions take no resource (logs:*LogDelivery*, xray:Put*), and invoking a step by its ARN allows its versions (<function ARN>:*), as aws-cdk-lib grants it."),
	}}, jsii.Bool(true))
	s.addRule(stack, p.Bus)
	p.Saga = s
}

// definition is the saga's states: each forward step's output goes beside
// the order (ResultPath), and a Catch keeps the input with the error
// under $.error, so that a compensation has the order.
func (s *Saga) definition(stack awscdk.Stack) awsstepfunctions.IChainable {
	caught := func(errors ...string) *awsstepfunctions.CatchProps {
		return &awsstepfunctions.CatchProps{Errors: jsii.Strings(errors...), ResultPath: jsii.String("$.error")}
	}
	compensated := awsstepfunctions.NewFail(stack, jsii.String("Compensated"), &awsstepfunctions.FailProps{Error: jsii.String("OrderCompensated"), Cause: jsii.String("a later step failed; the earlier steps were compensated")})
	release := s.Release.Task(stack, jsii.String("ReleaseStock"), &step.TaskProps{ResultPath: jsii.String("$.release")})
	release.Next(compensated)
	refund := s.Refund.Task(stack, jsii.String("Refund"), &step.TaskProps{ResultPath: jsii.String("$.refund")})
	refund.Next(release)

	reserve := s.Reserve.Task(stack, jsii.String("ReserveStock"), &step.TaskProps{ResultPath: jsii.String("$.reservation")})
	reserve.AddCatch(awsstepfunctions.NewFail(stack, jsii.String("Rejected"), &awsstepfunctions.FailProps{Error: jsii.String(names.OutOfStock), Cause: jsii.String("out of stock; nothing to compensate")}), caught(names.OutOfStock))
	charge := s.Charge.Task(stack, jsii.String("Charge"), &step.TaskProps{ResultPath: jsii.String("$.charge")})
	charge.AddCatch(release, caught(names.PaymentDeclined))
	ship := s.Ship.Task(stack, jsii.String("Ship"), &step.TaskProps{ResultPath: jsii.String("$.shipment")})
	ship.AddCatch(refund, caught(names.Undeliverable))
	return reserve.Next(charge).Next(ship).Next(awsstepfunctions.NewSucceed(stack, jsii.String("Shipped"), nil))
}

// addRule starts an execution for each OrderPlaced event on bus, with the
// order (the event's detail) as its input; EventBridge delivers at least
// once, and a producer's retry is another event: either starts a second
// execution of the order, whose steps are duplicates.
func (s *Saga) addRule(stack awscdk.Stack, bus awsevents.IEventBus) {
	s.DeadLetters = awssqs.NewQueue(stack, jsii.String("OrderSagaDeadLetters"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	cdknag.NagSuppressions_AddResourceSuppressions(s.DeadLetters, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-SQS3"), Reason: jsii.String("This queue is the dead-letter queue of the saga rule's target."),
	}, {
		Id: jsii.String("Serverless-SQSRedrivePolicy"), Reason: jsii.String("This queue is the dead-letter queue of the saga rule's target: nothing consumes it to redrive from; an operator starts the executions of what it keeps."),
	}}, jsii.Bool(true))
	s.Rule = awsevents.NewRule(stack, jsii.String("OrderSagaRule"), &awsevents.RuleProps{
		EventBus:     bus,
		EventPattern: &awsevents.EventPattern{Source: jsii.Strings("orders"), DetailType: jsii.Strings("OrderPlaced")},
	})
	s.Rule.AddTarget(awseventstargets.NewSfnStateMachine(s.Machine, &awseventstargets.SfnStateMachineProps{
		Input:           awsevents.RuleTargetInput_FromEventPath(jsii.String("$.detail")),
		DeadLetterQueue: s.DeadLetters,
		RetryAttempts:   jsii.Number(185),
		MaxEventAge:     awscdk.Duration_Hours(jsii.Number(24)),
	}))
}
