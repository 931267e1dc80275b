package handler

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
)

// SecretReader returns the value of the Secrets Manager secret arn
// (its SecretString).
type SecretReader func(ctx context.Context, arn string) (string, error)

// WithSecrets reads the webhook's secret through read instead of Secrets
// Manager's GetSecretValue (a test's, or a cache of your own).
func WithSecrets(read SecretReader) Option {
	return func(o *options) { o.secrets = read }
}

// NewHTTP returns the idempotent HTTP handler that runs next once per key,
// configured from the function's environment: an HTTP endpoint's contract
// (contract.SourceHTTP), as the endpoint construct writes it. With a
// webhook provider (contract.Settings.WebhookProvider), its signing secrets
// are read once, here, from the Secrets Manager secret whose ARN the
// contract names (never from the environment): a secret that cannot be
// read, or holds no secret, fails the init.
func NewHTTP(next http.Handler, opts ...Option) (*httpkey.Handler, error) {
	o := resolve(opts)
	s, err := contract.Decode(o.getenv, o.getenv("AWS_LAMBDA_FUNCTION_NAME"))
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if s.Source != contract.SourceHTTP {
		return nil, fmt.Errorf("configuration: handler.NewHTTP serves an HTTP endpoint, but the function's contract is a %s consumer's (%s=%q): start the handler with the entry point of its source, or deploy it with the endpoint construct", s.Source, contract.SourceVar, s.Source)
	}
	cfg := s.HTTPConfig()
	if cfg.Client, err = httpkey.ParseClient(s.ClientAttribute); err != nil {
		return nil, fmt.Errorf("configuration: %s: %w", contract.ClientAttributeVar, err)
	}
	var awsCfg *aws.Config
	loadAWS := func() (aws.Config, error) {
		if awsCfg == nil {
			c := o.awsConfig
			if c == nil {
				loaded, err := config.LoadDefaultConfig(context.Background())
				if err != nil {
					return aws.Config{}, fmt.Errorf("aws configuration: %w", err)
				}
				c = &loaded
			}
			awsCfg = c
		}
		return *awsCfg, nil
	}
	if s.WebhookProvider != "" {
		read := o.secrets
		if read == nil {
			c, err := loadAWS()
			if err != nil {
				return nil, err
			}
			read = func(ctx context.Context, arn string) (string, error) { return GetSecretValue(ctx, c, arn) }
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		value, err := read(ctx, s.WebhookSecret)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s: the webhook's secret: %w", contract.WebhookSecretVar, err)
		}
		secrets, err := webhook.ParseSecrets(value)
		if err != nil {
			return nil, fmt.Errorf("%s: the webhook's secret %s: %w", contract.WebhookSecretVar, s.WebhookSecret, err)
		}
		if cfg.Verifier, err = webhook.New(s.WebhookProvider, secrets); err != nil {
			return nil, fmt.Errorf("%s: %w", contract.WebhookProviderVar, err)
		}
	}
	store := o.store
	if store == nil {
		if store, err = dynamoStore(o, s); err != nil {
			return nil, err
		}
	}
	guard, err := idempotency.NewGuard(store, s.GuardConfig())
	if err != nil {
		return nil, err
	}
	cfg.Logger, cfg.Metrics, cfg.MetricsLevel = o.logger, o.metrics, sqsbatch.LevelName(LogLevel(o.getenv))
	return httpkey.New(guard, next, cfg), nil
}

// StartHTTP builds the handler with NewHTTP and serves payload format 2.0
// events with it: a Lambda function URL's, or an API Gateway HTTP API
// route's, whose request and response follow the same schema (Lambda's
// "Invoking Lambda function URLs": "The request and response event formats
// follow the same schema as the Amazon API Gateway payload format version
// 2.0"). The request is read as an HTTP API event (a superset: a route's JWT
// claims too) and the response written with exactly the fields of that
// schema. It does not return; a configuration it cannot run with is logged
// as one JSON line at FATAL and ends the process with status 1.
func StartHTTP(next http.Handler, opts ...Option) {
	tuneGC(resolve(opts).getenv)
	h, err := NewHTTP(next, opts...)
	if err != nil {
		exit(opts, err)
	}
	lambda.Start(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.LambdaFunctionURLResponse, error) {
		res, err := h.HTTPAPI(ctx, e)
		return events.LambdaFunctionURLResponse{StatusCode: res.StatusCode, Headers: res.Headers, Body: res.Body, IsBase64Encoded: res.IsBase64Encoded, Cookies: res.Cookies}, err
	})
}

// GetSecretValue reads the SecretString (or the SecretBinary, as text) of
// the Secrets Manager secret arn with one GetSecretValue request, signed
// with cfg's credentials (Signature Version 4), in the ARN's region and
// partition, or at AWS_ENDPOINT_URL_SECRETS_MANAGER, else at
// cfg.BaseEndpoint (AWS_ENDPOINT_URL), when set. It speaks the service's JSON protocol itself, so that the
// handler links no Secrets Manager client (one request, once per execution
// environment); the function's role needs secretsmanager:GetSecretValue on
// the secret (and kms:Decrypt on its key, if it is not the AWS managed one).
func GetSecretValue(ctx context.Context, cfg aws.Config, arn string) (string, error) {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 7 || parts[0] != "arn" || parts[2] != "secretsmanager" || parts[5] != "secret" {
		return "", fmt.Errorf("the value given is not the ARN of a Secrets Manager secret (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>); it is not quoted, in case it is the secret itself")
	}
	region := parts[3]
	suffix := "amazonaws.com"
	if strings.HasPrefix(parts[1], "aws-cn") {
		suffix = "amazonaws.com.cn"
	}
	endpoint := "https://secretsmanager." + region + "." + suffix + "/"
	if v := os.Getenv("AWS_ENDPOINT_URL_SECRETS_MANAGER"); v != "" { // the service's own endpoint first, as the SDK reads it
		endpoint = v
	} else if cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != "" {
		endpoint = *cfg.BaseEndpoint
	}
	if cfg.Credentials == nil {
		return "", fmt.Errorf("GetSecretValue %s: no credentials", arn)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("GetSecretValue %s: credentials: %w", arn, err)
	}
	body, _ := json.Marshal(map[string]string{"SecretId": arn})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("GetSecretValue %s: %w", arn, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "secretsmanager.GetSecretValue")
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "secretsmanager", region, time.Now()); err != nil {
		return "", fmt.Errorf("GetSecretValue %s: sign: %w", arn, err)
	}
	var client aws.HTTPClient = http.DefaultClient
	if cfg.HTTPClient != nil {
		client = cfg.HTTPClient
	}
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("GetSecretValue %s: %w", arn, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("GetSecretValue %s: %w", arn, err)
	}
	var answer struct {
		SecretString *string `json:"SecretString"`
		SecretBinary *string `json:"SecretBinary"`
		Type         string  `json:"__type"`
		Message      string  `json:"message"`
		MessageCap   string  `json:"Message"`
	}
	_ = json.Unmarshal(out, &answer)
	if res.StatusCode != http.StatusOK {
		kind := answer.Type
		if i := strings.LastIndexByte(kind, '#'); i >= 0 {
			kind = kind[i+1:]
		}
		return "", fmt.Errorf("GetSecretValue %s: %d %s: %s%s", arn, res.StatusCode, kind, answer.Message, answer.MessageCap)
	}
	switch {
	case answer.SecretString != nil:
		return *answer.SecretString, nil
	case answer.SecretBinary != nil:
		b, err := base64.StdEncoding.DecodeString(*answer.SecretBinary)
		if err != nil {
			return "", fmt.Errorf("GetSecretValue %s: SecretBinary is not base64", arn)
		}
		return string(b), nil
	}
	return "", fmt.Errorf("GetSecretValue %s: the answer holds no SecretString", arn)
}
