// Package kumotest starts kumo, the in-process AWS emulator, for the tests
// of this module, and makes DynamoDB idempotency tables on it.
package kumotest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sivchari/kumo"

	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

type creds struct{}

func (creds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "kumotest"}, nil
}

// StartDynamoDB starts kumo on a loopback port and returns a DynamoDB client
// for it and the function that stops it. With retries off the client makes
// exactly one request per call, as a test that counts or injects faults
// needs.
func StartDynamoDB(retries bool) (*dynamodb.Client, func()) {
	srv := kumo.NewServer()
	opts := dynamodb.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: creds{}}
	if !retries {
		opts.Retryer = aws.NopRetryer{}
	}
	return dynamodb.New(opts), srv.Close
}

// Clients are SDK clients of one kumo server, its URL, and an AWS
// configuration of it (for what takes one: sqsbatch.NewVisibility).
type Clients struct {
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	SNS      *sns.Client
	S3       *s3.Client // path-style: kumo serves every bucket at its URL
	URL      string
	Config   aws.Config
}

// Start starts kumo on a loopback port and returns clients of its DynamoDB,
// SQS, SNS (which delivers into its SQS) and S3 (whose notifications it
// delivers into its SQS), and the function that stops it.
func Start() (Clients, func()) {
	srv := kumo.NewServer()
	endpoint, region := aws.String(srv.URL), "us-east-1"
	return Clients{
		DynamoDB: dynamodb.New(dynamodb.Options{BaseEndpoint: endpoint, Region: region, Credentials: creds{}}),
		SQS:      sqs.New(sqs.Options{BaseEndpoint: endpoint, Region: region, Credentials: creds{}}),
		SNS:      sns.New(sns.Options{BaseEndpoint: endpoint, Region: region, Credentials: creds{}}),
		S3:       s3.New(s3.Options{BaseEndpoint: endpoint, Region: region, Credentials: creds{}, UsePathStyle: true}),
		URL:      srv.URL,
		Config:   aws.Config{BaseEndpoint: endpoint, Region: region, Credentials: creds{}},
	}, srv.Close
}

// tables numbers the tables of the process: kumo servers of one process
// share their state, so every table needs a name of its own.
var tables atomic.Int64

// NewTable creates an idempotency table (string partition key "pk") named
// after prefix and returns its name.
func NewTable(ctx context.Context, ddb *dynamodb.Client, prefix string) (string, error) {
	return NewTableKeyed(ctx, ddb, prefix, schema.Key, "")
}

// NewTableKeyed creates a table named after prefix with a string partition
// key named partition and, unless sort is "", a string sort key named sort
// (a table of an app's own design), and returns its name.
func NewTableKeyed(ctx context.Context, ddb *dynamodb.Client, prefix, partition, sort string) (string, error) {
	name := fmt.Sprintf("%s-%d", prefix, tables.Add(1))
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(partition), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(partition), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}
	if sort != "" {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(sort), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(sort), KeyType: types.KeyTypeRange})
	}
	_, err := ddb.CreateTable(ctx, in)
	if err != nil {
		return "", fmt.Errorf("create table %s: %w", name, err)
	}
	return name, nil
}
