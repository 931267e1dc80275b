package outcome_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// TestLoggerLinesKeepTheirLevel: every line of NewLogger, the adapter's
// default logger and the handler's, carries what Lambda's advanced logging
// controls need to keep its level (documented: a JSON line with a valid
// "level" and a "timestamp" in RFC 3339; any other is INFO), at each of
// Lambda's levels, named as Lambda names them.
func TestLoggerLinesKeepTheirLevel(t *testing.T) {
	var buf bytes.Buffer
	log := outcome.NewLogger(&buf, slog.LevelDebug-4)
	for _, l := range []struct {
		level slog.Level
		name  string
	}{{slog.LevelDebug - 4, "TRACE"}, {slog.LevelDebug, "DEBUG"}, {slog.LevelInfo, "INFO"}, {slog.LevelWarn, "WARN"}, {slog.LevelError, "ERROR"}, {slog.LevelError + 4, "FATAL"}} {
		buf.Reset()
		log.LogAttrs(context.Background(), l.level, "record", slog.String("time", "a field of the caller's"), slog.Group("g", slog.String("level", "inner")))
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("%s: not one JSON line: %q", l.name, buf.String())
		}
		ts, _ := line["timestamp"].(string)
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			t.Errorf("%s: timestamp %q is not RFC 3339: %q", l.name, ts, buf.String())
		}
		if line["level"] != l.name {
			t.Errorf("level %v, want %s: %q", line["level"], l.name, buf.String())
		}
		if line["time"] != "a field of the caller's" || !strings.Contains(buf.String(), `"g":{"level":"inner"}`) {
			t.Errorf("the caller's own attributes changed: %q", buf.String())
		}
	}
}
