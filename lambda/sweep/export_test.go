package sweep

import "encoding/json"

// LogRun is logRun, for the test of the summary line.
var LogRun = logRun

// CursorOf is the cursor the handler reads from an invocation's event.
func CursorOf(payload []byte) (*Cursor, error) {
	var e event
	err := json.Unmarshal(payload, &e)
	return e.Next, err
}
