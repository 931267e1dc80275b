package consumer_test

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
)

// A platform stack subscribes a consumer to its orders topic. Entry is the
// directory of the handler's main package, for example
// "lambda/cmd/charge"; this example builds a stub handler.
func ExampleNewIdempotentConsumer() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Orders"), nil)

	orders := awssns.NewTopic(stack, jsii.String("Orders"), &awssns.TopicProps{
		MasterKey:  awskms.Alias_FromAliasName(stack, jsii.String("SNSKey"), jsii.String("alias/aws/sns")),
		EnforceSSL: jsii.Bool(true),
	})
	charge := consumer.NewIdempotentConsumer(stack, jsii.String("ChargeOrder"), &consumer.IdempotentConsumerProps{
		Entry:   jsii.String(handlerDir),
		Topic:   orders,
		Timeout: awscdk.Duration_Seconds(jsii.Number(20)),
		Window:  awscdk.Duration_Hours(jsii.Number(48)),
	})

	fmt.Println("namespace:", *charge.Namespace())
	fmt.Println("alarms:", len(charge.Alarms().All()))
	// Output:
	// namespace: chargeorder
	// alarms: 5
}
