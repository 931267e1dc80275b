package ops

var ExitOK = exitOK
var ExitRefused = exitRefused
var ExitUsage = exitUsage
var WithOutput = withOutput
var WithAWSConfig = withAWSConfig

type JudgedMessage = judgedMessage
type RecordView = recordView
