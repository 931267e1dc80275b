// Command minimal is the smallest idempotent SQS consumer one would write by
// hand: aws-lambda-go and the AWS SDK's DynamoDB client, one conditional
// PutItem per record, partial batch responses, nothing else. It is not run:
// `make bench` builds it as the construct builds a bootstrap and reports its
// size beside the library's (the floor of what a Go consumer links).
//
// With -tags chain it loads the configuration with config.LoadDefaultConfig,
// as most handlers do; without a tag, from the environment Lambda provides
// through config.NewEnvConfig (which links package config and the providers
// it imports); with -tags bare, from the region and credentials variables
// alone, read with os.Getenv (no endpoint, retry, FIPS or CA bundle
// variable honoured: smaller than any handler one would ship).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func main() {
	cfg, err := loadConfig()
	if err != nil {
		panic(err)
	}
	db := dynamodb.NewFromConfig(cfg)
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{
				TableName:           aws.String("idempotency"),
				Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: r.Body}},
				ConditionExpression: aws.String("attribute_not_exists(pk)"),
			})
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return resp, nil
	})
}
