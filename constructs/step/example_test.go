package step_test

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/step"
)

// A step and its compensation over the same fact: charge the order, and
// refund it when a later step fails, on one table (each construct has a
// namespace of its own there; the step's name is in its keys too). Each is a function whose main calls
// step.Start; Task gives the state that invokes it with its Retry, and the
// state machine adds the Catch of the business failures. Entry is the
// directory of such a main package; this example builds a stub.
func ExampleNewIdempotentStep() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Shop"), nil)

	charge := step.NewIdempotentStep(stack, jsii.String("Charge"), &step.IdempotentStepProps{
		Props:    core.Props{Entry: jsii.String(handlerDir), Namespace: jsii.String("orders")},
		StepName: jsii.String("charge"),
	})
	refund := step.NewIdempotentStep(stack, jsii.String("Refund"), &step.IdempotentStepProps{
		Props:    core.Props{Entry: jsii.String(handlerDir), Namespace: jsii.String("refund"), Table: charge.Table()},
		StepName: jsii.String("refund"),
	})
	chargeTask := charge.Task(stack, jsii.String("ChargeOrder"), &step.TaskProps{ResultPath: jsii.String("$.charge")})
	chargeTask.AddCatch(refund.Task(stack, jsii.String("RefundOrder"), nil), &awsstepfunctions.CatchProps{
		Errors: jsii.Strings("PaymentDeclined"), ResultPath: jsii.String("$.error"),
	})

	fmt.Println("steps:", *charge.StepName(), *refund.StepName())
	fmt.Println("alarms:", len(charge.Alarms().All()))
	// Output:
	// steps: charge refund
	// alarms: 6
}
