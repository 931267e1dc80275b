package platform

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/endpoint"
)

// Variables that name each endpoint's downstream API to its function.
const (
	FulfilmentAPIVar = "FULFILMENT_API_URL"
	BookingAPIVar    = "BOOKING_API_URL"
)

// OrdersRoute is the orders API's route: POST /orders.
const OrdersRoute = "/orders"

// addEndpoints adds the platform's two HTTP endpoints: StripeHooks, Stripe's
// webhook on a function URL (auth NONE: the handler verifies Stripe's
// signature with the signing secret in StripeSigningSecret, read at init),
// whose retries of an event release the order to fulfilment once; and
// OrdersApi, POST /orders on an HTTP API route with IAM authorization,
// where a client's Idempotency-Key, scoped to the caller's IAM identity,
// books an order once.
func (p *OrdersPlatform) addEndpoints(stack awscdk.Stack, entry func(string) *string) {
	key := awskms.NewKey(stack, jsii.String("StripeSecretKey"), &awskms.KeyProps{
		EnableKeyRotation: jsii.Bool(true),
		Description:       jsii.String("Encrypts the Stripe webhook's signing secret"),
	})
	// The value is put there once the endpoint is registered with Stripe
	// (Stripe issues it: whsec_…), or a JSON array of two during a
	// rotation.
	p.StripeSecret = awssecretsmanager.NewSecret(stack, jsii.String("StripeSigningSecret"), &awssecretsmanager.SecretProps{
		Description:   jsii.String("The Stripe webhook endpoint's signing secret (whsec_...), put there after registering the endpoint with Stripe"),
		EncryptionKey: key,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	cdknag.NagSuppressions_AddResourceSuppressions(p.StripeSecret, &[]*cdknag.NagPackSuppression{{
		Id:     jsii.String("AwsSolutions-SMG4"),
		Reason: jsii.String("The webhook's signing secret is issued by Stripe and rolled there (Roll secret); during a roll both values are listed here, so no Lambda rotation applies."),
	}}, jsii.Bool(true))
	p.StripeHooks = endpoint.NewIdempotentEndpoint(stack, jsii.String("StripeHooks"), &endpoint.IdempotentEndpointProps{
		Props:         core.Props{Entry: entry("stripehook"), Namespace: jsii.String("stripe"), Window: awscdk.Duration_Days(jsii.Number(4))},
		Webhook:       jsii.String("stripe"),
		WebhookSecret: p.StripeSecret,
	})
	p.OrdersAPI = endpoint.NewIdempotentEndpoint(stack, jsii.String("OrdersApi"), &endpoint.IdempotentEndpointProps{
		Props: core.Props{Entry: entry("ordersapi"), Namespace: jsii.String("orders")},
		Route: jsii.String(OrdersRoute),
	})
}
