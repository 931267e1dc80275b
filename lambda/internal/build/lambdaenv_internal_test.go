package build

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// lambdaEnvVars are the variables lambdaEnv reads, each unset by
// TestLambdaEnvReadsAsTheSDK before a case sets its own.
var lambdaEnvVars = []string{
	"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY",
	"AWS_SESSION_TOKEN", "AWS_ACCOUNT_ID", "AWS_CA_BUNDLE", "AWS_SDK_UA_APP_ID", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB",
	"AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_SECRETS_MANAGER", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_MAX_ATTEMPTS",
	"AWS_RETRY_MODE", "AWS_DEFAULTS_MODE", "AWS_ACCOUNT_ID_ENDPOINT_MODE", "AWS_REQUEST_CHECKSUM_CALCULATION",
	"AWS_RESPONSE_CHECKSUM_VALIDATION", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT", "AWS_ENABLE_ENDPOINT_DISCOVERY",
	"AWS_DISABLE_CLOCK_SKEW_CORRECTION", "AWS_AUTH_SCHEME_PREFERENCE",
}

// notRead are the fields of config.EnvConfig that lambdaEnv leaves out, and
// why: none configures the clients a Lambda function's default
// configuration builds. TestLambdaEnvReadsAsTheSDK fails on a field of a
// newer SDK that is neither read nor listed here.
var notRead = map[string]string{
	"ContainerCredentialsEndpoint":     "container credentials: Lambda puts the role's credentials in the environment",
	"ContainerCredentialsRelativePath": "container credentials",
	"ContainerAuthorizationToken":      "container credentials",
	"SharedConfigProfile":              "profiles: a function has no shared config file",
	"SharedCredentialsFile":            "shared files: a function has none",
	"SharedConfigFile":                 "shared files: a function has none",
	"WebIdentityTokenFilePath":         "STS web identity: Lambda gives the role's credentials",
	"RoleARN":                          "STS web identity",
	"RoleSessionName":                  "STS web identity",
	"EC2IMDSClientEnableState":         "instance metadata: a function has none",
	"EC2IMDSv1Disabled":                "instance metadata",
	"EC2IMDSEndpointMode":              "instance metadata",
	"EC2IMDSEndpoint":                  "instance metadata",
	"S3UseARNRegion":                   "S3 only: no S3 client is built",
	"S3DisableMultiRegionAccessPoints": "S3 only",
	"S3DisableExpressAuth":             "S3 only",
	"DisableRequestCompression":        "request compression: no operation of DynamoDB, SQS or Secrets Manager compresses",
	"RequestMinCompressSizeBytes":      "request compression",
	"RestrictFilePermissions":          "files the SDK writes (SSO token cache): none is written",
}

// TestLambdaEnvReadsAsTheSDK holds lambdaEnv to config.NewEnvConfig, which
// it replaces so that package config is not linked: every field of
// config.EnvConfig is read or listed in notRead with its reason, and for
// each case (every variable, valid values in their cases, values the SDK
// refuses) the same fields or the same refusal, and clients built on each
// (DynamoDB, SQS, Secrets Manager) resolve the same endpoint, FIPS,
// dual-stack and discovery options.
func TestLambdaEnvReadsAsTheSDK(t *testing.T) {
	ours, sdk := reflect.TypeFor[lambdaEnv](), reflect.TypeFor[config.EnvConfig]()
	for f := range sdk.Fields() {
		o, read := ours.FieldByName(f.Name)
		switch _, skipped := notRead[f.Name]; {
		case read && skipped:
			t.Errorf("EnvConfig.%s is read and listed in notRead", f.Name)
		case read && o.Type != f.Type:
			t.Errorf("lambdaEnv.%s is a %s, EnvConfig's a %s", f.Name, o.Type, f.Type)
		case !read && !skipped:
			t.Errorf("EnvConfig.%s (a newer SDK's variable?) is neither read by lambdaEnv nor listed in notRead with a reason", f.Name)
		}
	}
	for f := range ours.Fields() {
		if _, ok := sdk.FieldByName(f.Name); !ok {
			t.Errorf("lambdaEnv.%s is no field of EnvConfig", f.Name)
		}
	}
	cases := []map[string]string{
		{},
		{"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-2"},
		{"AWS_DEFAULT_REGION": "us-east-2"},
		{"AWS_ACCESS_KEY_ID": "ASIA1", "AWS_SECRET_ACCESS_KEY": "s1", "AWS_SESSION_TOKEN": "t", "AWS_ACCOUNT_ID": "123456789012"},
		{"AWS_ACCESS_KEY": "ASIA2", "AWS_SECRET_KEY": "s2"},
		{"AWS_ACCESS_KEY_ID": "ASIA1", "AWS_ACCESS_KEY": "ASIA2", "AWS_SECRET_ACCESS_KEY": "s1", "AWS_SECRET_KEY": "s2"},
		{"AWS_ACCESS_KEY_ID": "ASIA1", "AWS_SESSION_TOKEN": "t"},
		{"AWS_CA_BUNDLE": "/etc/ca.pem", "AWS_SDK_UA_APP_ID": "payments"},
		{"AWS_ENDPOINT_URL": "http://127.0.0.1:1"},
		{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:2", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:3", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:4"},
		{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:2", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "TRUE"},
		{"AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:3", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "false"},
		{"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "yes"},
		{"AWS_MAX_ATTEMPTS": "7", "AWS_RETRY_MODE": "adaptive"},
		{"AWS_RETRY_MODE": "Standard"},
		{"AWS_MAX_ATTEMPTS": "seven"},
		{"AWS_RETRY_MODE": "eager"},
		{"AWS_DEFAULTS_MODE": "in-region"},
		{"AWS_DEFAULTS_MODE": "Auto"},
		{"AWS_DEFAULTS_MODE": "fast"},
		{"AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled"},
		{"AWS_ACCOUNT_ID_ENDPOINT_MODE": "required"},
		{"AWS_ACCOUNT_ID_ENDPOINT_MODE": "Disabled"},
		{"AWS_REQUEST_CHECKSUM_CALCULATION": "WHEN_REQUIRED", "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_supported"},
		{"AWS_REQUEST_CHECKSUM_CALCULATION": "always"},
		{"AWS_RESPONSE_CHECKSUM_VALIDATION": "never"},
		{"AWS_USE_FIPS_ENDPOINT": "true", "AWS_USE_DUALSTACK_ENDPOINT": "True", "AWS_ENABLE_ENDPOINT_DISCOVERY": "auto"},
		{"AWS_USE_FIPS_ENDPOINT": "false", "AWS_USE_DUALSTACK_ENDPOINT": "false", "AWS_ENABLE_ENDPOINT_DISCOVERY": "FALSE"},
		{"AWS_USE_FIPS_ENDPOINT": "1"},
		{"AWS_USE_DUALSTACK_ENDPOINT": "on"},
		{"AWS_ENABLE_ENDPOINT_DISCOVERY": "Auto"},
		{"AWS_ENABLE_ENDPOINT_DISCOVERY": "sometimes"},
		{"AWS_DISABLE_CLOCK_SKEW_CORRECTION": "TRUE", "AWS_AUTH_SCHEME_PREFERENCE": " sigv4a , sigv4,,"},
		{"AWS_DISABLE_CLOCK_SKEW_CORRECTION": "false", "AWS_AUTH_SCHEME_PREFERENCE": ","},
		{"AWS_DISABLE_CLOCK_SKEW_CORRECTION": "no"},
	}
	for _, vars := range cases {
		t.Run("", func(t *testing.T) {
			for _, k := range lambdaEnvVars {
				t.Setenv(k, vars[k])
			}
			ours, err := readLambdaEnv()
			sdk, sdkErr := config.NewEnvConfig()
			if (err == nil) != (sdkErr == nil) {
				t.Fatalf("%v: our error %v, the SDK's %v", vars, err, sdkErr)
			}
			if err != nil {
				return
			}
			var want lambdaEnv
			w := reflect.ValueOf(&want).Elem()
			for i := range w.NumField() {
				w.Field(i).Set(reflect.ValueOf(sdk).FieldByName(w.Type().Field(i).Name))
			}
			if !reflect.DeepEqual(ours, want) {
				t.Errorf("%v:\n ours %+v\n sdk  %+v", vars, ours, want)
			}
			for name, options := range map[string]func(source any) any{
				"dynamodb": func(source any) any {
					o := dynamodb.NewFromConfig(aws.Config{ConfigSources: []any{source}}).Options()
					return []any{o.BaseEndpoint, o.EndpointOptions, o.EndpointDiscovery}
				},
				"sqs": func(source any) any {
					o := sqs.NewFromConfig(aws.Config{ConfigSources: []any{source}}).Options()
					return []any{o.BaseEndpoint, o.EndpointOptions}
				},
				"secretsmanager": func(source any) any {
					o := secretsmanager.NewFromConfig(aws.Config{ConfigSources: []any{source}}).Options()
					return []any{o.BaseEndpoint, o.EndpointOptions}
				},
			} {
				if got, want := options(ours), options(sdk); !reflect.DeepEqual(got, want) {
					t.Errorf("%v: %s client: ours %v, the SDK's %v", vars, name, got, want)
				}
			}
		})
	}
}
