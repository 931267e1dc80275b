package build

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// setLambdaEnv sets the environment Lambda gives a function, with the
// variables the test changes; an empty value unsets a variable for the test.
func setLambdaEnv(t *testing.T, vars map[string]string) {
	t.Helper()
	base := map[string]string{
		"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "", "AWS_ACCESS_KEY_ID": "ASIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN": "token", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_DYNAMODB": "", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "",
		"AWS_MAX_ATTEMPTS": "", "AWS_RETRY_MODE": "", "AWS_CA_BUNDLE": "", "AWS_USE_FIPS_ENDPOINT": "", "AWS_PROFILE": "",
		"AWS_DISABLE_CLOCK_SKEW_CORRECTION": "", "AWS_AUTH_SCHEME_PREFERENCE": "",
	}
	for k, v := range vars {
		base[k] = v
	}
	for k, v := range base {
		t.Setenv(k, v)
	}
}

// TestLambdaConfigReadsWhatLambdaProvides: the region, the role's
// credentials (with the session token) from the environment, as the SDK's
// default chain takes them there.
func TestLambdaConfigReadsWhatLambdaProvides(t *testing.T) {
	setLambdaEnv(t, nil)
	cfg, err := LambdaConfig()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "eu-west-1" || creds.AccessKeyID != "ASIAEXAMPLE" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("region %q, credentials %+v", cfg.Region, creds)
	}
	if cfg.BaseEndpoint != nil {
		t.Errorf("endpoint %q with no endpoint variable", *cfg.BaseEndpoint)
	}
}

// TestLambdaConfigHonoursTheClientVariables: the endpoint variables (the
// service's own over the general one, none when told to ignore them), the
// retry settings, FIPS, clock skew correction and the auth scheme
// preference reach the DynamoDB client, as with the default chain.
func TestLambdaConfigHonoursTheClientVariables(t *testing.T) {
	for _, c := range []struct {
		name     string
		vars     map[string]string
		endpoint string // "" for none
		check    func(dynamodb.Options) string
	}{
		{"general endpoint", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1"}, "http://127.0.0.1:1", nil},
		{"the service's endpoint wins", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:2"}, "http://127.0.0.1:2", nil},
		{"endpoints ignored", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:2", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}, "", nil},
		{"retries", map[string]string{"AWS_MAX_ATTEMPTS": "7", "AWS_RETRY_MODE": "adaptive"}, "", func(o dynamodb.Options) string {
			if o.RetryMaxAttempts != 7 || o.RetryMode != aws.RetryModeAdaptive {
				return "retries not honoured"
			}
			return ""
		}},
		{"fips", map[string]string{"AWS_USE_FIPS_ENDPOINT": "true"}, "", func(o dynamodb.Options) string {
			if o.EndpointOptions.UseFIPSEndpoint != aws.FIPSEndpointStateEnabled {
				return "FIPS not honoured"
			}
			return ""
		}},
		{"clock skew, auth schemes", map[string]string{"AWS_DISABLE_CLOCK_SKEW_CORRECTION": "true", "AWS_AUTH_SCHEME_PREFERENCE": "sigv4"}, "", func(o dynamodb.Options) string {
			if !o.DisableClockSkewCorrection || len(o.AuthSchemePreference) != 1 || o.AuthSchemePreference[0] != "sigv4" {
				return "clock skew correction or auth scheme preference not honoured"
			}
			return ""
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			setLambdaEnv(t, c.vars)
			cfg, err := LambdaConfig()
			if err != nil {
				t.Fatal(err)
			}
			o := dynamodb.NewFromConfig(cfg).Options()
			got := ""
			if o.BaseEndpoint != nil {
				got = *o.BaseEndpoint
			}
			if got != c.endpoint {
				t.Errorf("endpoint %q, want %q", got, c.endpoint)
			}
			if c.check != nil {
				if msg := c.check(o); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// TestLambdaConfigRefusesWhatItDoesNotRead: without the environment's
// credentials or region the default client is refused at init, with the
// fix (WithAWSConfig), never a client that fails every request.
func TestLambdaConfigRefusesWhatItDoesNotRead(t *testing.T) {
	setLambdaEnv(t, map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "dev"})
	if _, err := LambdaConfig(); !errors.Is(err, errNoEnvCredentials) || !strings.Contains(err.Error(), "WithAWSConfig") {
		t.Errorf("no credentials: %v", err)
	}
	setLambdaEnv(t, map[string]string{"AWS_REGION": ""})
	if _, err := LambdaConfig(); err == nil || !strings.Contains(err.Error(), "AWS_REGION") || !strings.Contains(err.Error(), "WithAWSConfig") {
		t.Errorf("no region: %v", err)
	}
	setLambdaEnv(t, map[string]string{"AWS_REGION": "", "AWS_DEFAULT_REGION": "us-east-2"})
	if cfg, err := LambdaConfig(); err != nil || cfg.Region != "us-east-2" {
		t.Errorf("AWS_DEFAULT_REGION: %q, %v", cfg.Region, err)
	}
	setLambdaEnv(t, map[string]string{"AWS_CA_BUNDLE": t.TempDir() + "/missing.pem"})
	if _, err := LambdaConfig(); err == nil || !strings.Contains(err.Error(), "AWS_CA_BUNDLE") {
		t.Errorf("missing CA bundle: %v", err)
	}
}
