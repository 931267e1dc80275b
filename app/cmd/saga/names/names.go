// Package names holds the order saga's names that its state machine
// (app/platform) and its steps' handlers (app/cmd/saga/...) must agree on:
// each step's name (its StepName, part of its record keys) and the business
// failures a step names with step.Fail and a Catch matches. It imports
// nothing, so that the CDK app reads it without the handlers' SDK.
package names

// The steps' names.
const (
	Reserve = "reserve-stock"
	Charge  = "charge"
	Ship    = "ship"
	Refund  = "refund"
	Release = "release-stock"
)

// The business failures a step names, which the state machine's Catch
// matches to run the compensations.
const (
	// OutOfStock: reserve-stock found too little stock; the order is
	// rejected, nothing to compensate.
	OutOfStock = "OutOfStock"
	// PaymentDeclined: charge was declined; the stock is released.
	PaymentDeclined = "PaymentDeclined"
	// Undeliverable: ship cannot deliver; the charge is refunded and the
	// stock released.
	Undeliverable = "Undeliverable"
)
