package handler

import "github.com/aws/aws-sdk-go-v2/aws"

// AWSConfig is the AWS configuration of the handler's own default client:
// the environment Lambda provides, read as the SDK reads it, and nothing
// else (no files, profiles or metadata providers; see WithAWSConfig for a
// configuration of another origin). An effect that writes to a table of its
// own, such as the example's outbox, builds its client from it.
func AWSConfig() (aws.Config, error) { return lambdaConfig() }
