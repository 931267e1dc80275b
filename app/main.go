// Command app is the CDK app of the example OrdersPlatform stack, and with
// the context regions=true of the platform in two Regions (a stack per
// Region); `cdk synth` runs it (see cdk.json). Both cdk-nag packs, AwsSolutions and Serverless,
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
	// `cdk synth -c regions=true` adds the platform in two Regions
	// (DESIGN.md, "Two Regions"): a stack per Region.
	if v, ok := app.Node().TryGetContext(jsii.String("regions")).(string); ok && v == "true" {
		platform.NewRegions(app, "OrdersRegions", nil)
	}
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	awscdk.Aspects_Of(app).Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	app.Synth(nil)
}
