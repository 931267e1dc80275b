// Command payments is a small Go CDK app of a payments team that uses the
// IdempotentConsumer construct as any other app would: a module of its own,
// its own handlers, a FIFO topic, a queue it already had, a shared ledger
// table, and one consumer in a VPC on x86_64. `cdk synth` in this directory
// runs it (see cdk.json).
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"example.com/payments/stack"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	stack.NewPayments(app, jsii.String("Payments"), nil)
	app.Synth(nil)
}
