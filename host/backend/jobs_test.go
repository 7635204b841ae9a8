package backend

import "testing"

func TestReadJobOutput(t *testing.T) {
	head, tail := []byte("0123"), []byte("6789")
	cases := []struct {
		name                 string
		head, tail           []byte
		total, since         int64
		max                  int
		text                 string
		offset, skipped, nxt int64
		more                 bool
	}{
		{"contiguous", head, []byte("45"), 6, 0, 100, "012345", 0, 0, 6, false},
		{"contiguous from 3", head, []byte("45"), 6, 3, 100, "345", 3, 0, 6, false},
		{"gap: head first", head, tail, 10, 1, 100, "123", 1, 0, 4, true},
		{"gap: skipped", head, tail, 10, 4, 100, "6789", 6, 2, 10, false},
		{"tail part", head, tail, 10, 8, 100, "89", 8, 0, 10, false},
		{"at end", head, tail, 10, 10, 100, "", 10, 0, 10, false},
		{"past end", head, tail, 10, 99, 100, "", 10, 0, 10, false},
		{"capped", head, tail, 10, 6, 2, "67", 6, 0, 8, true},
	}
	for _, c := range cases {
		o := ReadJobOutput(c.head, c.tail, c.total, c.since, c.max)
		if o.Text != c.text || o.Offset != c.offset || o.Skipped != c.skipped || o.Next != c.nxt || o.More != c.more || o.Total != c.total {
			t.Errorf("%s: got %+v", c.name, o)
		}
	}
	// A cap inside a character backs off to its start.
	o := ReadJobOutput([]byte("aé"), nil, 3, 0, 2)
	if o.Text != "a" || o.Next != 1 {
		t.Errorf("cut inside é: %+v", o)
	}
}
