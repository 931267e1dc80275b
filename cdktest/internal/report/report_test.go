package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest/internal/report"
)

// failure writes a validation report as CDK does and returns the panic
// message of a synthesis that names it.
func failure(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "validation-report.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return "ValidationFailed: Validation failed. A copy of this report can be found in: " + path
}

const nagReport = `{"pluginReports":[{"violations":[{"ruleName":"Annotation::error-annotation","description":" AwsSolutions-SQS4: The SQS queue does not require requests to use SSL. ","severity":"error",
"violatingConstructs":[{"constructPath":"Shop/Orders/Resource"},{"constructPath":"Shop/Refunds/Resource"}]}]}]}`

func TestRead(t *testing.T) {
	got, ok := report.Read(failure(t, nagReport))
	want := []report.Violation{
		{Rule: "Annotation::error-annotation", Severity: "error", Message: "AwsSolutions-SQS4: The SQS queue does not require requests to use SSL.", Path: "Shop/Orders/Resource"},
		{Rule: "Annotation::error-annotation", Severity: "error", Message: "AwsSolutions-SQS4: The SQS queue does not require requests to use SSL.", Path: "Shop/Refunds/Resource"},
	}
	if !ok || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Read = %v, %v; want one violation per construct: %v", got, ok, want)
	}
	for name, msg := range map[string]string{
		"no report named":  "some other jsii error",
		"report not there": "Validation failed. A copy of this report can be found in: /nonexistent/validation-report.json",
		"report not json":  failure(t, "{"),
	} {
		if v, ok := report.Read(msg); ok {
			t.Errorf("%s: Read = %v, true; want false", name, v)
		}
	}
}

func TestExplain(t *testing.T) {
	msg := failure(t, nagReport)
	got := report.Explain(msg)
	for _, want := range []string{msg, "\n  error /Shop/Orders/Resource: AwsSolutions-SQS4", "\n  error /Shop/Refunds/Resource: AwsSolutions-SQS4", "nagtest.Check or nagtest.NoFindings"} {
		if !strings.Contains(got, want) {
			t.Errorf("Explain lacks %q:\n%s", want, got)
		}
	}
	if got := report.Explain("some other jsii error"); got != "some other jsii error" {
		t.Errorf("Explain of another error = %q, want it unchanged", got)
	}
}
