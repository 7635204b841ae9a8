package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// withdrawals keeps, over HTTP, the answer to a call the client cancelled
// from reaching it, as the stdio transport does: the SDK answers a
// cancelled call (with error code 0) on the call's own response stream,
// and the spec says a cancelled request gets no response. Each call's POST
// is served through a writer that goes quiet once the same client (same
// session, same token) sends notifications/cancelled for it.
type withdrawals struct {
	mu    sync.Mutex
	calls map[withdrawKey]*quietable
}

type withdrawKey struct{ session, secret, id string }

func newWithdrawals() *withdrawals { return &withdrawals{calls: map[withdrawKey]*quietable{}} }

// quietable is a call's response writer; once quiet it drops what it is
// given.
type quietable struct {
	http.ResponseWriter
	mu    sync.Mutex
	quiet bool
}

func (q *quietable) Write(b []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.quiet {
		return len(b), nil
	}
	return q.ResponseWriter.Write(b)
}

// Flush keeps streaming (SSE) working through the wrapper.
func (q *quietable) Flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if f, ok := q.ResponseWriter.(http.Flusher); ok && !q.quiet {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (q *quietable) Unwrap() http.ResponseWriter { return q.ResponseWriter }

func (q *quietable) silence() {
	q.mu.Lock()
	q.quiet = true
	q.mu.Unlock()
}

// wrap serves h, watching each POST of a session for a call to withdraw
// or a cancellation.
func (wd *withdrawals) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(sessionIDHeader)
		if r.Method != http.MethodPost || sid == "" || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageBytes+1))
		// The SDK reads (and bounds) the body as it would have.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if err != nil || json.Unmarshal(body, &msg) != nil || msg.Method == "" {
			h.ServeHTTP(w, r)
			return
		}
		secret := bearerSecret(r)
		switch {
		case msg.Method == "notifications/cancelled" && len(msg.Params.RequestID) > 0:
			wd.withdraw(withdrawKey{sid, secret, compactID(msg.Params.RequestID)})
			h.ServeHTTP(w, r)
		case len(msg.ID) > 0 && string(msg.ID) != "null":
			key := withdrawKey{sid, secret, compactID(msg.ID)}
			q := &quietable{ResponseWriter: w}
			wd.mu.Lock()
			wd.calls[key] = q
			wd.mu.Unlock()
			defer func() {
				wd.mu.Lock()
				if wd.calls[key] == q {
					delete(wd.calls, key)
				}
				wd.mu.Unlock()
			}()
			h.ServeHTTP(q, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

func (wd *withdrawals) withdraw(key withdrawKey) {
	wd.mu.Lock()
	q := wd.calls[key]
	wd.mu.Unlock()
	if q != nil {
		q.silence()
	}
}

func compactID(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// Interface guards
var (
	_ http.ResponseWriter = (*quietable)(nil)
	_ http.Flusher        = (*quietable)(nil)
)
