package wiremirror

import (
	"reflect"
	"testing"
	"time"
)

type recorder struct{ errors []string }

func (*recorder) Helper() { /* nothing to mark outside a test */ }
func (r *recorder) Errorf(format string, _ ...any) {
	r.errors = append(r.errors, format)
}

type inner struct {
	N int `json:"n"`
}

type whole struct {
	A string    `json:"a,omitempty"`
	B []int     `json:"b"`
	C time.Time `json:"c"`
	D *inner    `json:"d"`
	E string    `json:"-"`
}

// Check must catch what it is for: a renamed tag, another kind, a field
// the whole does not have, at any depth.
func TestCheckCatchesDrift(t *testing.T) {
	for name, part := range map[string]reflect.Type{
		"renamed": reflect.TypeFor[struct {
			A string `json:"aa,omitempty"`
		}](),
		"kind": reflect.TypeFor[struct {
			B []string `json:"b"`
		}](),
		"time": reflect.TypeFor[struct {
			C int `json:"c"`
		}](),
		"nested": reflect.TypeFor[struct {
			D struct {
				N string `json:"n"`
			} `json:"d"`
		}](),
		"left out": reflect.TypeFor[struct {
			E string `json:"e"`
		}](),
	} {
		rec := &recorder{}
		Check(rec, "x", part, reflect.TypeFor[whole]())
		if len(rec.errors) != 1 {
			t.Errorf("%s: %d errors, want 1", name, len(rec.errors))
		}
	}
}

// What JSON spells alike passes, and so do part's own fields.
func TestCheckAcceptsTheSameWire(t *testing.T) {
	type embedded struct {
		A *string `json:"a"`
	}
	rec := &recorder{}
	Check(rec, "x", reflect.TypeFor[struct {
		embedded
		B    []int64 `json:"b,omitempty"`
		C    string  `json:"c"`
		D    inner   `json:"d"`
		Mine bool    `json:"mine"`
	}](), reflect.TypeFor[whole](), "mine")
	if len(rec.errors) != 0 {
		t.Errorf("an embedded pointer, another integer, omitempty, a time as text, own fields: %v", rec.errors)
	}
}
