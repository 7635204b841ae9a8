package main

import (
	"fmt"
	"strings"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/vfspath"
)

// loadReads reads each file through the filesystem capability (so the
// session records it as read) and returns path → text. Lines come back
// without their endings; they are joined with "\n", and the file's size
// says whether it ended with one.
func loadReads(paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	for i, p := range paths {
		text, err := readText(p)
		switch {
		case pdk.KindOf(err) == pdk.KindNotFound:
			return nil, invalid("reads[%d]: %s does not exist: create it first, or drop it from reads", i, vfspath.Display(p))
		case pdk.KindOf(err) == pdk.KindInvalid:
			return nil, invalid("reads[%d]: cannot read %s: %v", i, vfspath.Display(p), err)
		case err != nil:
			return nil, err
		}
		out[p] = text
	}
	return out, nil
}

func readText(p string) (string, error) {
	fi, err := pdk.FS.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.Kind == pdk.KindDir {
		return "", pdk.Errorf(pdk.KindInvalid, "it is a directory: name a file")
	}
	var lines []string
	for {
		r, err := pdk.FS.Read(pdk.ReadRequest{Path: p, Offset: len(lines)})
		if err != nil {
			return "", err
		}
		if r.Truncated {
			return "", pdk.Errorf(pdk.KindInvalid, "it is larger than one read returns (a line or the file is over the host's byte limit): open it with read_text in the code instead")
		}
		lines = append(lines, r.Lines...)
		if len(r.Lines) == 0 || len(lines) >= r.TotalLines {
			break
		}
	}
	text := strings.Join(lines, "\n")
	if int64(len(text)) < fi.Size {
		text += "\n"
	}
	return text, nil
}

// refuseExisting fails a call whose create-mode writes name existing
// files before anything runs or is written: create never overwrites.
func refuseExisting(writes []writeSpec, field string) error {
	for i, w := range writes {
		if w.Mode != string(pdk.WriteCreate) {
			continue
		}
		fi, err := pdk.FS.Stat(w.Path)
		switch {
		case err == nil && fi.Kind == pdk.KindDir:
			return invalid("%s[%d]: %s is a directory: name a file inside it", field, i, vfspath.Display(w.Path))
		case err == nil:
			return invalid("%s[%d]: %s exists, and mode create never overwrites: use mode overwrite or append (after reading the file in this session), or another path", field, i, vfspath.Display(w.Path))
		case pdk.KindOf(err) != pdk.KindNotFound:
			return err
		}
	}
	return nil
}

// applyWrites applies a successful run's writes through the filesystem
// capability, in order. Everything that can be checked first is (paths,
// sizes, create targets), so a write fails midway only when a policy,
// read-before-write or the backend refuses it; the writes made before it
// are reported, the rest are not attempted.
func applyWrites(writes []writeSpec) ([]writeSpec, error) {
	done := []writeSpec{}
	if err := refuseExisting(writes, "writes"); err != nil {
		return done, fmt.Errorf("%w; nothing was written", err)
	}
	for _, w := range writes {
		if _, err := pdk.FS.Write(pdk.WriteRequest{Path: w.Path, Content: w.Content, Mode: pdk.WriteMode(w.Mode)}); err != nil {
			written := "nothing was written"
			if len(done) > 0 {
				written = fmt.Sprintf("%d of %d writes were made before it, the rest were not attempted", len(done), len(writes))
			}
			return done, fmt.Errorf("%w: cannot write %s: %w; %s", errWrites, vfspath.Display(w.Path), err, written)
		}
		done = append(done, w)
	}
	return done, nil
}
