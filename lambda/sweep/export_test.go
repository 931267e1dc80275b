package sweep

// LogRun is logRun, for the test of the summary line.
var LogRun = logRun
