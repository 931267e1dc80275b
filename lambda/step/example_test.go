package step_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/step"
)

// A saga's charge step and its compensation, the refund: the same fact
// (the order) under two step names. A retry of the charge gets the charge's
// output back without charging again; the refund runs once, under its own
// key. In production the store is dynamostore.New(client, table) and the
// handler is given to lambda.Start. The guard stores outputs as large as
// Step Functions passes, and keeps each fact for 15 days: the 14 days in which a failed Standard
// execution may be redriven, and a day.
func ExampleNew() {
	guard, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "orders", MaxResultBytes: step.MaxOutputBytes, Window: 15 * 24 * time.Hour})
	if err != nil {
		panic(err)
	}
	cfg := step.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	charge, err := step.New(guard, "charge", step.Field("orderId"), func(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
		fmt.Println("charging, idempotency key", r.Key)
		return json.RawMessage(`{"chargeId":"ch_1"}`), nil
	}, cfg)
	if err != nil {
		panic(err)
	}
	refund, err := step.New(guard, "refund", step.Field("orderId"), func(ctx context.Context, input json.RawMessage, r idempotency.Reservation) (json.RawMessage, error) {
		fmt.Println("refunding, idempotency key", r.Key)
		return json.RawMessage(`{"refundId":"re_1"}`), nil
	}, cfg)
	if err != nil {
		panic(err)
	}
	order := json.RawMessage(`{"orderId":"o-42","amount":5000}`)
	for _, h := range []step.Handler{charge, charge, refund, refund} {
		out, err := h(context.Background(), order)
		if err != nil {
			panic(err)
		}
		fmt.Println(string(out))
	}
	_, err = charge(context.Background(), json.RawMessage(`{"orderId":"o-42","amount":9900}`))
	fmt.Println(step.ErrorName(err))
	// Output:
	// charging, idempotency key orders#charge#o-42
	// {"chargeId":"ch_1"}
	// {"chargeId":"ch_1"}
	// refunding, idempotency key orders#refund#o-42
	// {"refundId":"re_1"}
	// {"refundId":"re_1"}
	// Step.PayloadMismatch
}

// An effect names a business failure with Fail, so that the state's Catch
// runs the compensations; its reservation is released.
func ExampleFail() {
	guard, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "orders", MaxResultBytes: step.MaxOutputBytes})
	reserve, _ := step.New(guard, "reserve-stock", step.Field("orderId"), func(context.Context, json.RawMessage, idempotency.Reservation) (json.RawMessage, error) {
		return nil, step.Fail("OutOfStock", errors.New("no widgets left"))
	}, step.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err := reserve(context.Background(), json.RawMessage(`{"orderId":"o-42"}`))
	fmt.Println(step.ErrorName(err))
	fmt.Println(step.ErrorMessage(err))
	// Output:
	// OutOfStock
	// orders#reserve-stock#o-42: effect failed: OutOfStock: no widgets left
}
