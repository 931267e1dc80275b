//go:build !chain && !bare

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func loadConfig() (aws.Config, error) {
	env, err := config.NewEnvConfig()
	if err != nil {
		return aws.Config{}, err
	}
	return aws.Config{Region: env.Region, Credentials: credentials.StaticCredentialsProvider{Value: env.Credentials}, ConfigSources: []any{env}}, nil
}
