package consumer_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
)

// TestComputeRefusesUnreadableProps: what compute (settings.go) cannot read.
func TestComputeRefusesUnreadableProps(t *testing.T) {
	failsWhen(t, []refusal{{
		name: "durations are tokens",
		change: func(p *consumer.IdempotentConsumerProps) {
			p.Window = awscdk.Duration_Seconds(awscdk.Token_AsNumber(awscdk.Fn_ImportValue(jsii.String("WindowSeconds"))))
			p.BatchSize = awscdk.Token_AsNumber(awscdk.Fn_ImportValue(jsii.String("BatchSize")))
		},
		want: []string{"Window is a token that CDK resolves only at deployment", "give a concrete duration", "BatchSize is a token"},
	}})
}
