// Package setup wires the example handlers from the environment that the
// IdempotentConsumer construct sets: the DynamoDB client, the store, the
// guard and the batch adapter's configuration.
package setup

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/env"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// Consumer is what a handler needs to build its sqsbatch.Handler.
type Consumer struct {
	DynamoDB *dynamodb.Client
	Guard    *idempotency.Guard
	Batch    sqsbatch.Config
	Logger   *slog.Logger
}

// FromEnv builds a Consumer from the function's environment. The AWS SDK
// reads credentials, region and endpoint overrides (such as
// AWS_ENDPOINT_URL_DYNAMODB for a local run) from the environment too.
func FromEnv(ctx context.Context) (*Consumer, error) {
	table := os.Getenv(env.Table)
	if table == "" {
		return nil, fmt.Errorf("%s is not set: the construct sets it to the idempotency table's name", env.Table)
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	gcfg, err := idempotency.ConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	client := dynamodb.NewFromConfig(awsCfg)
	guard, err := idempotency.NewGuard(dynamostore.New(client, table), gcfg)
	if err != nil {
		return nil, err
	}
	bcfg, err := sqsbatch.ConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	bcfg.Logger = logger
	return &Consumer{DynamoDB: client, Guard: guard, Batch: bcfg, Logger: logger}, nil
}

// Must returns c, or logs err and exits: a handler that cannot be configured
// must fail its init, so that Lambda reports it and retries the batch.
func Must(c *Consumer, err error) *Consumer {
	if err != nil {
		slog.Error("init", slog.String("reason", err.Error()))
		os.Exit(1)
	}
	return c
}
