// Command app is the CDK app of the example OrdersPlatform stack; `cdk synth`
// runs it (see cdk.json). Both cdk-nag packs, AwsSolutions and Serverless,
// check it, so a finding fails the synth.
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/app/platform"
)

func main() {
	defer jsii.Close()

	app := awscdk.NewApp(nil)
	platform.NewOrdersPlatform(app, jsii.String("OrdersPlatform"), nil)
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	awscdk.Aspects_Of(app).Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	app.Synth(nil)
}
