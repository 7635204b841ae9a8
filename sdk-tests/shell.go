package sdktests

import (
	"testing"
	"time"

	"github.com/wai-dev/wai/host/backend"
)

// RunShell runs the Shell conformance suite against b.
func RunShell(t *testing.T, b Backend) {
	t.Helper()
	s := newSuite(t, b)
	s.run(t, shellChecks())
}

func shellChecks() []check {
	return []check{
		// The contract's protocol tests, and what a user of the protocol expects.
		{name: "Echo", needs: needProcesses, fn: checkEcho},
		{name: "NonexistentCommand", needs: needProcesses, fn: checkNonexistentCommand},
		{name: "ArgvIsNotInterpolated", needs: needProcesses, fn: checkArgvNotInterpolated},
		{name: "ShellStringIsInterpreted", needs: needProcesses, fn: checkShellString},
		{name: "ExitCodes", needs: needProcesses, fn: checkExitCodes},
		{name: "KilledBySignal", needs: needProcesses, fn: checkKilledBySignal},
		{name: "EnvExtend", needs: needProcesses, fn: checkEnvExtend},
		{name: "EnvReplaceKeepsOnlyPath", needs: needProcesses, fn: checkEnvReplace},
		{name: "CwdDefaultIsRoot", needs: needProcesses, fn: checkCwdDefault},
		{name: "CwdSubdirectory", needs: needProcesses, fn: checkCwdSubdir},
		{name: "CwdMissingIsInvalid", fn: checkCwdMissing},
		{name: "CwdFileIsInvalid", fn: checkCwdFile},
		{name: "CwdDotDotStaysInside", needs: needProcesses, fn: checkCwdDotDot},
		{name: "CwdSymlinkOutStaysInside", needs: needProcesses | needPlant, fn: checkCwdSymlinkOut},
		{name: "Stdin", needs: needProcesses, fn: checkStdin},
		{name: "NoStdinIsEOF", needs: needProcesses, fn: checkNoStdin},
		{name: "StdinNearLimitDoesNotDeadlock", needs: needProcesses, fn: checkLargeStdin},
		{name: "ScriptSh", needs: needProcesses, fn: checkScriptSh},
		{name: "ScriptCwdAndEnv", needs: needProcesses, fn: checkScriptCwdEnv},
		{name: "ScriptLeavesNoFile", needs: needProcesses, fresh: true, fn: checkScriptLeavesNoFile},
		{name: "ScriptPython", needs: needPython, fn: checkScriptPython},
		{name: "ScriptMissingInterpreter", needs: needProcesses, fn: checkScriptMissingInterpreter},
		{name: "WhichFound", needs: needProcesses, fn: checkWhichFound},
		{name: "WhichMissing", fn: checkWhichMissing},
		{name: "WhichEmptyIsInvalid", fn: checkWhichEmpty},
		{name: "WhichDoesNotRunItsArgument", needs: needProcesses, fn: checkWhichNoInjection},
		{name: "EnvSnapshot", fn: checkEnvSnapshot},
		{name: "EnvSnapshotMatchesCommands", needs: needProcesses, fn: checkEnvSnapshotMatches},
		{name: "FilesSharedWithFilesystem", needs: needProcesses, fn: checkSharedFiles},
		{name: "Info", fn: checkInfo, limits: func(l *backend.Limits) { l.DefaultTimeout = 7 * time.Second }},
		{name: "ResultsSayWhereTheyRan", fn: checkResultsStamped},

		// Timeouts and process trees.
		{name: "Timeout", needs: needProcesses, fn: checkTimeout},
		{name: "TimeoutKeepsPartialOutput", needs: needProcesses, fn: checkTimeoutPartialOutput},
		{name: "TimeoutKillsProcessTree", needs: needProcesses, fn: checkTimeoutKillsTree},
		{name: "ScriptTimeoutKillsProcessTree", needs: needProcesses, fn: checkScriptTimeoutKillsTree},
		{name: "DefaultTimeoutApplies", needs: needProcesses, fn: checkDefaultTimeout,
			limits: func(l *backend.Limits) { l.DefaultTimeout = time.Second }},
		{name: "BackgroundChildDoesNotHangCall", needs: needProcesses, fn: checkBackgroundChild},
		{name: "ContextCancelKillsProcessTree", needs: needProcesses, fn: checkContextCancel},
		{name: "CancelledContextRunsNothing", fn: checkCancelledContext},

		// Output.
		{name: "Truncation", needs: needProcesses, fn: checkTruncation,
			limits: func(l *backend.Limits) { l.MaxOutputBytes = 1024 }},
		{name: "NoTruncationUnderLimit", needs: needProcesses, fn: checkNoTruncation,
			limits: func(l *backend.Limits) { l.MaxOutputBytes = 1024 }},
		{name: "CaptureOff", needs: needProcesses, fn: checkCaptureOff},
		{name: "InvalidUTF8Replaced", needs: needProcesses, fn: checkInvalidUTF8},
		{name: "HundredMegabytesBoundedMemory", needs: needProcesses, sequential: true, slow: 3, fn: checkBoundedMemory},
		{name: "ConcurrentExecutesDoNotMix", needs: needProcesses, fn: checkConcurrent},

		// Live output (ExecRequest.Output).
		{name: "OutputStreamsBeforeEnd", needs: needStreaming, fn: checkStreamsBeforeEnd},
		{name: "OutputStreamsInOrderPastTheCap", needs: needStreaming, fn: checkStreamOrder,
			limits: func(l *backend.Limits) { l.MaxOutputBytes = 1024 }},
		{name: "OutputStreamsUntilTimeout", needs: needStreaming, fn: checkStreamTimeout},
		{name: "OutputDiscardedIsNotStreamed", needs: needStreaming, fn: checkStreamDiscard},
		{name: "OutputStreamsFromScripts", needs: needStreaming, fn: checkStreamScript},

		// Limits: every one rejected with ErrInvalid before anything runs.
		{name: "LimitsRejectedBeforeRunning", fn: checkLimitsRejected},
		{name: "ScriptLimitsRejectedBeforeRunning", fn: checkScriptLimitsRejected},

		// Sandbox checks, for backends that declare a sandbox.
		{name: "SandboxHidesHostFiles", needs: needSandbox, fn: checkSandboxHostFiles},
		{name: "SandboxHidesHostProcesses", needs: needSandbox, fn: checkSandboxHostProcesses},
		{name: "SandboxHasNoNetwork", needs: needSandbox | needNoNetwork, fn: checkSandboxNoNetwork},
	}
}
