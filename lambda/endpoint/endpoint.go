// Package endpoint starts an idempotent HTTP endpoint (package httpkey) in
// one call, from the runtime contract that the IdempotentEndpoint construct
// wrote into the function's environment: the guard over the contract's
// table, the client attribute that scopes keys and, for a webhook, the
// provider's verifier over its signing secrets, read from Secrets Manager at
// init. It is the HTTP shape's entry point, so that a queue or stream
// consumer's bootstrap links neither HTTP, webhook nor Secrets Manager code.
//
//	func main() {
//		endpoint.Start(mux)
//	}
package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
)

// SecretReader returns the value of the Secrets Manager secret arn
// (its SecretString).
type SecretReader func(ctx context.Context, arn string) (string, error)

// WithSecrets reads the webhook's secret through read instead of Secrets
// Manager's GetSecretValue (a test's, or a cache of your own).
func WithSecrets(read SecretReader) handler.Option {
	return func(o *build.Options) { o.Source[secretsOption] = read }
}

// secretsOption is WithSecrets' key in build.Options.Source.
const secretsOption = "http.secrets"

// FromEnv returns the idempotent HTTP handler that runs next once per key,
// configured from the function's environment: an HTTP endpoint's contract
// (contract.SourceHTTP), as the endpoint construct writes it. With a
// webhook provider (contract.WebhookProviderVar), its signing secrets
// are read once, here, from the Secrets Manager secret whose ARN the
// contract names (never from the environment): a secret that cannot be
// read, or holds no secret, fails the init.
func FromEnv(next http.Handler, opts ...handler.Option) (*httpkey.Handler, error) {
	env, err := build.Load(build.Resolve(opts), contract.SourceHTTP, "endpoint.Start", nil)
	if err != nil {
		return nil, err
	}
	s := env.Settings
	cfg := httpConfigOf(s)
	if cfg.Client, err = parseClient(s.ClientAttribute); err != nil {
		return nil, fmt.Errorf("configuration: %s: %w", contract.ClientAttributeVar, err)
	}
	if s.WebhookProvider != "" {
		read, _ := env.Opts.Source[secretsOption].(SecretReader)
		if read == nil {
			c, err := env.AWSConfig() // the store's, when Load built it
			if err != nil {
				return nil, err
			}
			read = func(ctx context.Context, arn string) (string, error) { return getSecretValue(ctx, c, arn) }
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		value, err := read(ctx, s.WebhookSecret)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s: the webhook's secret: %w", contract.WebhookSecretVar, err)
		}
		secrets, err := parseSecrets(value)
		if err != nil {
			return nil, fmt.Errorf("%s: the webhook's secret %s: %w", contract.WebhookSecretVar, s.WebhookSecret, err)
		}
		if cfg.Verifier, err = webhook.New(s.WebhookProvider, secrets); err != nil {
			return nil, fmt.Errorf("%s: %w", contract.WebhookProviderVar, err)
		}
	}
	cfg.Logger, cfg.Metrics, cfg.MetricsLevel, cfg.Region = env.Logger, env.Metrics, env.MetricsLevel, env.Region
	return httpkey.New(env.Guard, next, cfg), nil
}

// Start builds the handler with FromEnv and serves payload format 2.0
// events with it: a Lambda function URL's, or an API Gateway HTTP API
// route's, whose request and response follow the same schema (Lambda's
// "Invoking Lambda function URLs": "The request and response event formats
// follow the same schema as the Amazon API Gateway payload format version
// 2.0"). The request is read as an HTTP API event (a superset: a route's JWT
// claims too) and the response written with exactly the fields of that
// schema. It does not return; a configuration it cannot run with is logged
// as one JSON line at FATAL and ends the process with status 1.
func Start(next http.Handler, opts ...handler.Option) {
	build.Run(build.Resolve(opts), func() (any, error) {
		h, err := FromEnv(next, opts...)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.LambdaFunctionURLResponse, error) {
			res, err := h.HTTPAPI(ctx, e)
			return events.LambdaFunctionURLResponse{StatusCode: res.StatusCode, Headers: res.Headers, Body: res.Body, IsBase64Encoded: res.IsBase64Encoded, Cookies: res.Cookies}, err
		}, nil
	})
}

// getSecretValue reads the SecretString (or the SecretBinary, as text) of
// the Secrets Manager secret arn with the SDK's client on cfg, in the
// ARN's region (AWS_ENDPOINT_URL_SECRETS_MANAGER, or cfg's endpoint, when
// set: the client resolves them). The function's role needs
// secretsmanager:GetSecretValue on the secret (and kms:Decrypt on its key,
// if it is not the AWS managed one). A value that is not a secret's ARN is
// refused without being quoted, in case it is the secret itself.
func getSecretValue(ctx context.Context, cfg aws.Config, arn string) (string, error) {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 7 || parts[0] != "arn" || parts[2] != "secretsmanager" || parts[5] != "secret" {
		return "", fmt.Errorf("the value given is not the ARN of a Secrets Manager secret (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>); it is not quoted, in case it is the secret itself")
	}
	client := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.Region = parts[3] })
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	switch {
	case err != nil:
		return "", fmt.Errorf("GetSecretValue %s: %w", arn, err)
	case out.SecretString != nil:
		return *out.SecretString, nil
	case out.SecretBinary != nil:
		return string(out.SecretBinary), nil
	}
	return "", fmt.Errorf("GetSecretValue %s: the answer holds no SecretString", arn)
}

// parseSecrets reads the secrets of a Secrets Manager secret's value: a
// JSON array of strings (["new","old"], during a rotation) or one secret
// as it is. Empty secrets are refused.
func parseSecrets(value string) ([][]byte, error) {
	var list []string
	if strings.HasPrefix(strings.TrimSpace(value), "[") {
		if err := json.Unmarshal([]byte(value), &list); err != nil {
			return nil, fmt.Errorf("the secret looks like a JSON array but is not one of strings: %v", err)
		}
	} else {
		list = []string{value}
	}
	out := make([][]byte, 0, len(list))
	for i, s := range list {
		if s == "" {
			return nil, fmt.Errorf("secret %d of %d is empty", i+1, len(list))
		}
		out = append(out, []byte(s))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the secret lists no secret")
	}
	return out, nil
}

// parseClient returns the httpkey.ClientFunc that spec names
// (contract.ParseClient): "iam" (httpkey.ClientIAM), "claim:<name>"
// (httpkey.ClientClaim) or "header:<name>" (httpkey.ClientHeader); nil for
// contract.ClientNone and "". It is how the handler reads the contract's
// setting.
func parseClient(spec string) (httpkey.ClientFunc, error) {
	kind, name, err := contract.ParseClient(spec)
	switch kind {
	case "iam":
		return httpkey.ClientIAM(), err
	case "claim":
		return httpkey.ClientClaim(name), err
	case "header":
		return httpkey.ClientHeader(name), err
	}
	return nil, err
}

// httpConfigOf is the HTTP adapter's configuration for s, without what the
// handler builds (Verifier, Client, Logger, Metrics, MetricsLevel): the one
// place where the contract's settings become httpkey.Config.
func httpConfigOf(s contract.Settings) httpkey.Config {
	return httpkey.Config{
		Name:             s.Consumer,
		ReplayHeaders:    s.ReplayHeaders,
		HashHeaders:      s.HashHeaders,
		MaxBodyBytes:     s.MaxRequestBytes,
		MetricsNamespace: s.MetricsNamespace,
	}
}
