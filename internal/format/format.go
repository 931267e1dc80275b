// Package format writes the values of settings as the library's messages
// and the runtime contract write them, so that a rule reads the same in the
// guard, the batch adapter, the contract and the construct.
package format

import (
	"fmt"
	"time"
)

// Duration writes d as the shortest Go duration string in whole units
// ("24h", "90s", "1500ms"), which time.ParseDuration reads back exactly.
func Duration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	case d%time.Microsecond == 0:
		return fmt.Sprintf("%dus", d/time.Microsecond)
	default:
		return fmt.Sprintf("%dns", int64(d))
	}
}
