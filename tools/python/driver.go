package main

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/vfspath"
)

// driverSource runs inside the sandbox; see its header.
//
//go:embed driver.py
var driverSource string

// bootstrap is python3's -c argument: it reads the driver and the inputs
// from stdin as one JSON document and runs the driver with them, so the
// command line stays a constant a policy can recognise.
const bootstrap = "import sys,json;d=json.loads(sys.stdin.buffer.read());" +
	"exec(compile(d.pop('driver'),'<wai-eval>','exec'),{'__name__':'__wai__','INPUT':d})"

// driverInput is the JSON document on the driver's stdin.
type driverInput struct {
	Driver        string            `json:"driver"`
	Marker        string            `json:"marker"`
	Code          string            `json:"code"`
	Mode          string            `json:"mode"`
	Globals       map[string]string `json:"globals"`
	Reads         map[string]string `json:"reads"`
	Writes        []writeSpec       `json:"writes"`
	StreamChars   int               `json:"stream_chars"`
	MaxWriteChars int               `json:"max_write_chars"`
	MaxWrites     int               `json:"max_writes"`
	MaxGlobals    int               `json:"max_globals"`
	ReprChars     int               `json:"repr_chars"`
	// BudgetMS is when the driver stops the code itself, short of the
	// host's timeout, so a stopped run still reports its globals; the
	// host's kill at the timeout stays the limit that cannot be dodged.
	BudgetMS int64 `json:"budget_ms"`
}

func newInput(c checked, reads map[string]string, timeout time.Duration) (driverInput, error) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return driverInput{}, err
	}
	g := c.globals
	if g == nil {
		g = map[string]string{}
	}
	return driverInput{
		Driver: driverSource, Marker: "\x1ewai-eval-" + hex.EncodeToString(nonce) + ":",
		Code: c.code, Mode: c.mode, Globals: g, Reads: reads, Writes: c.writes,
		// A little over the limit, so shellfmt.Chars marks a cut stream.
		StreamChars: maxStreamChars + 64, MaxWriteChars: maxWriteChars, MaxWrites: maxWrites,
		MaxGlobals: maxGlobalsOut, ReprChars: maxReprChars, BudgetMS: budget(timeout).Milliseconds(),
	}, nil
}

// record is what the driver reports after its marker: zlib-compressed
// JSON in base64, so a run's pending writes fit the host's output cap.
type record struct {
	ValueRepr *string                    `json:"value_repr"`
	Globals   map[string]json.RawMessage `json:"globals"`
	Writes    []writeSpec                `json:"writes"`
	Status    int                        `json:"status"`
	TimedOut  bool                       `json:"timed_out"`
}

// budget is when the driver stops the code, for a host kill at timeout:
// budgetMargin before it, or half of a timeout too short for that.
func budget(timeout time.Duration) time.Duration {
	return max(timeout-budgetMargin, timeout/2)
}

// budgetMargin is the time left, after the driver's budget, for it to
// report before the host kills python3.
const budgetMargin = 700 * time.Millisecond

// Caps on what a record may hold, whatever printed it: the code shares
// the process with the driver and could forge a record, so nothing in one
// is trusted beyond what the code could have asked for itself.
const (
	maxPayloadChars = 4 << 20
	maxRecordBytes  = 8 << 20
)

var errNoRecord = errors.New("the run ended without its result record")

// parseRecord splits stdout into what the code printed and the record
// after the last marker, checked strictly.
func parseRecord(stdout, marker string, in driverInput) (string, record, error) {
	var rec record
	i := strings.LastIndex(stdout, marker)
	if i < 0 {
		return stdout, rec, errNoRecord
	}
	printed, payload := stdout[:i], strings.TrimSuffix(stdout[i+len(marker):], "\n")
	if len(payload) > maxPayloadChars || strings.ContainsAny(payload, " \n[]") {
		return printed, rec, fmt.Errorf("%w: the record is cut or malformed (was the output over the host's limit?)", errNoRecord)
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return printed, rec, fmt.Errorf("%w: %v", errNoRecord, err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return printed, rec, fmt.Errorf("%w: %v", errNoRecord, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, maxRecordBytes+1))
	if err != nil || len(data) > maxRecordBytes {
		return printed, rec, fmt.Errorf("%w: unreadable or over %d bytes", errNoRecord, maxRecordBytes)
	}
	if err := pdk.DecodeStrict(data, &rec); err != nil {
		return printed, rec, fmt.Errorf("%w: %v", errNoRecord, err)
	}
	return printed, rec, checkRecord(rec, in)
}

func checkRecord(rec record, in driverInput) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errNoRecord, fmt.Sprintf(format, args...))
	}
	if rec.ValueRepr != nil && utf8.RuneCountInString(*rec.ValueRepr) > maxReprChars+32 {
		return bad("value_repr is too long")
	}
	if len(rec.Globals) > maxGlobalsOut {
		return bad("%d globals", len(rec.Globals))
	}
	for k, v := range rec.Globals {
		if k == "" || len(k) > 200 || !utf8.ValidString(k) || len(v) > 8*maxReprChars {
			return bad("global %q", clip(k, 40))
		}
	}
	if len(rec.Writes) > maxWrites || rec.Status == 0 && len(rec.Writes) < len(in.Writes) {
		return bad("%d writes", len(rec.Writes))
	}
	seen := map[string]bool{}
	for i, w := range rec.Writes {
		p, err := vfspath.File("path", w.Path)
		switch {
		case err != nil || p != w.Path:
			return bad("write path %q", clip(w.Path, 40))
		case seen[p] || hasKey(in.Reads, p):
			return bad("write path %s repeated or read", p)
		case w.Mode != "create" && w.Mode != "overwrite" && w.Mode != "append":
			return bad("write mode %q", clip(w.Mode, 20))
		case utf8.RuneCountInString(w.Content) > maxWriteChars || !utf8.ValidString(w.Content):
			return bad("write content of %s", p)
		case i < len(in.Writes) && (in.Writes[i].Path != p || in.Writes[i].Mode != w.Mode):
			return bad("writes[%d] is not the one asked for", i)
		}
		seen[p] = true
	}
	return nil
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
