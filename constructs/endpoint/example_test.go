package endpoint_test

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
)

// A Stripe webhook receiver on a function URL: the signing secret lives in
// Secrets Manager (the function reads it at init), the URL is public because
// the handler verifies every signature, and Stripe's retries of an event run
// the handler once. Entry is the directory of a main package that calls
// endpoint.Start; this example builds a stub.
func ExampleNewIdempotentEndpoint() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Payments"), nil)
	secret := awssecretsmanager.Secret_FromSecretNameV2(stack, jsii.String("StripeSecret"), jsii.String("stripe/webhook-signing-secret"))

	hooks := endpoint.NewIdempotentEndpoint(stack, jsii.String("StripeHooks"), &endpoint.IdempotentEndpointProps{
		Props:         core.Props{Entry: jsii.String(handlerDir), Window: awscdk.Duration_Days(jsii.Number(4))},
		Webhook:       jsii.String("stripe"),
		WebhookSecret: secret,
	})

	fmt.Println("namespace:", *hooks.Namespace())
	fmt.Println("alarms:", len(hooks.Alarms().All()))
	// Output:
	// namespace: stripehooks
	// alarms: 5
}
