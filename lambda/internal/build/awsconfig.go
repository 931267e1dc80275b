package build

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// errNoEnvCredentials is the init error of a default client whose
// environment holds no credentials: Lambda always sets them.
var errNoEnvCredentials = errors.New("no credentials in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, which Lambda sets from the function's role): " +
	"the default configuration reads only the environment Lambda provides; outside Lambda (profiles, SSO, web identity, container or instance credentials), " +
	"build the configuration with config.LoadDefaultConfig and pass it with handler.WithAWSConfig")

// LambdaConfig is the AWS configuration of the default client: the
// environment Lambda provides, read as the SDK reads it (lambdaEnv: the
// variables of config.NewEnvConfig that configure a client, parsed the same
// way), and nothing else. A function's region and its role's credentials
// are in its environment (AWS_REGION, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), so the default path links none
// of what config.LoadDefaultConfig resolves besides: shared config and
// credentials files, profiles, SSO, STS web identity, the container and
// instance metadata providers (DESIGN.md, "What a consumer process costs").
//
// The variables that tune a client are honoured as LoadDefaultConfig does:
// the endpoints (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB,
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS), AWS_CA_BUNDLE, AWS_MAX_ATTEMPTS,
// AWS_RETRY_MODE, AWS_DEFAULTS_MODE, AWS_SDK_UA_APP_ID,
// AWS_DISABLE_CLOCK_SKEW_CORRECTION, AWS_AUTH_SCHEME_PREFERENCE, the FIPS
// and dual-stack endpoints, the account-id endpoint mode and the checksum
// settings (the client reads the last ones from the environment itself,
// through ConfigSources). No file is read: a Lambda function has none.
// WithAWSConfig takes a configuration of any other origin.
func LambdaConfig() (aws.Config, error) {
	env, err := readLambdaEnv()
	if err != nil {
		return aws.Config{}, err
	}
	if env.Region == "" {
		return aws.Config{}, errors.New("no region in the environment (AWS_REGION, which Lambda sets): set it, or pass a configuration with handler.WithAWSConfig")
	}
	if !env.Credentials.HasKeys() {
		return aws.Config{}, errNoEnvCredentials
	}
	cfg := aws.Config{
		Region:                     env.Region,
		Credentials:                credentials.StaticCredentialsProvider{Value: env.Credentials, Source: []aws.CredentialSource{aws.CredentialSourceEnvVars}},
		RetryMaxAttempts:           env.RetryMaxAttempts,
		RetryMode:                  env.RetryMode,
		DefaultsMode:               env.DefaultsMode,
		AppID:                      env.AppID,
		AccountIDEndpointMode:      env.AccountIDEndpointMode,
		RequestChecksumCalculation: env.RequestChecksumCalculation,
		ResponseChecksumValidation: env.ResponseChecksumValidation,
		DisableClockSkewCorrection: env.DisableClockSkewCorrection != nil && *env.DisableClockSkewCorrection,
		AuthSchemePreference:       env.AuthSchemePreference,
		// The client resolves the service's own endpoint, the FIPS and
		// dual-stack endpoints and endpoint discovery from its sources.
		ConfigSources: []any{env},
	}
	if env.BaseEndpoint != "" && (env.IgnoreConfiguredEndpoints == nil || !*env.IgnoreConfiguredEndpoints) {
		cfg.BaseEndpoint = aws.String(env.BaseEndpoint)
	}
	base := awshttp.NewBuildableClient()
	if env.CustomCABundle != "" {
		pool, err := caBundle(env.CustomCABundle)
		if err != nil {
			return aws.Config{}, err
		}
		base = base.WithTransportOptions(func(t *http.Transport) {
			if t.TLSClientConfig == nil {
				t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			t.TLSClientConfig.RootCAs = pool
		})
	}
	cfg.HTTPClient = base
	return cfg, nil
}

// caBundle reads the PEM certificates of AWS_CA_BUNDLE, which replace the
// system's roots, as the SDK's default configuration does.
func caBundle(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("AWS_CA_BUNDLE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("AWS_CA_BUNDLE %s holds no PEM certificate", path)
	}
	return pool, nil
}

// awsConfigOf is the AWS configuration of o's clients other than the
// store's: the caller's (WithAWSConfig), the one the store was built on, or
// LambdaConfig's.
func awsConfigOf(o *Options) (aws.Config, error) {
	if o.AWSConfig == nil {
		cfg, err := LambdaConfig()
		if err != nil {
			return aws.Config{}, fmt.Errorf("aws configuration: %w", err)
		}
		o.AWSConfig = &cfg
	}
	return *o.AWSConfig, nil
}
