package emf

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// TestDefaultsFillOnlyTheZeroValues: the defaults every source reports
// with, and what a caller set kept.
func TestDefaultsFillOnlyTheZeroValues(t *testing.T) {
	var ns, level string
	var logger *slog.Logger
	var w io.Writer
	Defaults(&ns, &logger, &w, &level)
	if ns != outcome.DefaultNamespace || logger == nil || w != os.Stdout || level != "INFO" {
		t.Fatalf("defaults: %q %v %v %q", ns, logger, w, level)
	}
	mine, buf := slog.New(slog.DiscardHandler), &bytes.Buffer{}
	ns, logger, w, level = "Shop", mine, buf, "WARN"
	Defaults(&ns, &logger, &w, &level)
	if ns != "Shop" || logger != mine || w != buf || level != "WARN" {
		t.Fatalf("a caller's values replaced: %q %v %v %q", ns, logger, w, level)
	}
}
