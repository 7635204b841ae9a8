package backend

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

func TestErrors(t *testing.T) {
	err := Errorf(ErrInvalid, "fs.read", "a.txt", "offset %d is negative", -1)
	if err.Error() != "fs.read a.txt: offset -1 is negative" {
		t.Fatalf("Error() = %q", err)
	}
	if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound) || KindOf(err) != ErrInvalid {
		t.Fatal("kind not matched")
	}
	var be *Error
	if !errors.As(err, &be) || be.Op != "fs.read" || be.Path != "a.txt" {
		t.Fatalf("errors.As: %+v", be)
	}
	withCause := &Error{Kind: ErrUnavailable, Op: "open", Msg: "service down", Err: syscall.ECONNREFUSED}
	if !errors.Is(withCause, ErrUnavailable) || !errors.Is(withCause, syscall.ECONNREFUSED) {
		t.Fatal("kind and cause must both match")
	}
	if withCause.Error() != "open: service down: connection refused" {
		t.Fatalf("Error() = %q", withCause)
	}
	if (&Error{Kind: ErrInvalid, Msg: "bare"}).Error() != "bare" {
		t.Fatal("an error without op or path is its message")
	}
	// ErrNotFound and ErrExist are the io/fs ones, so stdlib checks agree.
	if !errors.Is(Errorf(ErrNotFound, "fs.stat", "x", "no"), fs.ErrNotExist) || !errors.Is(Errorf(ErrExist, "", "", "x"), os.ErrExist) {
		t.Fatal("ErrNotFound/ErrExist are not io/fs's")
	}
	for _, k := range []error{ErrInvalid, ErrPermission, ErrUnavailable, ErrNotFound, ErrExist} {
		if KindOf(Errorf(k, "op", "", "m")) != k {
			t.Errorf("KindOf lost %v", k)
		}
	}
	if KindOf(errors.New("internal")) != nil || KindOf(nil) != nil {
		t.Fatal("an error of no kind has no kind")
	}
}
