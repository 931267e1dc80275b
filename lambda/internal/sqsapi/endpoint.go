package sqsapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// queueARN is an SQS queue's ARN, arn:<partition>:sqs:<region>:<account>:<name>.
type queueARN struct {
	text, partition, region, account, name string
}

func (a queueARN) String() string { return a.text }

// parseQueueARN reads an event source ARN, refusing any other than an SQS
// queue's.
func parseQueueARN(arn string) (queueARN, error) {
	p := strings.Split(arn, ":")
	if len(p) != 6 || p[0] != "arn" || p[2] != "sqs" || p[1] == "" || !hostLabel(p[3]) || p[4] == "" || p[5] == "" {
		return queueARN{}, fmt.Errorf("event source %q is not an SQS queue ARN (arn:<partition>:sqs:<region>:<account>:<name>)", arn)
	}
	return queueARN{text: arn, partition: p[1], region: p[3], account: p[4], name: p[5]}, nil
}

// hostLabel reports whether s can stand in a host name: a region.
func hostLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// partitions are the DNS suffixes of each partition's endpoints, plain and
// dual-stack: the SDK's partitions.json (internal/endpoints/awsrulesfn),
// which its SQS endpoint rules read (TestEndpointsAsTheSDK holds them to
// the SDK's SQS resolver).
var partitions = map[string]struct{ dns, dualStack string }{
	"aws":        {"amazonaws.com", "api.aws"},
	"aws-cn":     {"amazonaws.com.cn", "api.amazonwebservices.com.cn"},
	"aws-eusc":   {"amazonaws.eu", "api.amazonwebservices.eu"},
	"aws-iso":    {"c2s.ic.gov", "api.aws.ic.gov"},
	"aws-iso-b":  {"sc2s.sgov.gov", "api.aws.scloud"},
	"aws-iso-e":  {"cloud.adc-e.uk", "api.cloud-aws.adc-e.uk"},
	"aws-iso-f":  {"csp.hci.ic.gov", "api.aws.hci.ic.gov"},
	"aws-us-gov": {"amazonaws.com", "api.aws"},
}

// endpointConfig is what chooses a queue's endpoint: a base endpoint of the
// configuration, or the regional one, FIPS or dual-stack.
type endpointConfig struct {
	base            string
	fips, dualStack bool
}

// The configuration sources an SDK client reads its endpoint settings from
// (aws-sdk-go-v2's internal/configsources; lambdaEnv and the SDK's
// EnvConfig and SharedConfig implement them).
type (
	serviceEndpointSource interface {
		GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
	}
	ignoreEndpointsSource interface {
		GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error)
	}
	fipsSource interface {
		GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error)
	}
	dualStackSource interface {
		GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error)
	}
)

// endpointConfigOf reads cfg as sqs.NewFromConfig does: cfg.BaseEndpoint,
// replaced by SQS's own endpoint of the sources (AWS_ENDPOINT_URL_SQS)
// unless AWS_ENDPOINT_URL is set alone or configured endpoints are ignored;
// the sources' FIPS and dual-stack settings.
func endpointConfigOf(cfg aws.Config) endpointConfig {
	var e endpointConfig
	if cfg.BaseEndpoint != nil {
		e.base = *cfg.BaseEndpoint
	}
	ctx := context.Background()
	_, global := os.LookupEnv("AWS_ENDPOINT_URL")
	_, own := os.LookupEnv("AWS_ENDPOINT_URL_SQS")
	if v, ok := serviceEndpoint(ctx, cfg.ConfigSources); ok && (!global || own) {
		e.base = v
	}
	for _, s := range cfg.ConfigSources {
		if p, ok := s.(fipsSource); ok {
			v, found, err := p.GetUseFIPSEndpoint(ctx)
			if err != nil || found {
				e.fips = err == nil && v == aws.FIPSEndpointStateEnabled
				break
			}
		}
	}
	for _, s := range cfg.ConfigSources {
		if p, ok := s.(dualStackSource); ok {
			v, found, err := p.GetUseDualStackEndpoint(ctx)
			if err != nil || found {
				e.dualStack = err == nil && v == aws.DualStackEndpointStateEnabled
				break
			}
		}
	}
	return e
}

// serviceEndpoint is SQS's own endpoint of the sources, unless one of them
// ignores configured endpoints.
func serviceEndpoint(ctx context.Context, sources []any) (string, bool) {
	for _, s := range sources {
		if p, ok := s.(ignoreEndpointsSource); ok {
			v, found, err := p.GetIgnoreConfiguredEndpoints(ctx)
			if err != nil || found {
				if found && v {
					return "", false
				}
				break
			}
		}
	}
	for _, s := range sources {
		if p, ok := s.(serviceEndpointSource); ok {
			v, found, err := p.GetServiceBaseEndpoint(ctx, "SQS")
			if err != nil || found {
				return v, err == nil && found
			}
		}
	}
	return "", false
}

// resolve returns the endpoint of the queue a, by SQS's endpoint rules:
// the base endpoint (neither FIPS nor dual-stack with it), else
// sqs[-fips].<region>.<the partition's suffix, dual-stack or not>, the
// FIPS endpoints of GovCloud (where SQS's plain endpoints are FIPS) being
// sqs.<region>.amazonaws.com.
func (e endpointConfig) resolve(a queueARN) (string, error) {
	if e.base != "" {
		if e.fips || e.dualStack {
			return "", errors.New("a FIPS or dual-stack endpoint is not supported with a custom endpoint (BaseEndpoint, AWS_ENDPOINT_URL_SQS)")
		}
		return e.base, nil
	}
	p, ok := partitions[a.partition]
	if !ok {
		return "", fmt.Errorf("partition %q of %s is unknown", a.partition, a)
	}
	host, suffix := "sqs", p.dns
	if e.dualStack {
		suffix = p.dualStack
	}
	if e.fips && (e.dualStack || a.partition != "aws-us-gov") {
		host = "sqs-fips"
	}
	return "https://" + host + "." + a.region + "." + suffix, nil
}
