//go:build chain

package main

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

func loadConfig() (aws.Config, error) { return config.LoadDefaultConfig(context.Background()) }
