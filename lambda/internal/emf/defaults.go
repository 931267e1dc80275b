package emf

import (
	"io"
	"log/slog"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// Defaults fills the zero values of what every source reports with, in one
// place: the metrics namespace (outcome.DefaultNamespace), the logger
// (outcome.NewLogger on standard error at INFO), the metrics writer
// (standard output) and the metrics line's level ("INFO").
func Defaults(namespace *string, logger **slog.Logger, metrics *io.Writer, level *string) {
	if *namespace == "" {
		*namespace = outcome.DefaultNamespace
	}
	if *logger == nil {
		*logger = outcome.NewLogger(os.Stderr, slog.LevelInfo)
	}
	if *metrics == nil {
		*metrics = os.Stdout
	}
	if *level == "" {
		*level = slog.LevelInfo.String()
	}
}
