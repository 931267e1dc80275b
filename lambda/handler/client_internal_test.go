package handler

import "testing"

// TestAWSConfigIsTheHandlersOwn: an effect's own client gets the
// configuration the handler's default client gets, from the environment
// Lambda provides (the endpoint included, as the demo's kumo needs).
func TestAWSConfigIsTheHandlersOwn(t *testing.T) {
	setLambdaEnv(t, map[string]string{"AWS_REGION": "eu-west-3", "AWS_ENDPOINT_URL": "http://127.0.0.1:4566"})
	cfg, err := AWSConfig()
	if err != nil || cfg.Region != "eu-west-3" || cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:4566" {
		t.Fatalf("%+v, %v", cfg, err)
	}
	setLambdaEnv(t, map[string]string{"AWS_ACCESS_KEY_ID": ""})
	if _, err := AWSConfig(); err == nil {
		t.Error("no credentials in the environment: accepted")
	}
}
