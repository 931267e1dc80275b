package sqsapi

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// sources is a configuration source that answers the endpoint settings an
// SDK client reads (as lambdaEnv and the SDK's EnvConfig do).
type sources struct {
	own       string // SQS's own endpoint
	ignore    bool
	fips      aws.FIPSEndpointState
	dualStack aws.DualStackEndpointState
}

func (s sources) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	if sdkID != "SQS" {
		return "", false, fmt.Errorf("asked for %q's endpoint", sdkID)
	}
	return s.own, s.own != "", nil
}

func (s sources) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	return s.ignore, s.ignore, nil
}

func (s sources) GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error) {
	return s.fips, s.fips != aws.FIPSEndpointStateUnset, nil
}

func (s sources) GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error) {
	return s.dualStack, s.dualStack != aws.DualStackEndpointStateUnset, nil
}

// sdkEndpoint is the endpoint an SDK SQS client of cfg sends a request for
// region to, or its error.
func sdkEndpoint(cfg aws.Config, region string) (string, error) {
	o := sqs.NewFromConfig(cfg).Options()
	e, err := o.EndpointResolverV2.ResolveEndpoint(context.Background(), sqs.EndpointParameters{
		Region: aws.String(region), Endpoint: o.BaseEndpoint,
		UseFIPS:      aws.Bool(o.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled),
		UseDualStack: aws.Bool(o.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled),
	})
	if err != nil {
		return "", err
	}
	return e.URI.String(), nil
}

// TestEndpointsAsTheSDK holds a queue's endpoint to the SDK's SQS client's
// for the same configuration: every partition, FIPS and dual-stack alone
// and together, a base endpoint, SQS's own endpoint from the sources with
// and without AWS_ENDPOINT_URL set and ignored: the same URL, or both
// refuse.
func TestEndpointsAsTheSDK(t *testing.T) {
	regions := map[string]string{
		"aws": "eu-west-1", "aws-cn": "cn-north-1", "aws-us-gov": "us-gov-west-1", "aws-iso": "us-iso-east-1",
		"aws-iso-b": "us-isob-east-1", "aws-iso-e": "eu-isoe-west-1", "aws-iso-f": "us-isof-south-1", "aws-eusc": "eusc-de-east-1",
	}
	if len(regions) != len(partitions) {
		t.Fatalf("%d partitions tested, %d known", len(regions), len(partitions))
	}
	var cases []sources
	for _, fips := range []aws.FIPSEndpointState{aws.FIPSEndpointStateUnset, aws.FIPSEndpointStateEnabled, aws.FIPSEndpointStateDisabled} {
		for _, ds := range []aws.DualStackEndpointState{aws.DualStackEndpointStateUnset, aws.DualStackEndpointStateEnabled, aws.DualStackEndpointStateDisabled} {
			cases = append(cases, sources{fips: fips, dualStack: ds})
		}
	}
	cases = append(cases, sources{own: "http://127.0.0.1:3"}, sources{own: "http://127.0.0.1:3", ignore: true},
		sources{own: "http://127.0.0.1:3", fips: aws.FIPSEndpointStateEnabled})
	for _, global := range []bool{false, true} {
		t.Run(fmt.Sprintf("AWS_ENDPOINT_URL set %v", global), func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
			t.Setenv("AWS_ENDPOINT_URL_SQS", "")
			os.Unsetenv("AWS_ENDPOINT_URL_SQS")
			if !global {
				os.Unsetenv("AWS_ENDPOINT_URL")
			}
			for partition, region := range regions {
				arn := "arn:" + partition + ":sqs:" + region + ":123456789012:orders"
				a, err := parseQueueARN(arn)
				if err != nil {
					t.Fatal(err)
				}
				for _, base := range []*string{nil, aws.String("http://127.0.0.1:1")} {
					for _, s := range cases {
						cfg := aws.Config{Region: region, BaseEndpoint: base, ConfigSources: []any{s}}
						want, wantErr := sdkEndpoint(cfg, region)
						got, err := endpointConfigOf(cfg).resolve(a)
						if (err == nil) != (wantErr == nil) || got != want {
							t.Errorf("%s, base %v, %+v: %q, %v; the SDK's %q, %v", arn, aws.ToString(base), s, got, err, want, wantErr)
						}
					}
				}
			}
		})
	}
}

// TestEndpointOfSQSOwnVariable: AWS_ENDPOINT_URL_SQS beside AWS_ENDPOINT_URL
// makes SQS's own endpoint win, as in the SDK.
func TestEndpointOfSQSOwnVariable(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	t.Setenv("AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:3")
	cfg := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String("http://127.0.0.1:1"), ConfigSources: []any{sources{own: "http://127.0.0.1:3"}}}
	a, _ := parseQueueARN("arn:aws:sqs:eu-west-1:123456789012:orders")
	got, err := endpointConfigOf(cfg).resolve(a)
	if want, _ := sdkEndpoint(cfg, "eu-west-1"); err != nil || got != want || got != "http://127.0.0.1:3" {
		t.Errorf("endpoint %q, %v; the SDK's %q", got, err, want)
	}
}

// TestParseQueueARN: an SQS queue's ARN is read; any other ARN, or a region
// that cannot stand in a host name, is refused, naming the value.
func TestParseQueueARN(t *testing.T) {
	a, err := parseQueueARN("arn:aws-cn:sqs:cn-north-1:123456789012:orders.fifo")
	if err != nil || a.partition != "aws-cn" || a.region != "cn-north-1" || a.account != "123456789012" || a.name != "orders.fifo" {
		t.Errorf("parse: %+v, %v", a, err)
	}
	for _, bad := range []string{"", "orders", "arn:aws:sns:eu-west-1:123456789012:orders", "arn:aws:sqs:eu-west-1:123456789012",
		"arn:aws:sqs:eu-west-1:123456789012:orders:extra", "arn::sqs:eu-west-1:123456789012:orders", "arn:aws:sqs:eu-west-1::orders",
		"arn:aws:sqs:eu-west-1:123456789012:", "arn:aws:sqs:evil.example/x:123456789012:orders", "arn:aws:sqs::123456789012:orders"} {
		if _, err := parseQueueARN(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("parseQueueARN(%q): %v", bad, err)
		}
	}
	if _, err := endpointConfigOf(aws.Config{}).resolve(queueARN{text: "arn:aws-mars:sqs:mars-1:1:q", partition: "aws-mars", region: "mars-1"}); err == nil || !strings.Contains(err.Error(), "aws-mars") {
		t.Errorf("an unknown partition: %v", err)
	}
}
