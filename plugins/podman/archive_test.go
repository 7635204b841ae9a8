//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package podman

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// writeOne writes one regular file of size bytes.
func writeOne(size int) func(*tar.Writer) error {
	return func(tw *tar.Writer) error {
		return addTarFile(tw, archiveFile{"f", 0o644, bytes.Repeat([]byte("x"), size)}, time.Unix(1700000000, 0))
	}
}

// readN is an upload that reads n bytes of the stream and reports success.
func readN(n int) func(io.Reader) error {
	return func(r io.Reader) error {
		_, err := io.ReadFull(r, make([]byte, n))
		return err
	}
}

// An upload the service reports done is a success only when it had every
// entry: one cut short is an error although the service said none, and
// only the archive's end marker may go unread.
func TestStreamUploadReportsShortUploads(t *testing.T) {
	t.Parallel()
	errUpload := errors.New("upload failed")
	errWrite := errors.New("a file changed")
	const entry = 512 + 600 // a header and the file's 600 bytes
	for _, tc := range []struct {
		name   string
		upload func(io.Reader) error
		write  func(*tar.Writer) error
		want   error
	}{
		{"read to the end", func(r io.Reader) error {
			_, err := io.Copy(io.Discard, r)
			return err
		}, writeOne(600), nil},
		{"every entry but not the end marker", readN(entry), writeOne(600), nil},
		{"answered before the file's bytes", readN(512 + 100), writeOne(600), errShortUpload},
		{"answered before anything", readN(0), writeOne(600), errShortUpload},
		{"upload failed", func(io.Reader) error { return errUpload }, writeOne(600), errUpload},
		{"write failed", readN(0), func(*tar.Writer) error { return errWrite }, errWrite},
	} {
		if err := streamUpload(tc.upload, tc.write); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// What a full upload carries is the entries written, as a tar stream.
func TestStreamUploadCarriesTheEntries(t *testing.T) {
	t.Parallel()
	var got bytes.Buffer
	err := streamUpload(func(r io.Reader) error {
		_, err := io.Copy(&got, r)
		return err
	}, writeOne(600))
	if err != nil {
		t.Fatal(err)
	}
	h, err := tar.NewReader(&got).Next()
	if err != nil || h.Name != "f" || h.Size != 600 {
		t.Fatalf("the upload carried %+v (%v)", h, err)
	}
}
