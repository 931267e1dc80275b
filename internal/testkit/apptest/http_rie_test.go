package apptest_test

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// secretARN is the ARN of the webhook's secret in the endpoint's contract.
const secretARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:github-AbCdEf"

// TestHTTPUnderTheRuntimeEmulator runs the real bootstrap of an HTTP
// endpoint (testdata/httpmain: endpoint.Start) under aws-lambda-rie, as
// Lambda runs it: its contract in the environment, its webhook secret read
// at init from a Secrets Manager endpoint (a fake that checks the signed
// GetSecretValue), its records in DynamoDB (dynalite). Function URL events
// signed as GitHub signs (its published test vector) run the effect once;
// the redelivery is the replay; a forged delivery is 401.
func TestHTTPUnderTheRuntimeEmulator(t *testing.T) {
	root, err := modroot.OfWorkingDirectory()
	if err != nil {
		t.Fatal(err)
	}
	rie := filepath.Join(root, ".tools", "bin", "aws-lambda-rie")
	if _, err := os.Stat(rie); err != nil {
		t.Fatalf("aws-lambda-rie is not installed (run `make tools`): %v", err)
	}
	bootstrap := filepath.Join(t.TempDir(), "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bootstrap, "./testdata/httpmain")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	db := dynalite.Start(t)
	tableName := db.NewTable(t)
	var secretCalls sync.Map
	secrets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secretCalls.Store(r.Header.Get("X-Amz-Target"), r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(`{"SecretString":"[\"rotated-in\",\"It's a Secret to Everybody\"]"}`))
	}))
	defer secrets.Close()

	s := contract.Defaults(10 * time.Second)
	s.Table, s.Namespace, s.Consumer = tableName, "hooks", "Hooks/GitHub"
	s.Source, s.WebhookProvider, s.WebhookSecret = contract.SourceHTTP, "github", secretARN
	s.Window = contract.ProviderWindow("github")
	env := []string{"PATH=" + os.Getenv("PATH"), "AWS_REGION=eu-west-1", "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=secret",
		"AWS_ENDPOINT_URL_DYNAMODB=" + db.URL, "AWS_ENDPOINT_URL_SECRETS_MANAGER=" + secrets.URL,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
	for k, v := range s.Encode() {
		env = append(env, k+"="+v)
	}
	url, logs, logged := startRIE(t, rie, bootstrap, env)

	invoke := func(e events.LambdaFunctionURLRequest) events.LambdaFunctionURLResponse {
		t.Helper()
		payload, _ := json.Marshal(e)
		res, err := http.Post(url, "application/json", bytes.NewReader(payload))
		if err != nil {
			t.Fatalf("%v\nlogs:\n%s", err, logs())
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		var out events.LambdaFunctionURLResponse
		if err := json.Unmarshal(body, &out); err != nil || out.StatusCode == 0 {
			t.Fatalf("the emulator answered %d %s (%v)\nlogs:\n%s", res.StatusCode, body, err, logs())
		}
		return out
	}
	delivery := func(sig string) events.LambdaFunctionURLRequest {
		return events.LambdaFunctionURLRequest{Version: "2.0", RawPath: "/", Body: "Hello, World!",
			Headers: map[string]string{"x-hub-signature-256": sig, "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
			RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "req-1",
				HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/"}}}
	}
	const vector = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	first := invoke(delivery(vector))
	if first.StatusCode != 202 || !strings.Contains(first.Body, `"run":1`) || first.Headers[httpkey.HeaderReplayed] != "" {
		t.Fatalf("first delivery: %+v\nlogs:\n%s", first, logs())
	}
	again := invoke(delivery(vector))
	if again.StatusCode != 202 || again.Body != first.Body || again.Headers[httpkey.HeaderReplayed] != "true" {
		t.Fatalf("redelivery: %+v", again)
	}
	mac := hmac.New(sha256.New, []byte("guessed"))
	mac.Write([]byte("Hello, World!"))
	if forged := invoke(delivery(fmt.Sprintf("sha256=%x", mac.Sum(nil)))); forged.StatusCode != 401 {
		t.Fatalf("forged: %+v", forged)
	}
	auth, _ := secretCalls.Load("secretsmanager.GetSecretValue")
	if a, _ := auth.(string); !strings.Contains(a, "/eu-west-1/secretsmanager/aws4_request") {
		t.Errorf("the secret was not read with a signed GetSecretValue: %q", a)
	}
	// The handler's lines reach us through the emulator's output, after its
	// answers: wait for the three, line by line.
	var lines []map[string]any
	for deadline := time.After(10 * time.Second); ; {
		lines = lines[:0]
		for _, l := range strings.Split(logs(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
				lines = append(lines, m)
			}
		}
		if len(lines) >= 3 {
			break
		}
		select {
		case <-logged:
		case <-deadline:
			t.Fatalf("%d request lines after 10s:\n%s", len(lines), logs())
		}
	}
	if len(lines) != 3 || lines[0]["outcome"] != "processed" || lines[1]["outcome"] != "duplicate" || lines[2]["outcome"] != "unauthorized" || lines[2]["request_id"] != "req-1" {
		t.Errorf("request lines: %v", lines)
	}
	if strings.Contains(logs(), "It's a Secret") {
		t.Error("the logs hold the secret")
	}
}

// startRIE starts the emulator with bootstrap on free loopback ports and
// returns its invocation URL, a reader of everything it printed, and a
// channel that is signalled after each line.
func startRIE(t *testing.T, rie, bootstrap string, env []string) (string, func() string, <-chan struct{}) {
	t.Helper()
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	invokeAddr, apiAddr := free(), free()
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", apiAddr, bootstrap)
	cmd.Env = append(env, "AWS_LAMBDA_FUNCTION_TIMEOUT=10", "AWS_LAMBDA_FUNCTION_NAME=hooks", "LOG_LEVEL=warn")
	var mu sync.Mutex
	var out strings.Builder
	logged := make(chan struct{}, 1)
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Go(func() {
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				mu.Lock()
				out.WriteString(sc.Text() + "\n")
				mu.Unlock()
				select {
				case logged <- struct{}{}:
				default:
				}
			}
		})
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	logs := func() string { mu.Lock(); defer mu.Unlock(); return out.String() }
	// The emulator is another process: poll its port until it listens (a
	// readiness wait bounded at 10s, not a timed assertion).
	exited := make(chan struct{})
	go func() { wg.Wait(); close(exited) }()
	deadline := time.After(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", invokeAddr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("the emulator exited:\n%s", logs())
		case <-deadline:
			t.Fatalf("the emulator did not listen on %s:\n%s", invokeAddr, logs())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return "http://" + invokeAddr + "/2015-03-31/functions/function/invocations", logs, logged
}
