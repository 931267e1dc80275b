package apptest_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/step"
)

// TestStepIsNagClean: a step, its Task and a compensation on its table
// leave cdk-nag's AwsSolutions and Serverless packs nothing that is not
// suppressed with its reason (the state machine is the app's, with its
// logs and tracing).
func TestStepIsNagClean(t *testing.T) {
	var stack awscdk.Stack
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		nagtest.AddPacks(app)
		stack = awscdk.NewStack(app, jsii.String("Step"), nil)
		charge := step.NewIdempotentStep(stack, jsii.String("Charge"), &step.IdempotentStepProps{Props: core.Props{Entry: jsii.String(fixtures.Entry)}, StepName: jsii.String("charge")})
		refund := step.NewIdempotentStep(stack, jsii.String("Refund"), &step.IdempotentStepProps{Props: core.Props{Entry: jsii.String(fixtures.Entry), Table: charge.Table(), Namespace: jsii.String("refund")}, StepName: jsii.String("refund")})
		task := charge.Task(stack, jsii.String("ChargeTask"), nil)
		task.AddCatch(refund.Task(stack, jsii.String("RefundTask"), nil), &awsstepfunctions.CatchProps{Errors: jsii.Strings("PaymentDeclined")})
	})
	nagtest.NoFindings(t, stack)
}
