package sdktests

import (
	"testing"

	"github.com/wai-dev/wai/host/backend"
)

// RunFilesystem runs the Filesystem conformance suite against b. Every
// check gets a workspace of its own, so that it can reason about the root.
func RunFilesystem(t *testing.T, b Backend) {
	t.Helper()
	s := newSuite(t, b)
	checks := fsChecks()
	for i := range checks {
		checks[i].fresh = true
	}
	s.run(t, checks)
}

// small caps results at 5 and reads at 64 bytes.
func small(l *backend.Limits) {
	l.MaxResults = 5
	l.MaxReadBytes = 64
}

// smallWrite caps writes at 10 characters.
func smallWrite(l *backend.Limits) { l.MaxWriteChars = 10 }

func fsChecks() []check {
	return []check{
		{name: "StatFileAndDir", fn: checkStat},
		{name: "StatRoot", fn: checkStatRoot},
		{name: "StatNormalizesPaths", fn: checkStatNormalizes},
		{name: "StatMissing", fn: checkStatMissing},
		{name: "NULInPathIsInvalid", fn: checkNULPath},
		{name: "ListSorted", fn: checkListSorted},
		{name: "ListErrors", fn: checkListErrors},
		{name: "ListCapped", fn: checkListCapped, limits: small},
		{name: "ReadLines", fn: checkReadLines},
		{name: "ReadOffsetLimit", fn: checkReadOffsetLimit},
		{name: "ReadLimitBounds", fn: checkReadLimitBounds, limits: small},
		{name: "ReadByteCap", fn: checkReadByteCap, limits: small},
		{name: "ReadErrors", fn: checkReadErrors},
		{name: "WriteCreate", fn: checkWriteCreate},
		{name: "WriteCreateRefusesExisting", fn: checkWriteCreateExisting},
		{name: "WriteOverwrite", fn: checkWriteOverwrite},
		{name: "WriteAppend", fn: checkWriteAppend},
		{name: "WriteMaxChars", fn: checkWriteMaxChars, limits: smallWrite},
		{name: "WriteErrors", fn: checkWriteErrors},
		{name: "EditUnique", fn: checkEditUnique},
		{name: "EditAmbiguousRefused", fn: checkEditAmbiguous},
		{name: "EditReplaceAll", fn: checkEditReplaceAll},
		{name: "EditErrors", fn: checkEditErrors, limits: smallWrite},
		{name: "Glob", fn: checkGlob},
		{name: "GlobUnderPath", fn: checkGlobUnderPath},
		{name: "GlobErrors", fn: checkGlobErrors},
		{name: "GlobCapped", fn: checkGlobCapped, limits: small},
		{name: "Grep", fn: checkGrep},
		{name: "GrepGlobFilter", fn: checkGrepGlob},
		{name: "GrepUnderPath", fn: checkGrepPath},
		{name: "GrepErrors", fn: checkGrepErrors},
		{name: "GrepCapped", fn: checkGrepCapped, limits: small},
		{name: "RemoveFile", fn: checkRemoveFile},
		{name: "RemoveDirectory", fn: checkRemoveDir},
		{name: "RemoveNeverRoot", fn: checkRemoveRoot},
		{name: "RemoveMissing", fn: checkRemoveMissing},
		{name: "CancelledContext", fn: checkFSCancelled},
		{name: "SparseFileStopsAtDeadline", needs: needPlant, fn: checkSparseDeadline},
		{name: "ResolvePathPlain", fn: checkResolvePlain},
		{name: "ResolvePathSymlinks", needs: needPlant, fn: checkResolveSymlinks},
		{name: "ResolvedWriteFollowsNoSymlink", needs: needPlant, fn: checkResolvedWriteUnfollowed},

		// Escapes: nothing resolves outside the root.
		{name: "DotDotStaysInside", fn: checkDotDot},
		{name: "AbsolutePathResolvesInside", fn: checkAbsoluteInside},
		{name: "SearchStaysInside", fn: checkSearchInside},
		{name: "SymlinkInsideResolvesChrootStyle", needs: needPlant, fn: checkSymlinkInside},
		{name: "SymlinkToEtcPasswd", needs: needPlant, fn: checkSymlinkPasswd},
		{name: "SymlinkOutOfRootUntouched", needs: needHostDir, fn: checkSymlinkOutside},
		{name: "DirSymlinkPointingUp", needs: needPlant, fn: checkDirSymlinkUp},
		{name: "FIFOFailsFast", needs: needPlant, fn: checkFIFO},
		{name: "DeviceSymlinkFailsFast", needs: needPlant, fn: checkDeviceSymlink},
	}
}
