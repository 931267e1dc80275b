package build

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// lambdaEnv is the part of the SDK's environment configuration that
// configures a client, read from the process's environment as
// config.NewEnvConfig reads it (the same variables, the same precedence, the
// same values refused), without importing package config: its import links
// the providers that config.LoadDefaultConfig may call (shared files, SSO,
// STS web identity, the process, container and instance credentials: the
// sts, sso, ssooidc and signin clients), none of which a Lambda function's
// default client uses, and runs their packages' initialisers at every cold
// start: 393,216 bytes of an arm64 bootstrap and up to 3 ms of its cold
// init (DESIGN.md, "What a consumer process costs", issue 42's figures).
// TestLambdaEnvReadsAsTheSDK holds it to NewEnvConfig, variable by
// variable, and fails on a variable of a newer SDK that it does not read.
//
// It is also the clients' configuration source (aws.Config.ConfigSources):
// each client asks it for its own endpoint (AWS_ENDPOINT_URL_<SERVICE>), the
// FIPS and dual-stack endpoints and endpoint discovery.
type lambdaEnv struct {
	Region                     string
	Credentials                aws.Credentials
	CustomCABundle             string
	AppID                      string
	BaseEndpoint               string
	IgnoreConfiguredEndpoints  *bool
	RetryMaxAttempts           int
	RetryMode                  aws.RetryMode
	DefaultsMode               aws.DefaultsMode
	AccountIDEndpointMode      aws.AccountIDEndpointMode
	RequestChecksumCalculation aws.RequestChecksumCalculation
	ResponseChecksumValidation aws.ResponseChecksumValidation
	DisableClockSkewCorrection *bool
	AuthSchemePreference       []string
	UseFIPSEndpoint            aws.FIPSEndpointState
	UseDualStackEndpoint       aws.DualStackEndpointState
	EnableEndpointDiscovery    aws.EndpointDiscoveryEnableState
}

// readLambdaEnv reads the variables of lambdaEnv; a value the SDK refuses
// is refused with the variable's name.
func readLambdaEnv() (lambdaEnv, error) {
	var e lambdaEnv
	if id, secret := firstOf("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"), firstOf("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY"); id != "" && secret != "" {
		e.Credentials = aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN"), AccountID: os.Getenv("AWS_ACCOUNT_ID"), Source: "EnvConfigCredentials"}
	}
	e.Region = Region(os.Getenv)
	e.CustomCABundle = os.Getenv("AWS_CA_BUNDLE")
	e.AppID = os.Getenv("AWS_SDK_UA_APP_ID")
	e.BaseEndpoint = os.Getenv("AWS_ENDPOINT_URL")
	e.AuthSchemePreference = schemeList(os.Getenv("AWS_AUTH_SCHEME_PREFERENCE"))
	var err error
	read := func(name string, parse func(string) error) {
		if v := os.Getenv(name); v != "" && err == nil {
			if perr := parse(v); perr != nil {
				err = fmt.Errorf("invalid value for environment variable, %s=%s: %w", name, v, perr)
			}
		}
	}
	read("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", func(v string) error {
		b, err := trueOrFalse(v)
		e.IgnoreConfiguredEndpoints = &b
		return err
	})
	read("AWS_DISABLE_CLOCK_SKEW_CORRECTION", func(v string) error {
		b, err := trueOrFalse(v)
		e.DisableClockSkewCorrection = &b
		return err
	})
	read("AWS_MAX_ATTEMPTS", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		e.RetryMaxAttempts = int(n)
		return err
	})
	read("AWS_RETRY_MODE", func(v string) (err error) { e.RetryMode, err = aws.ParseRetryMode(v); return err })
	read("AWS_DEFAULTS_MODE", func(v string) error {
		if !e.DefaultsMode.SetFromString(v) {
			return fmt.Errorf("need standard, in-region, cross-region, mobile, auto or legacy")
		}
		return nil
	})
	read("AWS_ACCOUNT_ID_ENDPOINT_MODE", func(v string) error {
		switch m := aws.AccountIDEndpointMode(v); m {
		case aws.AccountIDEndpointModePreferred, aws.AccountIDEndpointModeRequired, aws.AccountIDEndpointModeDisabled:
			e.AccountIDEndpointMode = m
			return nil
		}
		return fmt.Errorf("must be preferred/required/disabled")
	})
	e.readEndpointSettings(read)
	return e, err
}

// Region is the AWS Region of the environment read through getenv, as the
// SDK reads it: AWS_REGION (which Lambda sets), else AWS_DEFAULT_REGION;
// "" when neither is set. The default client's configuration, every log
// line ("region") and the metrics' Region dimension read it here.
func Region(getenv func(string) string) string {
	if r := getenv("AWS_REGION"); r != "" {
		return r
	}
	return getenv("AWS_DEFAULT_REGION")
}

// firstOf is the first of the variables names that is set and not empty.
func firstOf(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// trueOrFalse reads a boolean variable as the SDK does: true or false, in
// any case.
func trueOrFalse(v string) (bool, error) {
	switch {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, fmt.Errorf("need true or false")
}

// schemeList reads AWS_AUTH_SCHEME_PREFERENCE as the SDK does: the
// comma-separated scheme ids, trimmed, empty ones dropped; nil when unset.
func schemeList(v string) []string {
	if v == "" {
		return nil
	}
	ids := []string{}
	for id := range strings.SplitSeq(v, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// whenSupported reads a checksum variable as the SDK does: when_supported
// or when_required, in any case.
func whenSupported(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "when_supported":
		return true, nil
	case "when_required":
		return false, nil
	}
	return false, fmt.Errorf("must be when_supported/when_required")
}

// GetServiceBaseEndpoint is a client's own endpoint, AWS_ENDPOINT_URL_ and
// its SDK ID in capitals, spaces as underscores ("Secrets Manager":
// AWS_ENDPOINT_URL_SECRETS_MANAGER). The clients call it through
// ConfigSources.
func (e lambdaEnv) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := os.Getenv("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return v, v != "", nil
}

// GetIgnoreConfiguredEndpoints is AWS_IGNORE_CONFIGURED_ENDPOINT_URLS, for
// the clients (ConfigSources).
func (e lambdaEnv) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	if e.IgnoreConfiguredEndpoints == nil {
		return false, false, nil
	}
	return *e.IgnoreConfiguredEndpoints, true, nil
}

// GetUseFIPSEndpoint is AWS_USE_FIPS_ENDPOINT, for the clients
// (ConfigSources).
func (e lambdaEnv) GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error) {
	return e.UseFIPSEndpoint, e.UseFIPSEndpoint != aws.FIPSEndpointStateUnset, nil
}

// GetUseDualStackEndpoint is AWS_USE_DUALSTACK_ENDPOINT, for the clients
// (ConfigSources).
func (e lambdaEnv) GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error) {
	return e.UseDualStackEndpoint, e.UseDualStackEndpoint != aws.DualStackEndpointStateUnset, nil
}

// GetEnableEndpointDiscovery is AWS_ENABLE_ENDPOINT_DISCOVERY, for the
// DynamoDB client (ConfigSources).
func (e lambdaEnv) GetEnableEndpointDiscovery(context.Context) (aws.EndpointDiscoveryEnableState, bool, error) {
	return e.EnableEndpointDiscovery, e.EnableEndpointDiscovery != aws.EndpointDiscoveryUnset, nil
}

// readEndpointSettings reads the checksum and endpoint variables (FIPS,
// dual-stack, endpoint discovery) through read, as readLambdaEnv reads the
// others.
func (e *lambdaEnv) readEndpointSettings(read func(name string, parse func(string) error)) {
	read("AWS_REQUEST_CHECKSUM_CALCULATION", func(v string) error {
		supported, err := whenSupported(v)
		e.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		if supported {
			e.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
		}
		return err
	})
	read("AWS_RESPONSE_CHECKSUM_VALIDATION", func(v string) error {
		supported, err := whenSupported(v)
		e.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if supported {
			e.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
		}
		return err
	})
	read("AWS_USE_FIPS_ENDPOINT", func(v string) error {
		b, err := trueOrFalse(v)
		e.UseFIPSEndpoint = aws.FIPSEndpointStateDisabled
		if b {
			e.UseFIPSEndpoint = aws.FIPSEndpointStateEnabled
		}
		return err
	})
	read("AWS_USE_DUALSTACK_ENDPOINT", func(v string) error {
		b, err := trueOrFalse(v)
		e.UseDualStackEndpoint = aws.DualStackEndpointStateDisabled
		if b {
			e.UseDualStackEndpoint = aws.DualStackEndpointStateEnabled
		}
		return err
	})
	read("AWS_ENABLE_ENDPOINT_DISCOVERY", func(v string) error {
		switch {
		case strings.EqualFold(v, "true"):
			e.EnableEndpointDiscovery = aws.EndpointDiscoveryEnabled
		case strings.EqualFold(v, "false"):
			e.EnableEndpointDiscovery = aws.EndpointDiscoveryDisabled
		case strings.EqualFold(v, "auto"):
			e.EnableEndpointDiscovery = aws.EndpointDiscoveryAuto
		default:
			return fmt.Errorf("need true, false or auto")
		}
		return nil
	})
}
