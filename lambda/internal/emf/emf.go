// Package emf writes CloudWatch Embedded Metric Format lines: the one
// metrics line each adapter of the runtime library (queue batches, stream
// batches, HTTP requests) writes per invocation.
package emf

import (
	"encoding/json"
	"io"
	"slices"
	"time"
)

// TimeLayout is the line's timestamp: RFC 3339, to the millisecond, as Lambda
// writes its own.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Metric is one value of a line.
type Metric struct {
	Name  string
	Unit  string // "Count", "Milliseconds", …
	Value any    // a number
}

// Line is one Embedded Metric Format line with one set of dimensions.
type Line struct {
	Namespace string // the CloudWatch namespace
	// Dimensions are the metrics' dimensions, by name
	// (outcome.MetricDimensions): one dimension set of them all.
	Dimensions map[string]string
	// LevelKey and Level, and TimeKey, are written beside the metrics:
	// Lambda's log-level filtering reads a JSON line's level only when it
	// also has a valid RFC 3339 timestamp, and takes any other line for
	// INFO, which it drops at a higher application log level.
	LevelKey, Level string
	TimeKey         string
	Metrics         []Metric
}

// Write writes l as one JSON line, stamped now.
func Write(w io.Writer, l Line, now time.Time) error {
	line := make(map[string]any, len(l.Metrics)+len(l.Dimensions)+3)
	set := make([]string, 0, len(l.Dimensions))
	for name, value := range l.Dimensions {
		line[name] = value
		set = append(set, name)
	}
	slices.Sort(set)
	line[l.LevelKey] = l.Level
	line[l.TimeKey] = now.UTC().Format(TimeLayout)
	defs := make([]map[string]string, 0, len(l.Metrics))
	for _, m := range l.Metrics {
		defs = append(defs, map[string]string{"Name": m.Name, "Unit": m.Unit})
		line[m.Name] = m.Value
	}
	line["_aws"] = map[string]any{
		"Timestamp": now.UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace":  l.Namespace,
			"Dimensions": [][]string{set},
			"Metrics":    defs,
		}},
	}
	out, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}
