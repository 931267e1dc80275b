package step

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/internal/steptask"
)

// TaskProps are the paths of a step's Task state, as the Amazon States
// Language's JSONPath fields; each is optional. The invocation, its
// result, its Retry and its timeout are the construct's (Task).
type TaskProps struct {
	// Comment describes the state.
	Comment *string
	// InputPath selects the part of the state input the step is given.
	// Default: "$", the whole input.
	InputPath *string
	// ResultPath is where the step's output goes in the state's output
	// ("$.reservation"), so that the next states see the input and every
	// earlier step's output. Default: "$", the output replaces the input.
	ResultPath *string
	// OutputPath selects the part of the state's output passed on.
	// Default: "$".
	OutputPath *string
}

// Task implements IdempotentStep.Task.
func (c *idempotentStep) Task(scope constructs.Construct, id *string, props *TaskProps) awsstepfunctionstasks.LambdaInvoke {
	if props == nil {
		props = &TaskProps{}
	}
	timeout := c.s.Runtime.Timeout
	task := awsstepfunctionstasks.NewLambdaInvoke(scope, id, &awsstepfunctionstasks.LambdaInvokeProps{
		LambdaFunction:           c.fn.Function,
		PayloadResponseOnly:      jsii.Bool(true),
		RetryOnServiceExceptions: jsii.Bool(false), // Retriers lists them
		TaskTimeout:              awsstepfunctions.Timeout_Duration(awscdk.Duration_Seconds(jsii.Number(steptask.TaskTimeout(timeout).Seconds()))),
		Comment:                  props.Comment,
		InputPath:                props.InputPath,
		ResultPath:               props.ResultPath,
		OutputPath:               props.OutputPath,
	})
	for _, r := range steptask.Retriers(timeout) {
		retry := &awsstepfunctions.RetryProps{
			Errors:      jsii.Strings(r.ErrorEquals...),
			Interval:    awscdk.Duration_Seconds(jsii.Number(float64(r.IntervalSeconds))),
			BackoffRate: jsii.Number(r.BackoffRate),
			MaxAttempts: jsii.Number(float64(r.MaxAttempts)),
		}
		if r.MaxDelaySeconds > 0 {
			retry.MaxDelay = awscdk.Duration_Seconds(jsii.Number(float64(r.MaxDelaySeconds)))
		}
		task.AddRetry(retry)
	}
	return task
}
