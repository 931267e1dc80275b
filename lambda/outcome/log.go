package outcome

import (
	"io"
	"log/slog"
)

// LogTimeKey is the key of a log line's time: "timestamp", in RFC 3339, as
// Lambda's log-level filtering reads it. Lambda documents that it applies
// the function's application log level to a JSON line only when the line
// has a valid "level" and a "timestamp" in RFC 3339; any other line is
// taken for INFO, and dropped at WARN and above.
const LogTimeKey = "timestamp"

// NewLogger returns a logger that writes JSON lines to w at level and
// above, each with a "level" that Lambda names (TRACE, DEBUG, INFO, WARN,
// ERROR or FATAL: see LevelName) and a "timestamp" in RFC 3339 (LogTimeKey),
// so that Lambda's advanced logging controls keep each line at its own
// level. It is every source's default logger (at INFO).
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				// The record's time (a caller's own "time" attribute of
				// another kind stays as it is), which slog writes in RFC
				// 3339 (time.RFC3339Nano).
				if a.Value.Kind() == slog.KindTime {
					a.Key = LogTimeKey
				}
			case slog.LevelKey:
				if l, ok := a.Value.Any().(slog.Level); ok {
					a.Value = slog.StringValue(LevelName(l))
				}
			}
			return a
		},
	}))
}

// LevelName is a slog level as Lambda's application log levels name it:
// TRACE below DEBUG, FATAL above ERROR, and slog's names between.
func LevelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "TRACE"
	case l > slog.LevelError:
		return "FATAL"
	}
	return l.String()
}
